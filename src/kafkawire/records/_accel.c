/* kafkawire.records._accel: the v2 record loop of kafkawire.records.v2_records, in C, and the
 * encoding of one record without headers (what a producer appends most).
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

#ifndef Py_T_OBJECT_EX
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

enum { R_OFFSET, R_TIMESTAMP, R_KEY, R_VALUE, R_HEADERS, R_FIELDS };
enum { H_KEY, H_VALUE, H_FIELDS };

static const char *const record_fields[R_FIELDS] = {"offset", "timestamp", "key", "value",
                                                    "headers"};
static const char *const header_fields[H_FIELDS] = {"key", "value"};

static PyTypeObject *record_type = NULL;
static PyTypeObject *header_type = NULL;
static PyObject *corrupt_error = NULL;
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

/* key or value: None for length -1, an error below it, else the bytes (which must not run
 * past the end: the pure loop's next read would then raise IndexError). */
static int
read_nullable(const unsigned char *buf, pos_t end, pos_t *pos_io, const char *name,
              PyObject **out, PyObject *base_offset)
{
    uint64_t raw;
    pos_t pos;
    if (read_inline(buf, end, *pos_io, 32, &raw, &pos, base_offset) < 0) {
        return -1;
    }
    if (raw == 1) {
        *out = Py_NewRef(Py_None);
    }
    else if (raw & 1) {
        CORRUPT("%s length %lld before byte " POS, name, (long long)zigzag(raw), pos);
        return -1;
    }
    else {
        pos_t length = (pos_t)(raw >> 1);
        if (length > end - pos) {
            PAST_END();
            return -1;
        }
        *out = PyBytes_FromStringAndSize((const char *)buf + pos, (Py_ssize_t)length);
        if (*out == NULL) {
            return -1;
        }
        pos += length;
    }
    *pos_io = pos;
    return 0;
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

static PyObject *
read_records(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"buf", "base_offset", "base_timestamp", "log_append_time", "count",
                             NULL};
    Py_buffer view;
    PyObject *base_offset, *base_timestamp, *log_append_time, *count_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*$OOOO:read_records", kwlist, &view,
                                     &base_offset, &base_timestamp, &log_append_time,
                                     &count_obj)) {
        return NULL;
    }
    PyObject *records = NULL;
    /* Any int, as range() takes it, clipped to Py_ssize_t: no count past end / 7 can be met,
     * and a negative one reads nothing, so the clipping changes no outcome. */
    Py_ssize_t count = PyNumber_AsSsize_t(count_obj, NULL);
    if (count == -1 && PyErr_Occurred()) {
        goto done;
    }
    if (record_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "kafkawire.records._accel.setup() was not called");
        goto done;
    }
    int64_t offset_base, timestamp_base = 0;
    int offset_fits, timestamp_fits = 0;
    int log_append = log_append_time != Py_None;
    if (as_int64(base_offset, "base_offset", &offset_base, &offset_fits) < 0) {
        goto done;
    }
    if (log_append) {
        if (!PyLong_Check(log_append_time)) {
            PyErr_Format(PyExc_TypeError, "log_append_time must be an int or None, not %.100s",
                         Py_TYPE(log_append_time)->tp_name);
            goto done;
        }
    }
    else if (as_int64(base_timestamp, "base_timestamp", &timestamp_base, &timestamp_fits) < 0) {
        goto done;
    }

    const unsigned char *buf = view.buf;
    pos_t end = view.len;
    pos_t pos = 0;
    /* A record takes at least 7 bytes, so no more than end / 7 of them can be complete. */
    Py_ssize_t capacity = count < view.len / 7 ? count : view.len / 7;
    records = PyTuple_New(capacity > 0 ? capacity : 0);
    if (records == NULL) {
        goto done;
    }
    /* Out of the GC while it fills, or every young collection walks all of it again (the
     * empty tuple is a shared singleton, which is left alone). */
    int retrack = capacity > 0 && PyObject_GC_IsTracked(records);
    if (retrack) {
        PyObject_GC_UnTrack(records);
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
        if (i >= capacity) { /* cannot happen: see capacity */
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
        PyObject *record = new_instance(record_type);
        if (record == NULL) {
            Py_DECREF(offset);
            Py_DECREF(timestamp);
            goto error_kvh;
        }
        SLOT(record, record_offsets[R_OFFSET]) = offset;
        SLOT(record, record_offsets[R_TIMESTAMP]) = timestamp;
        SLOT(record, record_offsets[R_KEY]) = key;
        SLOT(record, record_offsets[R_VALUE]) = value;
        SLOT(record, record_offsets[R_HEADERS]) = headers;
        PyTuple_SET_ITEM(records, i, record);
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
    if (retrack) {
        PyObject_GC_Track(records);
    }
    goto done;
error:
    Py_CLEAR(records);
done:
    PyBuffer_Release(&view);
    return records;
}

/* ------------------------------------------------------------------------------------------
 * Set-up: the classes, and the offsets of their slots
 */

static int
slot_offsets(PyTypeObject *type, const char *const *names, int n, Py_ssize_t *offsets)
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
    for (int i = 0; i < n; i++) {
        PyObject *descr = PyObject_GetAttrString((PyObject *)type, names[i]);
        if (descr == NULL) {
            PyErr_Clear();
            descr = Py_NewRef(Py_None);
        }
        int ok = Py_IS_TYPE(descr, &PyMemberDescr_Type);
        if (ok) {
            PyMemberDescrObject *member = (PyMemberDescrObject *)descr;
            PyMemberDef *def = member->d_member;
            Py_ssize_t offset = def->offset - (Py_ssize_t)sizeof(PyObject);
            ok = member->d_common.d_type == type && def->type == Py_T_OBJECT_EX && offset >= 0 &&
                 offset % (Py_ssize_t)sizeof(PyObject *) == 0 &&
                 def->offset + (Py_ssize_t)sizeof(PyObject *) <= type->tp_basicsize;
            offsets[i] = def->offset;
            /* Distinct, so that the n writes fill all n slots: a slot left unwritten would
             * hold whatever the allocator left there (a name rebound to another field's
             * descriptor would do that, and write one slot twice). */
            for (int j = 0; ok && j < i; j++) {
                ok = offsets[j] != offsets[i];
            }
        }
        Py_DECREF(descr);
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "%.100s.%s is not an object slot", type->tp_name,
                         names[i]);
            return -1;
        }
    }
    return 0;
}

static PyObject *
setup(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyTypeObject *record, *header;
    PyObject *error;
    if (!PyArg_ParseTuple(args, "O!O!O:setup", &PyType_Type, &record, &PyType_Type, &header,
                          &error)) {
        return NULL;
    }
    if (!PyExceptionClass_Check(error)) {
        PyErr_SetString(PyExc_TypeError, "setup() needs an exception class");
        return NULL;
    }
    Py_ssize_t r[R_FIELDS], h[H_FIELDS];
    if (slot_offsets(record, record_fields, R_FIELDS, r) < 0 ||
        slot_offsets(header, header_fields, H_FIELDS, h) < 0) {
        return NULL;
    }
    /* Everything replaced before the old classes are released: releasing one may run Python
     * code (a finalizer), which may call read_records() and must see one consistent set. */
    PyObject *old_record = (PyObject *)record_type;
    PyObject *old_header = (PyObject *)header_type;
    PyObject *old_error = corrupt_error;
    memcpy(record_offsets, r, sizeof(r));
    memcpy(header_offsets, h, sizeof(h));
    record_type = (PyTypeObject *)Py_NewRef(record);
    header_type = (PyTypeObject *)Py_NewRef(header);
    corrupt_error = Py_NewRef(error);
    Py_XDECREF(old_record);
    Py_XDECREF(old_header);
    Py_XDECREF(old_error);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------------------
 * Encoding one record without headers (the producer's common case)
 *
 * encode_record(offset_delta, timestamp_delta, key, value) gives exactly the bytes of the pure
 * encode_record with no headers: length, attributes 0, zigzag varint deltas, key and value
 * with their zigzag varint lengths (-1 for null), and a header count of 0. Anything it does
 * not take (a key or value that is not bytes or None, a delta past 64 bits) raises TypeError
 * or OverflowError, on which its caller uses the pure function instead.
 */

/* Write ``value`` as an unsigned LEB128 varint at ``out``; return the bytes written. */
static int
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

static uint64_t
zigzag_encode(long long value)
{
    return ((uint64_t)value << 1) ^ (uint64_t)(value >> 63);
}

/* The zigzag varint length prefix of a nullable bytes field, and its data and size. */
static int
nullable_bytes(PyObject *obj, unsigned char *prefix, int *prefix_len, const char **data,
               Py_ssize_t *size)
{
    if (obj == Py_None) {
        *prefix_len = put_uvarint(prefix, zigzag_encode(-1));
        *data = NULL;
        *size = 0;
        return 0;
    }
    if (!PyBytes_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "encode_record() takes bytes or None");
        return -1;
    }
    *data = PyBytes_AS_STRING(obj);
    *size = PyBytes_GET_SIZE(obj);
    *prefix_len = put_uvarint(prefix, zigzag_encode(*size));
    return 0;
}

static PyObject *
encode_record(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "encode_record() takes 4 arguments");
        return NULL;
    }
    long long offset_delta = PyLong_AsLongLong(args[0]);
    if (offset_delta == -1 && PyErr_Occurred()) {
        return NULL;
    }
    long long timestamp_delta = PyLong_AsLongLong(args[1]);
    if (timestamp_delta == -1 && PyErr_Occurred()) {
        return NULL;
    }
    /* attributes (1) + timestamp delta (<= 10) + offset delta (<= 10) + two length prefixes
     * (<= 10 each) + the header count (1) */
    unsigned char head[32], key_prefix[10], value_prefix[10];
    int key_prefix_len, value_prefix_len;
    const char *key, *value;
    Py_ssize_t key_size, value_size;
    if (nullable_bytes(args[2], key_prefix, &key_prefix_len, &key, &key_size) < 0 ||
        nullable_bytes(args[3], value_prefix, &value_prefix_len, &value, &value_size) < 0) {
        return NULL;
    }
    int head_len = 0;
    head[head_len++] = 0; /* attributes */
    head_len += put_uvarint(head + head_len, zigzag_encode(timestamp_delta));
    head_len += put_uvarint(head + head_len, zigzag_encode(offset_delta));
    Py_ssize_t body = head_len + key_prefix_len + key_size + value_prefix_len + value_size + 1;
    unsigned char length[10];
    int length_len = put_uvarint(length, zigzag_encode(body));
    PyObject *out = PyBytes_FromStringAndSize(NULL, length_len + body);
    if (out == NULL) {
        return NULL;
    }
    unsigned char *at = (unsigned char *)PyBytes_AS_STRING(out);
    memcpy(at, length, length_len);
    at += length_len;
    memcpy(at, head, head_len);
    at += head_len;
    memcpy(at, key_prefix, key_prefix_len);
    at += key_prefix_len;
    if (key_size) {
        memcpy(at, key, key_size);
        at += key_size;
    }
    memcpy(at, value_prefix, value_prefix_len);
    at += value_prefix_len;
    if (value_size) {
        memcpy(at, value, value_size);
        at += value_size;
    }
    *at = 0; /* no headers */
    return out;
}

static PyMethodDef methods[] = {
    {"setup", (PyCFunction)setup, METH_VARARGS,
     "setup(record_class, header_class, corrupt_error)\n--\n\n"
     "The classes read_records() builds and raises; checks their slot layout."},
    {"read_records", (PyCFunction)(void (*)(void))read_records, METH_VARARGS | METH_KEYWORDS,
     "read_records(buf, *, base_offset, base_timestamp, log_append_time, count)\n--\n\n"
     "The count records of a v2 records section, as the pure-Python loop reads them."},
    {"encode_record", (PyCFunction)(void (*)(void))encode_record, METH_FASTCALL,
     "encode_record(offset_delta, timestamp_delta, key, value)\n--\n\n"
     "One record without headers, as the pure encode_record writes it."},
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
    return PyModule_Create(&module);
}
