/* RecordColumns: the records of v2 records sections as Arrow column buffers, with no Python
 * object per record. The compiled twin of kafkawire.records.arrow_columns.RecordColumnsPure
 * (see there for the layouts and rules); included by _accel.c, whose varint readers and
 * errors it uses, and registered by its module (add_record_columns()).
 *
 * append() reads every record of a section and checks it as read_records() does (the same
 * errors, as CorruptRecordError), keeping the rows with start <= offset < end; when a section
 * fails, nothing of it stays appended (every buffer is rewound to where it was).
 */

typedef struct {
    unsigned char *data; /* PyMem, NULL until first needed */
    Py_ssize_t size;
    Py_ssize_t capacity;
} Buffer;

/* Arrow binary and string arrays: a validity bitmap, int32 offsets (one more than the
 * items, the first 0) and the items' bytes one after the other. */
typedef struct {
    Buffer validity, offsets, data;
    Py_ssize_t items, nulls;
} BinaryColumn;

typedef struct {
    PyObject_HEAD
    int include_headers;
    Py_ssize_t rows;
    Buffer offsets, timestamps, types; /* int64, int64 microseconds, int32 */
    BinaryColumn keys, values;
    Buffer header_lists; /* int32: each row's first header, then the end (a list array) */
    BinaryColumn header_keys, header_values;
} RecordColumns;

#define N_BUFFERS 16 /* four, and three per binary column */
#define N_BINARY 4

/* Where every buffer and count stood before a section, to rewind to on its failure. */
typedef struct {
    Py_ssize_t rows, sizes[N_BUFFERS], items[N_BINARY], nulls[N_BINARY];
} Mark;

static void
all_buffers(RecordColumns *self, Buffer **out)
{
    BinaryColumn *columns[N_BINARY] = {&self->keys, &self->values, &self->header_keys,
                                &self->header_values};
    out[0] = &self->offsets;
    out[1] = &self->timestamps;
    out[2] = &self->types;
    out[3] = &self->header_lists;
    for (int i = 0; i < N_BINARY; i++) {
        out[4 + 3 * i] = &columns[i]->validity;
        out[5 + 3 * i] = &columns[i]->offsets;
        out[6 + 3 * i] = &columns[i]->data;
    }
}

static void
all_columns(RecordColumns *self, BinaryColumn **out)
{
    out[0] = &self->keys;
    out[1] = &self->values;
    out[2] = &self->header_keys;
    out[3] = &self->header_values;
}

static void
mark_take(RecordColumns *self, Mark *mark)
{
    Buffer *buffers[N_BUFFERS];
    BinaryColumn *columns[N_BINARY];
    all_buffers(self, buffers);
    all_columns(self, columns);
    mark->rows = self->rows;
    for (int i = 0; i < N_BUFFERS; i++) {
        mark->sizes[i] = buffers[i]->size;
    }
    for (int i = 0; i < N_BINARY; i++) {
        mark->items[i] = columns[i]->items;
        mark->nulls[i] = columns[i]->nulls;
    }
}

static void
mark_rewind(RecordColumns *self, const Mark *mark)
{
    Buffer *buffers[N_BUFFERS];
    BinaryColumn *columns[N_BINARY];
    all_buffers(self, buffers);
    all_columns(self, columns);
    self->rows = mark->rows;
    for (int i = 0; i < N_BUFFERS; i++) {
        buffers[i]->size = mark->sizes[i];
    }
    for (int i = 0; i < N_BINARY; i++) {
        columns[i]->items = mark->items[i];
        columns[i]->nulls = mark->nulls[i];
    }
}

static int
buffer_reserve(Buffer *buffer, Py_ssize_t extra)
{
    if (extra <= buffer->capacity - buffer->size) {
        return 0;
    }
    if (extra > PY_SSIZE_T_MAX / 2 - buffer->size) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t capacity = buffer->capacity ? buffer->capacity : 1024;
    while (capacity < buffer->size + extra) {
        capacity *= 2;
    }
    unsigned char *data = PyMem_Realloc(buffer->data, (size_t)capacity);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    buffer->data = data;
    buffer->capacity = capacity;
    return 0;
}

static inline int
buffer_put(Buffer *buffer, const void *bytes, Py_ssize_t length)
{
    if (buffer_reserve(buffer, length) < 0) {
        return -1;
    }
    if (length) { /* memcpy's source must not be NULL, even for no bytes */
        memcpy(buffer->data + buffer->size, bytes, (size_t)length);
    }
    buffer->size += length;
    return 0;
}

static inline int
buffer_put_int32(Buffer *buffer, int32_t value)
{
    return buffer_put(buffer, &value, sizeof(value));
}

static inline int
buffer_put_int64(Buffer *buffer, int64_t value)
{
    return buffer_put(buffer, &value, sizeof(value));
}

/* A new item: ``length`` bytes at ``bytes``, or null for a length of -1. */
static int
binary_put(BinaryColumn *column, const unsigned char *bytes, pos_t length)
{
    Py_ssize_t index = column->items;
    if (index % 8 == 0) {
        unsigned char zero = 0;
        if (buffer_put(&column->validity, &zero, 1) < 0) {
            return -1;
        }
    }
    unsigned char *bits = column->validity.data + index / 8;
    unsigned char bit = (unsigned char)(1u << (index % 8));
    if (length < 0) {
        *bits &= (unsigned char)~bit;
        column->nulls += 1;
        length = 0;
    }
    else {
        *bits |= bit;
    }
    if (length > INT32_MAX - column->data.size) {
        PyErr_SetString(PyExc_OverflowError,
                        "more than 2 GiB of keys, values or headers in one set of columns");
        return -1;
    }
    if (buffer_put(&column->data, bytes, (Py_ssize_t)length) < 0 ||
        buffer_put_int32(&column->offsets, (int32_t)column->data.size) < 0) {
        return -1;
    }
    column->items = index + 1;
    return 0;
}

/* Empty columns: no rows, and the first offset (0) of each offsets buffer. */
static int
columns_reset(RecordColumns *self)
{
    Buffer *buffers[N_BUFFERS];
    BinaryColumn *columns[N_BINARY];
    all_buffers(self, buffers);
    all_columns(self, columns);
    self->rows = 0;
    for (int i = 0; i < N_BUFFERS; i++) {
        buffers[i]->size = 0;
    }
    for (int i = 0; i < N_BINARY; i++) {
        columns[i]->items = columns[i]->nulls = 0;
        if (buffer_put_int32(&columns[i]->offsets, 0) < 0) {
            return -1;
        }
    }
    return buffer_put_int32(&self->header_lists, 0);
}

/* Whether ``length`` bytes at ``bytes`` are UTF-8 as Python's strict decoder takes it (no
 * surrogates, no overlong forms, nothing past U+10FFFF). */
static int
is_utf8(const unsigned char *bytes, pos_t length)
{
    pos_t i = 0;
    while (i < length) {
        unsigned int lead = bytes[i];
        if (lead < 0x80) {
            i += 1;
            continue;
        }
        int more;
        unsigned int low = 0x80, high = 0xBF; /* the range of the second byte */
        if (lead >= 0xC2 && lead <= 0xDF) {
            more = 1;
        }
        else if (lead >= 0xE0 && lead <= 0xEF) {
            more = 2;
            low = lead == 0xE0 ? 0xA0 : 0x80;
            high = lead == 0xED ? 0x9F : 0xBF;
        }
        else if (lead >= 0xF0 && lead <= 0xF4) {
            more = 3;
            low = lead == 0xF0 ? 0x90 : 0x80;
            high = lead == 0xF4 ? 0x8F : 0xBF;
        }
        else {
            return 0;
        }
        if (length - i <= more || bytes[i + 1] < low || bytes[i + 1] > high) {
            return 0;
        }
        for (int k = 2; k <= more; k++) {
            if ((bytes[i + k] & 0xC0) != 0x80) {
                return 0;
            }
        }
        i += more + 1;
    }
    return 1;
}

/* The headers at ``*pos_io`` (whose count varint is not 0), checked as read_headers() checks
 * them, and appended to the header columns when ``keep``. */
static int
put_headers(RecordColumns *self, const unsigned char *buf, pos_t end, pos_t *pos_io,
            pos_t record_end, int keep, PyObject *base_offset)
{
    pos_t pos = *pos_io;
    uint64_t raw;
    if (read_raw(buf, end, pos, 32, &raw, &pos, base_offset) < 0) {
        return -1;
    }
    int64_t count = zigzag(raw);
    if (count < 0 || 2 * count > record_end - pos) {
        CORRUPT("header count %lld before byte " POS, (long long)count, pos);
        return -1;
    }
    for (int64_t i = 0; i < count; i++) {
        if (read_raw(buf, end, pos, 32, &raw, &pos, base_offset) < 0) {
            return -1;
        }
        int64_t length = zigzag(raw);
        if (length < 0) {
            CORRUPT("header key length %lld before byte " POS, (long long)length, pos);
            return -1;
        }
        if (length > end - pos) {
            PAST_END();
            return -1;
        }
        if (!is_utf8(buf + pos, length)) {
            CORRUPT("a header key is not UTF-8");
            return -1;
        }
        if (keep && binary_put(&self->header_keys, buf + pos, length) < 0) {
            return -1;
        }
        pos += length;
        if (read_raw(buf, end, pos, 32, &raw, &pos, base_offset) < 0) {
            return -1;
        }
        length = zigzag(raw);
        if (length < -1) {
            CORRUPT("header value length %lld before byte " POS, (long long)length, pos);
            return -1;
        }
        if (length > end - pos) {
            PAST_END();
            return -1;
        }
        if (keep && binary_put(&self->header_values, buf + pos, length) < 0) {
            return -1;
        }
        pos += length < 0 ? 0 : length;
    }
    *pos_io = pos;
    return 0;
}

/* A row's fixed-width fields and its key and value. */
static int
put_row(RecordColumns *self, int64_t offset, int64_t timestamp, int32_t type,
        const unsigned char *key, pos_t key_length, const unsigned char *value,
        pos_t value_length)
{
    /* Milliseconds to microseconds, wrapping as Arrow's (unchecked) multiply does. */
    int64_t micros = (int64_t)((uint64_t)timestamp * 1000u);
    if (buffer_put_int64(&self->offsets, offset) < 0 ||
        buffer_put_int64(&self->timestamps, micros) < 0 ||
        buffer_put_int32(&self->types, type) < 0 ||
        binary_put(&self->keys, key, key_length) < 0 ||
        binary_put(&self->values, value, value_length) < 0) {
        return -1;
    }
    if (self->include_headers &&
        buffer_put_int32(&self->header_lists, (int32_t)self->header_keys.items) < 0) {
        return -1;
    }
    self->rows += 1;
    return 0;
}

/* The record loop over one section; the rows appended, or -1 with an error. */
static Py_ssize_t
append_section(RecordColumns *self, const unsigned char *buf, pos_t end, Py_ssize_t count,
               PyObject *base_offset, PyObject *base_timestamp, PyObject *log_append_time,
               int64_t first, int64_t stop, int32_t type)
{
    int64_t offset_base, timestamp_base = 0;
    int offset_fits, timestamp_fits = 1;
    if (as_int64(base_offset, "base_offset", &offset_base, &offset_fits) < 0) {
        return -1;
    }
    int log_append = log_append_time != Py_None;
    if (as_int64(log_append ? log_append_time : base_timestamp,
                 log_append ? "log_append_time" : "base_timestamp", &timestamp_base,
                 &timestamp_fits) < 0) {
        return -1;
    }
    Py_ssize_t appended = 0;
    int overflowed = !offset_fits;
    pos_t pos = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t raw;
        if (read_inline(buf, end, pos, 32, &raw, &pos, base_offset) < 0) {
            return -1;
        }
        if (raw & 1) {
            CORRUPT("record length %lld before byte " POS, (long long)zigzag(raw), pos);
            return -1;
        }
        pos_t record_end = pos + (pos_t)(raw >> 1);
        /* The timestamp delta, past the (unused) attributes byte. */
        if (read_inline(buf, end, pos + 1, 64, &raw, &pos, base_offset) < 0) {
            return -1;
        }
        int64_t timestamp_delta = zigzag(raw);
        if (read_inline(buf, end, pos, 32, &raw, &pos, base_offset) < 0) {
            return -1;
        }
        int64_t offset_delta = zigzag(raw);
        pos_t key_at, key_length, value_at, value_length;
        if (nullable_length(buf, end, &pos, "key", &key_length, base_offset) < 0) {
            return -1;
        }
        key_at = pos - (key_length < 0 ? 0 : key_length);
        if (nullable_length(buf, end, &pos, "value", &value_length, base_offset) < 0) {
            return -1;
        }
        value_at = pos - (value_length < 0 ? 0 : value_length);
        if (pos >= end) {
            PAST_END();
            return -1;
        }
        int keep = 0;
        int64_t offset = 0;
        if (overflowed || (offset_delta >= 0 ? offset_base > INT64_MAX - offset_delta
                                             : offset_base < INT64_MIN - offset_delta)) {
            overflowed = 1; /* reported once the section is read, as read_records_into() */
        }
        else {
            offset = offset_base + offset_delta;
            keep = offset >= first && offset < stop;
        }
        if (buf[pos]) {
            if (put_headers(self, buf, end, &pos, record_end, keep && self->include_headers,
                            base_offset) < 0) {
                return -1;
            }
        }
        else {
            pos += 1;
        }
        if (pos != record_end) {
            CORRUPT("record ending at byte " POS " used " POS, record_end, pos);
            return -1;
        }
        if (!keep) {
            continue;
        }
        int64_t timestamp = timestamp_base;
        if (!log_append) {
            if (!timestamp_fits ||
                (timestamp_delta >= 0 ? timestamp_base > INT64_MAX - timestamp_delta
                                      : timestamp_base < INT64_MIN - timestamp_delta)) {
                CORRUPT("a record timestamp does not fit in int64");
                return -1;
            }
            timestamp = timestamp_base + timestamp_delta;
        }
        if (put_row(self, offset, timestamp, type, buf + key_at, key_length, buf + value_at,
                    value_length) < 0) {
            return -1;
        }
        appended += 1;
    }
    if (pos != end) {
        CORRUPT("%zd records end at byte " POS " of " POS, count, pos, end);
        return -1;
    }
    if (overflowed) {
        CORRUPT("a record offset does not fit in int64");
        return -1;
    }
    return appended;
}

static PyObject *
columns_append(RecordColumns *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"buf",   "base_offset", "base_timestamp", "log_append_time",
                             "count", "start",       "end",            "timestamp_type",
                             NULL};
    Py_buffer view;
    PyObject *base_offset, *base_timestamp, *log_append_time, *count_obj;
    long long first, stop;
    int type;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*$OOOOLLi:append", kwlist, &view,
                                     &base_offset, &base_timestamp, &log_append_time,
                                     &count_obj, &first, &stop, &type)) {
        return NULL;
    }
    PyObject *result = NULL;
    /* Any int, as range() takes it, clipped: a negative count reads nothing. */
    Py_ssize_t count = PyNumber_AsSsize_t(count_obj, NULL);
    if (count == -1 && PyErr_Occurred()) {
        goto done;
    }
    if (corrupt_error == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "kafkawire.records._accel.setup() was not called");
        goto done;
    }
    Mark mark;
    mark_take(self, &mark);
    Py_ssize_t appended = append_section(self, view.buf, view.len, count, base_offset,
                                         base_timestamp, log_append_time, first, stop, type);
    if (appended < 0) {
        mark_rewind(self, &mark);
    }
    else {
        result = PyLong_FromSsize_t(appended);
    }
done:
    PyBuffer_Release(&view);
    return result;
}

static PyObject *
buffer_bytes(const Buffer *buffer)
{
    return PyBytes_FromStringAndSize((const char *)buffer->data, buffer->size);
}

/* (validity or None, null count, offsets, data) of a binary column. */
static PyObject *
binary_buffers(const BinaryColumn *column)
{
    PyObject *validity = column->nulls ? buffer_bytes(&column->validity) : Py_NewRef(Py_None);
    if (validity == NULL) {
        return NULL;
    }
    return Py_BuildValue("(NnNN)", validity, column->nulls, buffer_bytes(&column->offsets),
                         buffer_bytes(&column->data));
}

static PyObject *
columns_finish(RecordColumns *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *headers;
    if (self->include_headers) {
        headers = Py_BuildValue("(NNN)", buffer_bytes(&self->header_lists),
                                binary_buffers(&self->header_keys),
                                binary_buffers(&self->header_values));
    }
    else {
        headers = Py_NewRef(Py_None);
    }
    if (headers == NULL) {
        return NULL;
    }
    PyObject *result = Py_BuildValue(
        "(nNNNNNN)", self->rows, buffer_bytes(&self->offsets), buffer_bytes(&self->timestamps),
        buffer_bytes(&self->types), binary_buffers(&self->keys), binary_buffers(&self->values),
        headers);
    if (result != NULL && columns_reset(self) < 0) {
        Py_CLEAR(result);
    }
    return result;
}

static PyObject *
columns_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"include_headers", NULL};
    int include_headers;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "p:RecordColumns", kwlist,
                                     &include_headers)) {
        return NULL;
    }
    RecordColumns *self = (RecordColumns *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->include_headers = include_headers;
    if (columns_reset(self) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void
columns_dealloc(RecordColumns *self)
{
    Buffer *buffers[N_BUFFERS];
    all_buffers(self, buffers);
    for (int i = 0; i < N_BUFFERS; i++) {
        PyMem_Free(buffers[i]->data);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static Py_ssize_t
columns_len(RecordColumns *self)
{
    return self->rows;
}

static PyMethodDef columns_methods[] = {
    {"append", (PyCFunction)(void (*)(void))columns_append, METH_VARARGS | METH_KEYWORDS,
     "append(buf, *, base_offset, base_timestamp, log_append_time, count, start, end, "
     "timestamp_type)\n--\n\n"
     "Append the rows of a v2 records section with start <= offset < end; how many."},
    {"finish", (PyCFunction)columns_finish, METH_NOARGS,
     "finish()\n--\n\n"
     "The buffers of the rows appended (see RecordColumnsPure.finish); empty again."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods columns_sequence = {
    .sq_length = (lenfunc)columns_len,
};

static PyTypeObject record_columns_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafkawire.records._accel.RecordColumns",
    .tp_doc = "The rows of v2 records sections as Arrow column buffers.",
    .tp_basicsize = sizeof(RecordColumns),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = columns_new,
    .tp_dealloc = (destructor)columns_dealloc,
    .tp_as_sequence = &columns_sequence,
    .tp_methods = columns_methods,
};

/* Called by the module's init: RecordColumns as a module attribute. */
static int
add_record_columns(PyObject *module)
{
    if (PyType_Ready(&record_columns_type) < 0) {
        return -1;
    }
    return PyModule_AddObjectRef(module, "RecordColumns", (PyObject *)&record_columns_type);
}
