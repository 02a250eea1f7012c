/* kafkawire.records._accel: the v2 record loop of kafkawire.records.v2_records, in C, the
 * records of a batch being built (EncodedRecords: what a producer appends to), and records as
 * Arrow column buffers (RecordColumns, in _arrow_columns.h).
 *
 * Optional: the build compiles it when it can (see hatch_build.py at the repository root),
 * and kafkawire.records.v2_records falls back to its pure-Python loop when it is missing or
 * when KAFKAWIRE_NO_EXTENSIONS is set.
 *
 * read_records() must give exactly what the pure loop gives, errors included: the same
 * records (Record and Header instances, keys and values as bytes, absolute offsets and
 * timestamps as Python ints of any size), and where the pure loop fails, a
 * CorruptRecordError with the same reason. The pure loop reports reading past the end as
 * IndexError (which its caller words as "a record runs past the end of the batch") and a bad
 * header key as UnicodeDecodeError ("a header key is not UTF-8"); here those reasons are
 * raised directly. Every error carries the batch's base offset.
 *
 * Records and headers are built as the pure loop builds its slot twins, without __init__:
 * allocated for the class (outside the cyclic GC, see untrack()) and their slots written at
 * the offsets of the classes' member descriptors, which setup() looks up and checks once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>

#include "../_columns.h"
#include "../_slots.h"

enum { R_OFFSET, R_TIMESTAMP, R_KEY, R_VALUE, R_HEADERS, R_FIELDS };
enum { H_KEY, H_VALUE, H_FIELDS };

static const char *const record_fields[R_FIELDS] = {"offset", "timestamp", "key", "value",
                                                    "headers"};
static const char *const header_fields[H_FIELDS] = {"key", "value"};

static PyTypeObject *record_type = NULL;
static PyTypeObject *header_type = NULL;
static PyObject *corrupt_error = NULL;
static PyObject *invalid_error = NULL; /* InvalidRecordError, raised while encoding */
static Py_ssize_t record_offsets[R_FIELDS];
static Py_ssize_t header_offsets[H_FIELDS];

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* A byte position in the records section. Lengths read from the wire (up to 2**31 - 1) take
 * positions up to about ``end + 2**31`` before a read fails, and record ends that far too: past
 * a 32-bit Py_ssize_t, so positions are 64-bit everywhere (as the pure loop's are unbounded). */
typedef long long pos_t;
#define POS "%lld"

/* ------------------------------------------------------------------------------------------
 * Errors
 */

/* Raise CorruptRecordError(reason, base_offset); steals ``reason`` (which may be NULL). */
static void
raise_corrupt(PyObject *base_offset, PyObject *reason)
{
    if (reason == NULL) {
        return;
    }
    PyObject *exc = PyObject_CallFunctionObjArgs(corrupt_error, reason, base_offset, NULL);
    Py_DECREF(reason);
    if (exc != NULL) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
    }
}

#define CORRUPT(...) raise_corrupt(base_offset, PyUnicode_FromFormat(__VA_ARGS__))
#define PAST_END() CORRUPT("a record runs past the end of the batch")

/* ------------------------------------------------------------------------------------------
 * Varints, as kafkawire.records.varint.read_raw and the loop's inline snippet read them
 */

static inline int64_t
zigzag(uint64_t raw)
{
    return (int64_t)((raw >> 1) ^ (0 - (raw & 1)));
}

/* read_raw(): the unsigned varint of at most ``bits`` bits at ``at``; 0, or -1 with an error. */
static int
read_raw(const unsigned char *buf, pos_t end, pos_t at, int bits, uint64_t *raw_out,
         pos_t *pos_out, PyObject *base_offset)
{
    uint64_t raw = 0;
    int shift = 0;
    int overflow = 0;
    int length = (bits + 6) / 7;
    for (int i = 0; i < length; i++) {
        if (at + i >= end) {
            CORRUPT("varint at byte " POS " runs past the end", at);
            return -1;
        }
        unsigned int byte = buf[at + i];
        uint64_t group = byte & 0x7F;
        if (shift == 63 && group > 1) {
            overflow = 1; /* bits past the 64th */
        }
        raw |= group << shift;
        if (byte < 0x80) {
            if (overflow || (bits < 64 && (raw >> bits))) {
                CORRUPT("varint at byte " POS " overflows %d bits", at, bits);
                return -1;
            }
            *raw_out = raw;
            *pos_out = at + i + 1;
            return 0;
        }
        shift += 7;
    }
    CORRUPT("varint at byte " POS " is longer than %d bits allow", at, bits);
    return -1;
}

/* The loop's inline varint: one to three bytes here, longer ones through read_raw(). Reading
 * past the end in the inline part is the pure loop's IndexError. */
static inline int
read_inline(const unsigned char *buf, pos_t end, pos_t at, int bits, uint64_t *raw_out,
            pos_t *pos_out, PyObject *base_offset)
{
    if (at >= end) {
        goto past_end;
    }
    uint64_t first = buf[at];
    if (first < 0x80) {
        *raw_out = first;
        *pos_out = at + 1;
        return 0;
    }
    if (at + 1 >= end) {
        goto past_end;
    }
    uint64_t more = buf[at + 1];
    if (more < 0x80) {
        *raw_out = first + (more << 7) - 0x80;
        *pos_out = at + 2;
        return 0;
    }
    if (at + 2 >= end) {
        goto past_end;
    }
    uint64_t last = buf[at + 2];
    if (last < 0x80) {
        *raw_out = first - 0x80 + ((more - 0x80) << 7) + (last << 14);
        *pos_out = at + 3;
        return 0;
    }
    return read_raw(buf, end, at, bits, raw_out, pos_out, base_offset);
past_end:
    PAST_END();
    return -1;
}

/* ------------------------------------------------------------------------------------------
 * Values
 */

/* A new instance of ``type`` (Record or Header), not yet GC-tracked and with no slot set:
 * setup() checked that the slots are all of its fields, and the caller sets every one. */
static inline PyObject *
new_instance(PyTypeObject *type)
{
    return _PyObject_GC_New(type);
}

/* Records, headers and the headers tuples hold only ints, bytes, str, None and headers, so
 * they can never be part of a reference cycle: like CPython with such tuples, they stay out of
 * the cyclic GC (records and headers are never tracked, see new_instance()), which would
 * otherwise walk every record of every batch that is alive (the pure loop's 10,000-record
 * batches spend about half their time in the collector). */
static inline void
untrack(PyObject *obj)
{
    if (PyObject_GC_IsTracked(obj)) {
        PyObject_GC_UnTrack(obj);
    }
}

/* ``base + delta`` as a Python int: int64 arithmetic when it cannot overflow, else Python's. */
static PyObject *
add_delta(PyObject *base_obj, int base_fits, int64_t base, int64_t delta)
{
    /* The overflow test spelled out, not __builtin_add_overflow(): MSVC has no such builtin. */
    if (base_fits && (delta >= 0 ? base <= INT64_MAX - delta : base >= INT64_MIN - delta)) {
        return PyLong_FromLongLong(base + delta);
    }
    PyObject *delta_obj = PyLong_FromLongLong(delta);
    if (delta_obj == NULL) {
        return NULL;
    }
    PyObject *result = PyNumber_Add(base_obj, delta_obj);
    Py_DECREF(delta_obj);
    return result;
}

/* ``buf[start:start + length]`` with Python's slice clamping at ``end``. */
static PyObject *
clamped_slice(const unsigned char *buf, pos_t end, pos_t start, pos_t length)
{
    pos_t stop = start + length;
    if (start > end) {
        start = end;
    }
    if (stop > end) {
        stop = end;
    }
    if (stop < start) {
        stop = start;
    }
    return PyBytes_FromStringAndSize((const char *)buf + start, (Py_ssize_t)(stop - start));
}

/* _read_headers(): the headers at ``*pos`` (whose count varint is not 0); NULL on error. */
static PyObject *
read_headers(const unsigned char *buf, pos_t end, pos_t *pos_io, pos_t record_end,
             PyObject *base_offset)
{
    pos_t pos = *pos_io;
    uint64_t raw;
    if (read_raw(buf, end, pos, 32, &raw, &pos, base_offset) < 0) {
        return NULL;
    }
    int64_t count = zigzag(raw);
    /* Each header takes at least two bytes (key length, value length). */
    if (count < 0 || 2 * count > record_end - pos) {
        CORRUPT("header count %lld before byte " POS, (long long)count, pos);
        return NULL;
    }
    /* The count is checked against the record's length, which is only a claim: a few bytes
     * may claim 2**30 headers, which the pure loop fails on one at a time. Each header that
     * can be read whole has its two length varints inside the buffer, so no more than
     * (end - pos) / 2 of them fit, and the tuple is no bigger. */
    Py_ssize_t capacity = (Py_ssize_t)(count < (end - pos) / 2 ? count : (end - pos) / 2);
    PyObject *headers = PyTuple_New(capacity);
    if (headers == NULL) {
        return NULL;
    }
    /* Out of the GC from the start (see untrack()), not only once it is full: a collection
     * while it fills would otherwise show it, NULL items and all, to gc.get_objects() and
     * gc.get_referrers() (and so to any Python code, a gc callback for one). */
    untrack(headers);
    for (Py_ssize_t i = 0; i < (Py_ssize_t)count; i++) {
        if (read_raw(buf, end, pos, 32, &raw, &pos, base_offset) < 0) {
            goto error;
        }
        int64_t length = zigzag(raw);
        if (length < 0) {
            CORRUPT("header key length %lld before byte " POS, (long long)length, pos);
            goto error;
        }
        pos_t start = pos < end ? pos : end;
        pos_t stop = pos + length < end ? pos + length : end;
        PyObject *key = PyUnicode_DecodeUTF8((const char *)buf + start,
                                             (Py_ssize_t)(stop > start ? stop - start : 0), NULL);
        if (key == NULL) {
            if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                PyErr_Clear();
                CORRUPT("a header key is not UTF-8");
            }
            goto error;
        }
        pos += length;
        if (read_raw(buf, end, pos, 32, &raw, &pos, base_offset) < 0) {
            Py_DECREF(key);
            goto error;
        }
        length = zigzag(raw);
        if (length < -1) {
            Py_DECREF(key);
            CORRUPT("header value length %lld before byte " POS, (long long)length, pos);
            goto error;
        }
        PyObject *value;
        if (length == -1) {
            value = Py_NewRef(Py_None);
        }
        else {
            value = clamped_slice(buf, end, pos, length);
            if (value == NULL) {
                Py_DECREF(key);
                goto error;
            }
            pos += length;
        }
        if (i >= capacity) { /* cannot happen: see capacity */
            Py_DECREF(key);
            Py_DECREF(value);
            PyErr_SetString(PyExc_SystemError, "kafkawire.records._accel: header count");
            goto error;
        }
        PyObject *header = new_instance(header_type);
        if (header == NULL) {
            Py_DECREF(key);
            Py_DECREF(value);
            goto error;
        }
        SLOT(header, header_offsets[H_KEY]) = key;
        SLOT(header, header_offsets[H_VALUE]) = value;
        PyTuple_SET_ITEM(headers, i, header);
    }
    *pos_io = pos;
    return headers;
error:
    Py_DECREF(headers);
    return NULL;
}

/* A key's or value's length at ``*pos_io`` (-1 for null, an error below it), its bytes
 * checked to be inside the section (the pure loop's next read would otherwise raise
 * IndexError); the position moves past them. */
static int
nullable_length(const unsigned char *buf, pos_t end, pos_t *pos_io, const char *name,
                pos_t *length_out, PyObject *base_offset)
{
    uint64_t raw;
    pos_t pos;
    if (read_inline(buf, end, *pos_io, 32, &raw, &pos, base_offset) < 0) {
        return -1;
    }
    if (raw == 1) {
        *length_out = -1;
    }
    else if (raw & 1) {
        CORRUPT("%s length %lld before byte " POS, name, (long long)zigzag(raw), pos);
        return -1;
    }
    else {
        *length_out = (pos_t)(raw >> 1);
        if (*length_out > end - pos) {
            PAST_END();
            return -1;
        }
        pos += *length_out;
    }
    *pos_io = pos;
    return 0;
}

/* key or value: None for length -1, else the bytes (see nullable_length()). */
static int
read_nullable(const unsigned char *buf, pos_t end, pos_t *pos_io, const char *name,
              PyObject **out, PyObject *base_offset)
{
    pos_t length;
    if (nullable_length(buf, end, pos_io, name, &length, base_offset) < 0) {
        return -1;
    }
    if (length < 0) {
        *out = Py_NewRef(Py_None);
        return 0;
    }
    *out = PyBytes_FromStringAndSize((const char *)buf + *pos_io - length, (Py_ssize_t)length);
    return *out == NULL ? -1 : 0;
}

/* ------------------------------------------------------------------------------------------
 * The record loop
 */

static int
as_int64(PyObject *obj, const char *name, int64_t *out, int *fits)
{
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", name,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow;
    long long value = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (value == -1 && PyErr_Occurred()) {
        return -1;
    }
    *fits = overflow == 0;
    *out = overflow ? 0 : (int64_t)value;
    return 0;
}

/* Where the record loop puts what it reads: Record instances into a tuple (``list`` NULL),
 * or instances of a caller's class appended to ``list``, their five record fields and the
 * ``extras`` constant fields set, offsets below ``start`` (and repeated ones) skipped. */
typedef struct {
    PyTypeObject *type;
    const Py_ssize_t *fields; /* R_FIELDS slot offsets */
    Py_ssize_t extras;
    const Py_ssize_t *extra_slots;
    PyObject *const *extra_values;
    PyObject *list;
    int64_t start;
} Target;

/* The arguments both read_records() and read_records_into() take. */
typedef struct {
    Py_buffer view;
    PyObject *base_offset, *base_timestamp, *log_append_time, *count;
} Section;

/* The record loop (see the module doc): 0, or -1 with an error. In tuple mode *records_out
 * gets the new tuple. */
static int
read_section(Section *section, Target *target, PyObject **records_out)
{
    PyObject *base_offset = section->base_offset, *base_timestamp = section->base_timestamp;
    PyObject *log_append_time = section->log_append_time, *count_obj = section->count;
    PyObject *records = NULL;
    /* Any int, as range() takes it, clipped to Py_ssize_t: no count past end / 7 can be met,
     * and a negative one reads nothing, so the clipping changes no outcome. */
    Py_ssize_t count = PyNumber_AsSsize_t(count_obj, NULL);
    if (count == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (record_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "kafkawire.records._accel.setup() was not called");
        return -1;
    }
    int64_t offset_base, timestamp_base = 0;
    int offset_fits, timestamp_fits = 0;
    int log_append = log_append_time != Py_None;
    if (as_int64(base_offset, "base_offset", &offset_base, &offset_fits) < 0) {
        return -1;
    }
    if (log_append) {
        if (!PyLong_Check(log_append_time)) {
            PyErr_Format(PyExc_TypeError, "log_append_time must be an int or None, not %.100s",
                         Py_TYPE(log_append_time)->tp_name);
            return -1;
        }
    }
    else if (as_int64(base_timestamp, "base_timestamp", &timestamp_base, &timestamp_fits) < 0) {
        return -1;
    }

    const unsigned char *buf = section->view.buf;
    pos_t end = section->view.len;
    pos_t pos = 0;
    /* A record takes at least 7 bytes, so no more than end / 7 of them can be complete. */
    Py_ssize_t capacity = count < end / 7 ? count : (Py_ssize_t)(end / 7);
    int retrack = 0, overflowed = 0;
    if (target->list == NULL) {
        records = PyTuple_New(capacity > 0 ? capacity : 0);
        if (records == NULL) {
            return -1;
        }
        /* Out of the GC while it fills, or every young collection walks all of it again
         * (the empty tuple is a shared singleton, which is left alone). */
        retrack = capacity > 0 && PyObject_GC_IsTracked(records);
        if (retrack) {
            PyObject_GC_UnTrack(records);
        }
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t raw;
        if (read_inline(buf, end, pos, 32, &raw, &pos, base_offset) < 0) {
            goto error;
        }
        if (raw & 1) {
            CORRUPT("record length %lld before byte " POS, (long long)zigzag(raw), pos);
            goto error;
        }
        pos_t record_end = pos + (pos_t)(raw >> 1);
        /* The timestamp delta, past the (unused) attributes byte. */
        if (read_inline(buf, end, pos + 1, 64, &raw, &pos, base_offset) < 0) {
            goto error;
        }
        int64_t timestamp_delta = zigzag(raw);
        if (read_inline(buf, end, pos, 32, &raw, &pos, base_offset) < 0) {
            goto error;
        }
        int64_t offset_delta = zigzag(raw);
        PyObject *key, *value, *headers;
        if (read_nullable(buf, end, &pos, "key", &key, base_offset) < 0) {
            goto error;
        }
        if (read_nullable(buf, end, &pos, "value", &value, base_offset) < 0) {
            Py_DECREF(key);
            goto error;
        }
        if (pos >= end) {
            PAST_END();
            goto error_kv;
        }
        if (buf[pos]) {
            headers = read_headers(buf, end, &pos, record_end, base_offset);
            if (headers == NULL) {
                goto error_kv;
            }
        }
        else {
            headers = PyTuple_New(0); /* the empty tuple, never tracked */
            if (headers == NULL) {
                goto error_kv;
            }
            pos += 1;
        }
        if (pos != record_end) {
            CORRUPT("record ending at byte " POS " used " POS, record_end, pos);
            goto error_kvh;
        }
        if (target->list != NULL) {
            /* Offsets are compared as int64: one past it cannot be a position. Such a record
             * fails the batch once the rest is read (as the pure twin, which reads them all
             * first); the records before it stay appended. */
            int64_t offset;
            if (overflowed || !offset_fits ||
                (offset_delta >= 0 ? offset_base > INT64_MAX - offset_delta
                                   : offset_base < INT64_MIN - offset_delta)) {
                overflowed = 1;
                Py_DECREF(headers);
                Py_DECREF(key);
                Py_DECREF(value);
                continue;
            }
            offset = offset_base + offset_delta;
            if (offset < target->start) { /* before the position, or an offset repeated */
                Py_DECREF(headers);
                Py_DECREF(key);
                Py_DECREF(value);
                continue;
            }
            target->start = offset == INT64_MAX ? INT64_MAX : offset + 1;
        }
        else if (i >= capacity) { /* cannot happen: see capacity */
            PyErr_SetString(PyExc_SystemError, "kafkawire.records._accel: record count");
            goto error_kvh;
        }
        PyObject *offset = add_delta(base_offset, offset_fits, offset_base, offset_delta);
        if (offset == NULL) {
            goto error_kvh;
        }
        PyObject *timestamp =
            log_append ? Py_NewRef(log_append_time)
                       : add_delta(base_timestamp, timestamp_fits, timestamp_base,
                                   timestamp_delta);
        if (timestamp == NULL) {
            Py_DECREF(offset);
            goto error_kvh;
        }
        PyObject *record = new_instance(target->type);
        if (record == NULL) {
            Py_DECREF(offset);
            Py_DECREF(timestamp);
            goto error_kvh;
        }
        SLOT(record, target->fields[R_OFFSET]) = offset;
        SLOT(record, target->fields[R_TIMESTAMP]) = timestamp;
        SLOT(record, target->fields[R_KEY]) = key;
        SLOT(record, target->fields[R_VALUE]) = value;
        SLOT(record, target->fields[R_HEADERS]) = headers;
        for (Py_ssize_t j = 0; j < target->extras; j++) {
            SLOT(record, target->extra_slots[j]) = Py_NewRef(target->extra_values[j]);
        }
        if (target->list == NULL) {
            PyTuple_SET_ITEM(records, i, record);
        }
        else {
            int appended = PyList_Append(target->list, record);
            Py_DECREF(record);
            if (appended < 0) {
                goto error;
            }
        }
        continue;
    error_kvh:
        Py_DECREF(headers);
    error_kv:
        Py_DECREF(key);
        Py_DECREF(value);
        goto error;
    }
    if (pos != end) {
        CORRUPT("%S records end at byte " POS " of " POS, count_obj, pos, end);
        goto error;
    }
    if (overflowed) {
        CORRUPT("a record offset does not fit in int64");
        goto error;
    }
    if (retrack) {
        PyObject_GC_Track(records);
    }
    *records_out = records;
    return 0;
error:
    Py_XDECREF(records);
    return -1;
}

static PyObject *
read_records(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"buf", "base_offset", "base_timestamp", "log_append_time", "count",
                             NULL};
    Section section;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*$OOOO:read_records", kwlist,
                                     &section.view, &section.base_offset,
                                     &section.base_timestamp, &section.log_append_time,
                                     &section.count)) {
        return NULL;
    }
    Target target = {record_type, record_offsets, 0, NULL, NULL, NULL, 0};
    PyObject *records = NULL;
    read_section(&section, &target, &records);
    PyBuffer_Release(&section.view);
    return records;
}

/* The layout read_records_into() last checked: its class and field names (held), and the
 * slot offsets of the record's fields and of the extra ones. */
#define MAX_EXTRAS 8
static PyObject *into_class = NULL, *into_names = NULL;
static Py_ssize_t into_fields[R_FIELDS], into_extras[MAX_EXTRAS];

static int exact_slot_offsets(PyTypeObject *type, const char *const *names, int n,
                              Py_ssize_t *offsets);

/* Check ``cls``'s layout: its slots are the record's five fields and ``names`` (a tuple of
 * str), object slots all. Kept for the next call with the same class and names. */
static int
into_layout(PyObject *cls, PyObject *names)
{
    if (cls == into_class && names == into_names) {
        return 0;
    }
    if (!PyType_Check(cls) || !PyTuple_Check(names) ||
        PyTuple_GET_SIZE(names) > MAX_EXTRAS) {
        PyErr_SetString(PyExc_TypeError, "read_records_into() needs a class and a tuple of "
                                         "at most 8 field names");
        return -1;
    }
    Py_ssize_t extras = PyTuple_GET_SIZE(names);
    const char *all[R_FIELDS + MAX_EXTRAS];
    for (int i = 0; i < R_FIELDS; i++) {
        all[i] = record_fields[i];
    }
    for (Py_ssize_t j = 0; j < extras; j++) {
        PyObject *name = PyTuple_GET_ITEM(names, j);
        all[R_FIELDS + j] = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
        if (all[R_FIELDS + j] == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_TypeError, "field names must be str");
            }
            return -1;
        }
    }
    Py_ssize_t offsets[R_FIELDS + MAX_EXTRAS];
    if (exact_slot_offsets((PyTypeObject *)cls, all, (int)(R_FIELDS + extras), offsets) < 0) {
        return -1;
    }
    memcpy(into_fields, offsets, sizeof(into_fields));
    memcpy(into_extras, offsets + R_FIELDS, sizeof(Py_ssize_t) * extras);
    Py_XSETREF(into_class, Py_NewRef(cls));
    Py_XSETREF(into_names, Py_NewRef(names));
    return 0;
}

static PyObject *
read_records_into(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"buf",  "base_offset", "base_timestamp", "log_append_time",
                             "count", "out",        "cls",           "names",
                             "values", "start",     NULL};
    Section section;
    PyObject *out, *cls, *names, *values;
    long long start;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*$OOOOO!OOOL:read_records_into", kwlist,
                                     &section.view, &section.base_offset,
                                     &section.base_timestamp, &section.log_append_time,
                                     &section.count, &PyList_Type, &out, &cls, &names, &values,
                                     &start)) {
        return NULL;
    }
    PyObject *result = NULL;
    if (into_layout(cls, names) < 0) {
        goto done;
    }
    if (!PyTuple_Check(values) || PyTuple_GET_SIZE(values) != PyTuple_GET_SIZE(names)) {
        PyErr_SetString(PyExc_TypeError, "values must be a tuple, one per name");
        goto done;
    }
    Target target = {(PyTypeObject *)cls, into_fields, PyTuple_GET_SIZE(values), into_extras,
                     &PyTuple_GET_ITEM(values, 0), out, start};
    PyObject *none = NULL;
    if (read_section(&section, &target, &none) == 0) {
        result = PyLong_FromLongLong(target.start);
    }
done:
    PyBuffer_Release(&section.view);
    return result;
}

/* ------------------------------------------------------------------------------------------
 * Set-up: the classes, and the offsets of their slots
 */

/* slot_offsets() of a class whose instances are nothing but those n slots (as
 * new_instance() needs). */
static int
exact_slot_offsets(PyTypeObject *type, const char *const *names, int n, Py_ssize_t *offsets)
{
    PyObject *slots = PyObject_GetAttrString((PyObject *)type, "__slots__");
    Py_ssize_t n_slots = slots == NULL ? -1 : PyObject_Length(slots);
    Py_XDECREF(slots);
    if (n_slots < 0) {
        PyErr_Clear();
    }
    /* Nothing but the n slots after the object header (no __dict__, no __weakref__), and a
     * GC type, as new_instance() needs. */
    if (n_slots != n || type->tp_base != &PyBaseObject_Type || type->tp_itemsize != 0 ||
        type->tp_dictoffset != 0 || type->tp_weaklistoffset != 0 ||
        type->tp_basicsize != (Py_ssize_t)(sizeof(PyObject) + n * sizeof(PyObject *)) ||
        !PyType_HasFeature(type, Py_TPFLAGS_HAVE_GC)) {
        PyErr_Format(PyExc_TypeError, "%.100s does not have the slot layout _accel expects",
                     type->tp_name);
        return -1;
    }
    return slot_offsets(type, names, n, offsets);
}

static PyObject *
setup(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyTypeObject *record, *header;
    PyObject *error, *invalid;
    if (!PyArg_ParseTuple(args, "O!O!OO:setup", &PyType_Type, &record, &PyType_Type, &header,
                          &error, &invalid)) {
        return NULL;
    }
    if (!PyExceptionClass_Check(error) || !PyExceptionClass_Check(invalid)) {
        PyErr_SetString(PyExc_TypeError, "setup() needs two exception classes");
        return NULL;
    }
    Py_ssize_t r[R_FIELDS], h[H_FIELDS];
    if (exact_slot_offsets(record, record_fields, R_FIELDS, r) < 0 ||
        exact_slot_offsets(header, header_fields, H_FIELDS, h) < 0) {
        return NULL;
    }
    /* Everything replaced before the old classes are released: releasing one may run Python
     * code (a finalizer), which may call read_records() and must see one consistent set. */
    PyObject *old_record = (PyObject *)record_type;
    PyObject *old_header = (PyObject *)header_type;
    PyObject *old_error = corrupt_error;
    PyObject *old_invalid = invalid_error;
    memcpy(record_offsets, r, sizeof(r));
    memcpy(header_offsets, h, sizeof(h));
    record_type = (PyTypeObject *)Py_NewRef(record);
    header_type = (PyTypeObject *)Py_NewRef(header);
    corrupt_error = Py_NewRef(error);
    invalid_error = Py_NewRef(invalid);
    Py_XDECREF(old_record);
    Py_XDECREF(old_header);
    Py_XDECREF(old_error);
    Py_XDECREF(old_invalid);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------------------
 * EncodedRecords: the records of a v2 batch being built, encoded as they are appended
 *
 * The compiled twin of v2_records.EncodedRecordsPure (see there for the rules): append()
 * writes exactly the bytes the pure class writes and raises the same errors, with the same
 * messages, before anything changes. RecordBatchBuilder derives from it, so a producer's
 * append is one C call with no Python frame in between.
 */

typedef struct {
    PyObject_HEAD
    unsigned char *data; /* PyMem buffer, NULL until the first append */
    Py_ssize_t size;
    Py_ssize_t capacity;
    Py_ssize_t count;
    long long base_timestamp;
    long long max_timestamp;
} EncodedRecords;

#define NO_TIMESTAMP (-1LL)
/* Up to this many headers are described on the stack; more take a heap array. */
#define STACK_HEADERS 8

static PyObject *kw_key, *kw_value, *kw_timestamp, *kw_headers; /* interned keyword names */

/* Write ``value`` as an unsigned LEB128 varint at ``out``; return the bytes written. */
static inline int
put_uvarint(unsigned char *out, uint64_t value)
{
    int n = 0;
    while (value >= 0x80) {
        out[n++] = (unsigned char)(value | 0x80);
        value >>= 7;
    }
    out[n++] = (unsigned char)value;
    return n;
}

static inline uint64_t
zigzag_encode(long long value)
{
    return ((uint64_t)value << 1) ^ (uint64_t)(value >> 63);
}

static inline int
varint_size(long long value)
{
    uint64_t raw = zigzag_encode(value);
    int n = 1;
    while (raw >= 0x80) {
        raw >>= 7;
        n++;
    }
    return n;
}

/* A nullable byte string to write: none (``present`` 0) or ``len`` bytes at ``buf``, which
 * are a buffer view of an object held here (``held``) or a column's. */
typedef struct {
    int present;
    int held;
    const char *buf;
    Py_ssize_t len;
    Py_buffer view;
} Nullable;

/* Fill ``out`` from ``obj`` (bytes-like or None); ``what`` names it in the TypeError. */
static int
nullable_view(PyObject *obj, Nullable *out, const char *what)
{
    out->present = out->held = 0;
    if (obj == Py_None) {
        return 0;
    }
    if (!PyObject_CheckBuffer(obj) || PyObject_GetBuffer(obj, &out->view, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "a record %s must be bytes-like or None, not %.100s",
                     what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    out->present = out->held = 1;
    out->buf = out->view.buf;
    out->len = out->view.len;
    return 0;
}

static inline void
nullable_release(Nullable *nullable)
{
    if (nullable->held) {
        PyBuffer_Release(&nullable->view);
    }
    nullable->present = nullable->held = 0;
}

/* The bytes a nullable field takes: its zigzag length (-1 for null) and its data. */
static inline Py_ssize_t
nullable_size(const Nullable *nullable)
{
    if (!nullable->present) {
        return 1;
    }
    return varint_size(nullable->len) + nullable->len;
}

static inline unsigned char *
put_nullable(unsigned char *at, const Nullable *nullable)
{
    if (!nullable->present) {
        *at++ = 1; /* zigzag -1 */
        return at;
    }
    at += put_uvarint(at, zigzag_encode(nullable->len));
    memcpy(at, nullable->buf, nullable->len);
    return at + nullable->len;
}

typedef struct {
    PyObject *key_object; /* a strong reference: the UTF-8 below is the str's own */
    const char *key;
    Py_ssize_t key_size;
    Nullable value;
} HeaderParts;

/* Describe ``headers[i]`` (a Header, or a (str, bytes-like or None) pair) in ``out``. */
static int
header_parts(PyObject *header, Py_ssize_t index, HeaderParts *out)
{
    PyObject *key, *value;
    if (PyTuple_Check(header) && PyTuple_GET_SIZE(header) == 2) {
        key = PyTuple_GET_ITEM(header, 0);
        value = PyTuple_GET_ITEM(header, 1);
    }
    else if (header_type != NULL && PyObject_TypeCheck(header, header_type)) {
        key = SLOT(header, header_offsets[H_KEY]);
        value = SLOT(header, header_offsets[H_VALUE]);
        if (key == NULL || value == NULL) { /* made without __init__ */
            PyErr_Format(PyExc_TypeError, "headers[%zd] is a Header without a key or value",
                         index);
            return -1;
        }
    }
    else {
        PyErr_Format(PyExc_TypeError,
                     "headers[%zd] must be a Header or a (str, bytes or None) pair, not %.100s",
                     index, Py_TYPE(header)->tp_name);
        return -1;
    }
    if (!PyUnicode_Check(key)) {
        PyErr_Format(PyExc_TypeError, "headers[%zd]'s key must be str, not %.100s", index,
                     Py_TYPE(key)->tp_name);
        return -1;
    }
    /* Held, not borrowed: taking the value's buffer may run Python code (a __buffer__
     * method), which could rebind a Header's slots and free a borrowed key. */
    out->key_object = Py_NewRef(key);
    out->key = PyUnicode_AsUTF8AndSize(key, &out->key_size);
    if (out->key == NULL || nullable_view(value, &out->value, "header value") < 0) {
        Py_CLEAR(out->key_object);
        return -1;
    }
    return 0;
}

static void
invalid(const char *format, PyObject *value)
{
    PyObject *message = PyUnicode_FromFormat(format, value);
    if (message != NULL) {
        PyErr_SetObject(invalid_error, message);
        Py_DECREF(message);
    }
}

static int
ensure_room(EncodedRecords *self, Py_ssize_t extra)
{
    if (self->capacity - self->size >= extra) {
        return 0;
    }
    Py_ssize_t capacity = self->capacity ? self->capacity : 4096;
    while (capacity - self->size < extra) {
        if (capacity > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        capacity *= 2;
    }
    unsigned char *data = PyMem_Realloc(self->data, capacity);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    self->data = data;
    self->capacity = capacity;
    return 0;
}

/* The arguments of append(key, value, *, timestamp, headers=()), from a vectorcall. */
static int
append_arguments(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **out)
{
    static const char *const names[] = {"key", "value", "timestamp", "headers"};
    PyObject *const interned[] = {kw_key, kw_value, kw_timestamp, kw_headers};
    if (nargs > 2) {
        PyErr_Format(PyExc_TypeError, "append() takes 2 positional arguments but %zd were given",
                     nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        out[i] = args[i];
    }
    Py_ssize_t keywords = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < keywords; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        int found = -1;
        /* Callers pass interned names: compare identities first, then text. */
        for (int j = 0; j < 4 && found < 0; j++) {
            if (name == interned[j]) {
                found = j;
            }
        }
        for (int j = 0; j < 4 && found < 0; j++) {
            if (PyUnicode_Compare(name, interned[j]) == 0) {
                found = j;
            }
        }
        if (found < 0) {
            PyErr_Format(PyExc_TypeError, "append() got an unexpected keyword argument '%U'",
                         name);
            return -1;
        }
        if (out[found] != NULL) {
            PyErr_Format(PyExc_TypeError, "append() got multiple values for argument '%s'",
                         names[found]);
            return -1;
        }
        out[found] = args[nargs + i];
    }
    for (int j = 0; j < 3; j++) {
        if (out[j] == NULL) {
            PyErr_Format(PyExc_TypeError, "append() missing required argument: '%s'", names[j]);
            return -1;
        }
    }
    return 0;
}

/* What a record counts for in ``room`` (see append_record): a size its caller estimates. */
typedef struct {
    Py_ssize_t base;           /* for the record without headers */
    Py_ssize_t header_overhead; /* each header adds this and its key's and value's lengths */
    Py_ssize_t room;           /* appended only if it counts for no more; -1: no bound */
} Measure;

static const Measure UNMEASURED = {0, 0, -1};

/* The batch's base timestamp with this record, and the record's delta from it; -1 with an
 * InvalidRecordError when the delta does not fit in a varlong. */
static int
timestamp_delta_of(const EncodedRecords *self, long long timestamp, long long *base,
                   long long *delta)
{
    *base = self->count ? self->base_timestamp : timestamp;
    if (!__builtin_sub_overflow(timestamp, *base, delta)) {
        return 0;
    }
    PyObject *stamp = PyLong_FromLongLong(timestamp);
    PyObject *base_obj = stamp == NULL ? NULL : PyLong_FromLongLong(*base);
    PyObject *difference = base_obj == NULL ? NULL : PyNumber_Subtract(stamp, base_obj);
    if (difference != NULL) {
        invalid("%S does not fit in a varlong", difference);
    }
    Py_XDECREF(difference);
    Py_XDECREF(base_obj);
    Py_XDECREF(stamp);
    return -1;
}

/* Append the record (``key``, ``value``, ``timestamp``, ``headers_arg``: a sequence of headers,
 * or NULL for none) if its measure fits ``measure->room``: 1 (appended, with its offset delta
 * in *delta and its measure in *counted), 0 (it does not fit: nothing changed, its measure in
 * *counted), or -1 with an error, nothing changed. */
static int
append_record(EncodedRecords *self, const Nullable *key, const Nullable *value,
              long long timestamp, PyObject *headers_arg, const Measure *measure,
              long long *delta, Py_ssize_t *counted)
{
    long long base, timestamp_delta;
    if (timestamp_delta_of(self, timestamp, &base, &timestamp_delta) < 0) {
        return -1;
    }

    int result = -1;
    PyObject *headers = NULL; /* a tuple, or NULL for none */
    HeaderParts stack_parts[STACK_HEADERS];
    HeaderParts *parts = stack_parts;
    Py_ssize_t header_count = 0, described = 0;
    Py_ssize_t headers_size = 1; /* the header count, 0 */
    Py_ssize_t weight = measure->base;
    int has_headers = headers_arg == NULL ? 0 : PyObject_IsTrue(headers_arg);
    if (has_headers < 0) {
        goto done;
    }
    if (has_headers) {
        /* A tuple of its own (not PySequence_Fast, which keeps a list as it is): Python code
         * run below (a __buffer__ method) cannot resize it under the loop. */
        headers = PySequence_Tuple(headers_arg);
        if (headers == NULL) {
            if (PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_SetString(PyExc_TypeError, "headers must be a sequence");
            }
            goto done;
        }
        header_count = PyTuple_GET_SIZE(headers);
        if (header_count > STACK_HEADERS) {
            parts = PyMem_Malloc(sizeof(HeaderParts) * header_count);
            if (parts == NULL) {
                PyErr_NoMemory();
                goto done;
            }
        }
        headers_size = varint_size(header_count);
        for (; described < header_count; described++) {
            HeaderParts *part = &parts[described];
            if (header_parts(PyTuple_GET_ITEM(headers, described), described, part) < 0) {
                goto done;
            }
            headers_size += varint_size(part->key_size) + part->key_size;
            headers_size += nullable_size(&part->value);
            weight += measure->header_overhead + part->key_size +
                      (part->value.present ? part->value.len : 0);
        }
    }
    *counted = weight;
    if (measure->room >= 0 && weight > measure->room) {
        result = 0;
        goto done;
    }

    long long offset_delta = self->count;
    Py_ssize_t body = 1 + varint_size(timestamp_delta) + varint_size(offset_delta) +
                      nullable_size(key) + nullable_size(value) + headers_size;
    if (ensure_room(self, varint_size(body) + body) < 0) {
        goto done;
    }
    unsigned char *at = self->data + self->size;
    at += put_uvarint(at, zigzag_encode(body));
    *at++ = 0; /* attributes */
    at += put_uvarint(at, zigzag_encode(timestamp_delta));
    at += put_uvarint(at, zigzag_encode(offset_delta));
    at = put_nullable(at, key);
    at = put_nullable(at, value);
    at += put_uvarint(at, zigzag_encode(header_count));
    for (Py_ssize_t i = 0; i < header_count; i++) {
        at += put_uvarint(at, zigzag_encode(parts[i].key_size));
        memcpy(at, parts[i].key, parts[i].key_size);
        at += parts[i].key_size;
        at = put_nullable(at, &parts[i].value);
    }
    self->size = at - self->data;
    self->count = offset_delta + 1;
    self->base_timestamp = base;
    if (timestamp > self->max_timestamp) {
        self->max_timestamp = timestamp;
    }
    *delta = offset_delta;
    result = 1;

done:
    for (Py_ssize_t i = 0; i < described; i++) {
        nullable_release(&parts[i].value);
        Py_DECREF(parts[i].key_object);
    }
    if (parts != stack_parts) {
        PyMem_Free(parts);
    }
    Py_XDECREF(headers);
    return result;
}

/* A timestamp argument: an int of int64, else -1 with append()'s errors. */
static int
timestamp_of(PyObject *obj, long long *out)
{
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "a record timestamp must be an int, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow;
    long long timestamp = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow) {
        invalid("timestamp %S does not fit in int64", obj);
        return -1;
    }
    if (timestamp == -1 && PyErr_Occurred()) {
        return -1;
    }
    *out = timestamp;
    return 0;
}

static PyObject *
encoded_append(EncodedRecords *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
{
    PyObject *arg[4] = {NULL, NULL, NULL, NULL}; /* key, value, timestamp, headers */
    if (append_arguments(args, PyVectorcall_NARGS(nargsf), kwnames, arg) < 0) {
        return NULL;
    }
    long long timestamp, base, delta_checked;
    /* The timestamp first, then the key and value: the pure twin's order. */
    if (timestamp_of(arg[2], &timestamp) < 0 ||
        timestamp_delta_of(self, timestamp, &base, &delta_checked) < 0) {
        return NULL;
    }
    PyObject *result = NULL;
    Nullable key = {0}, value = {0};
    long long delta;
    Py_ssize_t counted;
    if (nullable_view(arg[0], &key, "key") == 0 && nullable_view(arg[1], &value, "value") == 0 &&
        append_record(self, &key, &value, timestamp, arg[3], &UNMEASURED, &delta, &counted) ==
            1) {
        result = PyLong_FromLongLong(delta);
    }
    nullable_release(&key);
    nullable_release(&value);
    return result;
}

/* ------------------------------------------------------------------------------------------
 * Columns: many records in one call (a producer's send_batch)
 */

/* A column of timestamps: (0, None), (1, a list or tuple of ints), or (2, (values, offset,
 * length)) with int64 values (an Arrow int64 or timestamp array without nulls). */
typedef struct {
    int kind;
    PyObject *items;
    Py_buffer values;
    int has_values;
    Py_ssize_t offset, length;
} Timestamps;

static void
timestamps_close(Timestamps *stamps)
{
    if (stamps->has_values) {
        PyBuffer_Release(&stamps->values);
        stamps->has_values = 0;
    }
    Py_CLEAR(stamps->items);
}

static int
timestamps_open(Timestamps *stamps, PyObject *spec, Py_ssize_t length)
{
    memset(stamps, 0, sizeof(*stamps));
    long kind;
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 2 ||
        ((kind = PyLong_AsLong(PyTuple_GET_ITEM(spec, 0))) == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "timestamps: not a column");
        return -1;
    }
    PyObject *payload = PyTuple_GET_ITEM(spec, 1);
    stamps->kind = (int)kind;
    if (kind == COLUMN_NONE) {
        return 0;
    }
    if (kind == COLUMN_SEQUENCE && (PyList_Check(payload) || PyTuple_Check(payload))) {
        stamps->items = Py_NewRef(payload);
        stamps->length = PySequence_Fast_GET_SIZE(payload);
    }
    else if (kind == COLUMN_ARROW) {
        PyObject *values;
        if (!PyArg_ParseTuple(payload, "Onn", &values, &stamps->offset, &stamps->length) ||
            PyObject_GetBuffer(values, &stamps->values, PyBUF_SIMPLE) < 0) {
            return -1;
        }
        stamps->has_values = 1;
        if (stamps->offset < 0 || stamps->length < 0 ||
            stamps->offset > stamps->values.len / 8 - stamps->length) {
            PyErr_SetString(PyExc_ValueError,
                            "timestamps: the Arrow buffer is shorter than the array");
            goto error;
        }
    }
    else {
        PyErr_SetString(PyExc_TypeError, "timestamps: not a column");
        return -1;
    }
    if (stamps->length != length) {
        PyErr_Format(PyExc_ValueError, "timestamps has %zd items, not %zd", stamps->length,
                     length);
        goto error;
    }
    return 0;
error:
    timestamps_close(stamps);
    return -1;
}

static int
timestamp_at(const Timestamps *stamps, Py_ssize_t index, long long constant, long long *out)
{
    if (stamps->kind == COLUMN_SEQUENCE) {
        PyObject *item = PySequence_Fast_GET_ITEM(stamps->items, index);
        if (!PyLong_Check(item)) {
            PyErr_Format(PyExc_TypeError, "timestamps[%zd] must be an int, not %.100s", index,
                         Py_TYPE(item)->tp_name);
            return -1;
        }
        return timestamp_of(item, out);
    }
    if (stamps->kind == COLUMN_ARROW) {
        *out = ((const int64_t *)stamps->values.buf)[stamps->offset + index];
        return 0;
    }
    *out = constant;
    return 0;
}

/* The columns of append_columns() and measure_columns(), open. */
typedef struct {
    Column values, keys;
    PyObject *headers; /* a list or tuple (one item per record: None or headers), or NULL */
    Py_ssize_t count;
} Records;

static void
records_close(Records *records)
{
    column_close(&records->values);
    column_close(&records->keys);
    Py_CLEAR(records->headers);
}

static int
records_open(Records *records, PyObject *values, PyObject *keys, PyObject *headers)
{
    memset(records, 0, sizeof(*records));
    if (column_open(&records->values, values, "values", -1) < 0) {
        return -1;
    }
    records->count = records->values.length;
    if (records->count < 0) {
        PyErr_SetString(PyExc_TypeError, "values: not a column of known length");
        goto error;
    }
    if (column_open(&records->keys, keys, "keys", records->count) < 0) {
        goto error;
    }
    if (headers != Py_None) {
        if (!PyList_Check(headers) && !PyTuple_Check(headers)) {
            PyErr_SetString(PyExc_TypeError, "headers must be a list or tuple");
            goto error;
        }
        if (PySequence_Fast_GET_SIZE(headers) != records->count) {
            PyErr_Format(PyExc_ValueError, "headers has %zd items, not %zd",
                         PySequence_Fast_GET_SIZE(headers), records->count);
            goto error;
        }
        records->headers = Py_NewRef(headers);
    }
    return 0;
error:
    records_close(records);
    return -1;
}

/* Record ``index``'s key and value (views into the columns) and headers (borrowed, or NULL). */
static int
record_at(const Records *records, Py_ssize_t index, Nullable *key, Nullable *value,
          PyObject **headers)
{
    int found = column_get(&records->keys, index, "keys", &key->buf, &key->len);
    if (found < 0) {
        return -1;
    }
    key->present = found;
    key->held = 0;
    found = column_get(&records->values, index, "values", &value->buf, &value->len);
    if (found < 0) {
        return -1;
    }
    value->present = found;
    value->held = 0;
    *headers = NULL;
    if (records->headers != NULL) {
        PyObject *item = PySequence_Fast_GET_ITEM(records->headers, index);
        *headers = item == Py_None ? NULL : item;
    }
    return 0;
}

static PyObject *
encoded_append_columns(EncodedRecords *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"values",    "keys",     "headers",         "timestamps",
                             "timestamp", "order",    "start",           "stop",
                             "room",      "soft_room", "overhead",       "header_overhead",
                             NULL};
    PyObject *values, *keys, *headers, *timestamps, *order;
    long long constant;
    Py_ssize_t start, stop, room, soft_room, overhead, header_overhead;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$OOOOLOnnnnnn:append_columns", kwlist,
                                     &values, &keys, &headers, &timestamps, &constant, &order,
                                     &start, &stop, &room, &soft_room, &overhead,
                                     &header_overhead)) {
        return NULL;
    }
    Records records;
    Timestamps stamps;
    Py_buffer indexes = {0};
    int has_indexes = 0;
    PyObject *result = NULL;
    if (records_open(&records, values, keys, headers) < 0) {
        return NULL;
    }
    if (timestamps_open(&stamps, timestamps, records.count) < 0) {
        records_close(&records);
        return NULL;
    }
    Py_ssize_t positions = records.count;
    if (order != Py_None) {
        if (PyObject_GetBuffer(order, &indexes, PyBUF_SIMPLE) < 0) {
            goto done;
        }
        has_indexes = 1;
        positions = indexes.len / (Py_ssize_t)sizeof(int32_t);
    }
    if (start < 0 || stop < start || stop > positions) {
        PyErr_Format(PyExc_ValueError, "records %zd to %zd of %zd", start, stop, positions);
        goto done;
    }
    Py_ssize_t used = 0, next = 0, pos = start;
    for (; pos < stop; pos++) {
        if (soft_room >= 0 && used >= soft_room) {
            break; /* a soft bound stops before a record, once reached */
        }
        Py_ssize_t index = pos;
        if (has_indexes) {
            index = ((const int32_t *)indexes.buf)[pos];
            if (index < 0 || index >= records.count) {
                PyErr_Format(PyExc_ValueError, "order[%zd] is %zd, not a record", pos, index);
                goto done;
            }
        }
        Nullable key, value;
        PyObject *record_headers;
        long long timestamp, delta;
        if (record_at(&records, index, &key, &value, &record_headers) < 0 ||
            timestamp_at(&stamps, index, constant, &timestamp) < 0) {
            goto done;
        }
        Measure measure = {overhead + (key.present ? key.len : 0) +
                               (value.present ? value.len : 0),
                           header_overhead, room - used};
        Py_ssize_t counted;
        int appended = append_record(self, &key, &value, timestamp, record_headers, &measure,
                                     &delta, &counted);
        if (appended < 0) {
            goto done;
        }
        if (!appended) {
            next = counted;
            break;
        }
        used += counted;
    }
    result = Py_BuildValue("nnn", pos - start, used, next);
done:
    if (has_indexes) {
        PyBuffer_Release(&indexes);
    }
    timestamps_close(&stamps);
    records_close(&records);
    return result;
}

/* The TypeError raised about a record's headers, naming the record. */
static void
name_record(Py_ssize_t index)
{
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
        return;
    }
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    PyErr_Format(PyExc_TypeError, "record %zd: %S", index, value);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
}

/* measure_columns(values, keys, headers, overhead, header_overhead): every record checked as
 * append_columns() would take it (types, headers) without appending it, and (total, largest,
 * index of the largest) of their measures. */
static PyObject *
measure_columns(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"values", "keys", "headers", "overhead", "header_overhead", NULL};
    PyObject *values, *keys, *headers;
    Py_ssize_t overhead, header_overhead;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$OOOnn:measure_columns", kwlist, &values,
                                     &keys, &headers, &overhead, &header_overhead)) {
        return NULL;
    }
    Records records;
    if (records_open(&records, values, keys, headers) < 0) {
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t total = 0, largest = 0, largest_at = -1;
    for (Py_ssize_t index = 0; index < records.count; index++) {
        Nullable key, value;
        PyObject *record_headers;
        if (record_at(&records, index, &key, &value, &record_headers) < 0) {
            goto done;
        }
        Py_ssize_t weight = overhead + (key.present ? key.len : 0) +
                            (value.present ? value.len : 0);
        if (record_headers != NULL) {
            /* Described as append_record() describes them, so the same headers are refused. */
            EncodedRecords probe = {0};
            Measure measure = {weight, header_overhead, 0};
            long long delta;
            if (append_record(&probe, &key, &value, 0, record_headers, &measure, &delta,
                              &weight) < 0) {
                PyMem_Free(probe.data);
                name_record(index);
                goto done;
            }
            PyMem_Free(probe.data);
        }
        total += weight;
        if (weight > largest) {
            largest = weight;
            largest_at = index;
        }
    }
    result = Py_BuildValue("nnn", total, largest, largest_at);
done:
    records_close(&records);
    return result;
}

static PyObject *
encoded_new(PyTypeObject *type, PyObject *Py_UNUSED(args), PyObject *Py_UNUSED(kwargs))
{
    EncodedRecords *self = (EncodedRecords *)type->tp_alloc(type, 0);
    if (self != NULL) {
        self->base_timestamp = NO_TIMESTAMP;
        self->max_timestamp = NO_TIMESTAMP;
    }
    return (PyObject *)self;
}

static void
encoded_dealloc(EncodedRecords *self)
{
    PyMem_Free(self->data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static Py_ssize_t
encoded_len(EncodedRecords *self)
{
    return self->count;
}

static PyObject *
encoded_bytes(EncodedRecords *self, PyObject *Py_UNUSED(ignored))
{
    return PyBytes_FromStringAndSize((const char *)self->data, self->size);
}

static PyObject *
encoded_size(EncodedRecords *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(self->size);
}

static PyObject *
encoded_base_timestamp(EncodedRecords *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLongLong(self->base_timestamp);
}

static PyObject *
encoded_max_timestamp(EncodedRecords *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLongLong(self->max_timestamp);
}

static PyMethodDef encoded_methods[] = {
    {"append", (PyCFunction)(void (*)(void))encoded_append, METH_FASTCALL | METH_KEYWORDS,
     "append(key, value, *, timestamp, headers=())\n--\n\n"
     "Append one record; return its offset delta."},
    {"append_columns", (PyCFunction)(void (*)(void))encoded_append_columns,
     METH_VARARGS | METH_KEYWORDS,
     "append_columns(*, values, keys, headers, timestamps, timestamp, order, start, stop, room, "
     "soft_room, overhead, header_overhead)\n--\n\n"
     "Append records start to stop (of order, or of the columns) while their measure fits "
     "room and soft_room is not reached; (appended, measure used, measure of the record that "
     "did not fit room, or 0)."},
    {"encoded", (PyCFunction)encoded_bytes, METH_NOARGS,
     "encoded()\n--\n\nThe records appended so far, encoded."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef encoded_getset[] = {
    {"encoded_size", (getter)encoded_size, NULL, "The length of encoded().", NULL},
    {"base_timestamp", (getter)encoded_base_timestamp, NULL,
     "The first record's timestamp (-1 before one)", NULL},
    {"max_timestamp", (getter)encoded_max_timestamp, NULL,
     "The largest timestamp appended (-1 before one)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods encoded_sequence = {
    .sq_length = (lenfunc)encoded_len,
};

static PyTypeObject encoded_records_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafkawire.records._accel.EncodedRecords",
    .tp_doc = "The records of a v2 batch being built, encoded as they are appended.",
    .tp_basicsize = sizeof(EncodedRecords),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = encoded_new,
    .tp_dealloc = (destructor)encoded_dealloc,
    .tp_as_sequence = &encoded_sequence,
    .tp_methods = encoded_methods,
    .tp_getset = encoded_getset,
};

/* RecordColumns: records as Arrow column buffers, read with the helpers above. */
#include "_arrow_columns.h"

static PyMethodDef methods[] = {
    {"setup", (PyCFunction)setup, METH_VARARGS,
     "setup(record_class, header_class, corrupt_error, invalid_error)\n--\n\n"
     "The classes read_records() builds and raises; checks their slot layout."},
    {"measure_columns", (PyCFunction)(void (*)(void))measure_columns,
     METH_VARARGS | METH_KEYWORDS,
     "measure_columns(*, values, keys, headers, overhead, header_overhead)\n--\n\n"
     "Check every record as append_columns() takes it; (total, largest, index of largest)."},
    {"read_records_into", (PyCFunction)(void (*)(void))read_records_into,
     METH_VARARGS | METH_KEYWORDS,
     "read_records_into(buf, *, base_offset, base_timestamp, log_append_time, count, out, cls, "
     "names, values, start)\n--\n\n"
     "The records of a v2 records section from offset start on, as instances of cls (the "
     "record's fields and names set to values) appended to out; the offset after the last."},
    {"read_records", (PyCFunction)(void (*)(void))read_records, METH_VARARGS | METH_KEYWORDS,
     "read_records(buf, *, base_offset, base_timestamp, log_append_time, count)\n--\n\n"
     "The count records of a v2 records section, as the pure-Python loop reads them."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "kafkawire.records._accel",
    "The v2 record loop of kafkawire.records.v2_records, compiled.",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__accel(void)
{
    kw_key = PyUnicode_InternFromString("key");
    kw_value = PyUnicode_InternFromString("value");
    kw_timestamp = PyUnicode_InternFromString("timestamp");
    kw_headers = PyUnicode_InternFromString("headers");
    if (kw_key == NULL || kw_value == NULL || kw_timestamp == NULL || kw_headers == NULL ||
        PyType_Ready(&encoded_records_type) < 0) {
        return NULL;
    }
    PyObject *module_object = PyModule_Create(&module);
    if (module_object == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module_object, "EncodedRecords",
                              (PyObject *)&encoded_records_type) < 0 ||
        add_record_columns(module_object) < 0) {
        Py_DECREF(module_object);
        return NULL;
    }
    return module_object;
}
