/* kafkawire.protocol._accel: the message-body decoders of kafkawire.protocol.codec, in C.
 *
 * Optional: the build compiles it when it can (see hatch_build.py at the repository root), and
 * kafkawire.protocol.codec uses its pure-Python decoders when it is missing or when
 * KAFKAWIRE_NO_EXTENSIONS is set.
 *
 * A Decoder is a plan interpreter for one message class: kafkawire.protocol._accelerated turns
 * the codec's planned fields into a tuple of ops (kind, flags, slot, array element width, the
 * nested Decoder of a struct, and for tagged fields the tag and default) once per class, and
 * the Decoder walks them. It must give exactly what the pure decoder gives for every input the
 * pure decoder accepts (same types, values, positions). It does not reproduce the pure
 * decoder's errors: on any failure at all (bytes past the end, a bad length, bad UTF-8, an
 * argument it does not handle), calling the Decoder clears the error and calls the pure
 * decoder with the same arguments, which raises the exact DecodeError (or, were the two ever
 * to disagree, returns its result). Decoder.raw() does the same work without that fallback,
 * for tests that compare the two.
 *
 * Objects are built as the pure decoder builds its slot twins, without __init__: allocated with
 * the class's tp_alloc (zero-filled, so an object that fails half-way is safe to release) and
 * their slots written at the offsets of the class's member descriptors, which the Decoder's
 * constructor looks up and checks once. Every length and count is checked against the bytes
 * left before anything is read or allocated, with the pure decoder's bounds; positions are
 * 64-bit, so no length read from the wire overflows them. Recursion follows the schema's
 * nesting only, and is bounded by the interpreter's recursion limit.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>

#ifndef Py_T_OBJECT_EX
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

/* The plan format kafkawire.protocol._accelerated writes; a stale build refuses a new one.
 * 2: classes may have bases that hold nothing (generated requests and responses do). */
#define PLAN_VERSION 2

enum kind {
    K_BOOL,
    K_INT8,
    K_INT16,
    K_UINT16,
    K_INT32,
    K_UINT32,
    K_INT64,
    K_FLOAT64,
    K_STRING,
    K_BYTES,
    K_RECORDS,
    K_UUID,
    K_VARINT,
    K_VARLONG,
    K_STRUCT,
    K_KINDS
};
enum { F_ARRAY = 1, F_NULLABLE = 2, F_COMPACT = 4, F_ALL = 7 };

/* The width of the fixed-width kinds (K_BOOL to K_FLOAT64). */
static const int fixed_width[K_FLOAT64 + 1] = {1, 1, 2, 2, 4, 4, 8, 8};

/* Byte positions: 64-bit, as lengths up to 2**35 (a five-byte varint) are added to them. */
typedef long long pos_t;

/* The largest array element width a plan may give: counts are below 2**35, so ``n * width``
 * stays below 2**51 and cannot overflow (the planner's widths are 16 at most). */
#define MAX_WIDTH (1LL << 16)

typedef struct Decoder Decoder;

typedef struct {
    int kind;
    int flags;
    Py_ssize_t offset; /* of the field's slot */
    pos_t width;       /* arrays: the fewest bytes an element takes (0: an empty struct) */
    Decoder *nested;   /* K_STRUCT: the struct's decoder */
    long long tag;     /* tagged fields */
    PyObject *dflt;    /* tagged fields: the value when absent */
} Op;

struct Decoder {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyTypeObject *cls;
    PyObject *fallback; /* the pure decoder, or NULL */
    Py_ssize_t n_fields;
    Py_ssize_t n_tagged;
    Op *ops; /* n_fields untagged ops in wire order, then n_tagged by ascending tag */
    int flexible;
    int holds_records;
    Py_ssize_t unknown_offset;
};

static PyTypeObject DecoderType;

/* One decode: the buffer, its end and the memoryview records fields are sliced from. */
typedef struct {
    const unsigned char *buf;
    PyObject *buf_obj;
    PyObject *view; /* borrowed from the caller, or owned (own_view), or NULL until needed */
    int own_view;
    pos_t end;  /* the end of what the pure decoder sees: the buffer, or one tagged field */
    pos_t base; /* its start: 0, or the tagged field's first byte */
} Ctx;

static PyTypeObject *uuid_type = NULL;
static PyObject *uuid_safe = NULL;
static Py_ssize_t uuid_int_offset, uuid_safe_offset;

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* Any failure: the caller falls back to the pure decoder, which words the real error. */
static void *
fail(const char *why)
{
    PyErr_SetString(PyExc_ValueError, why);
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Primitives
 */

/* read_uvarint(): at most ``max_bytes`` bytes (5 or 10); the bits past the 64th, which only a
 * ten-byte varint has, go to ``*high``. 0, or -1 with an error. */
static int
read_uvarint(const Ctx *c, pos_t *pos_io, int max_bytes, uint64_t *out, uint64_t *high)
{
    pos_t pos = *pos_io;
    uint64_t value = 0, above = 0;
    for (int i = 0; i < max_bytes; i++, pos++) {
        if (pos >= c->end) {
            fail("varint runs past the end");
            return -1;
        }
        uint64_t group = c->buf[pos] & 0x7F;
        int shift = 7 * i;
        if (shift < 63) {
            value |= group << shift;
        }
        else { /* shift 63, the tenth byte */
            value |= (group & 1) << 63;
            above = group >> 1;
        }
        if (c->buf[pos] < 0x80) {
            *out = value;
            if (high != NULL) {
                *high = above;
            }
            *pos_io = pos + 1;
            return 0;
        }
    }
    fail("varint too long");
    return -1;
}

/* read_varint() / read_varlong(): ``(raw >> 1) ^ -(raw & 1)`` of a raw value of up to 70 bits,
 * as a Python int (Python's arithmetic has no width, so neither has the result). */
static PyObject *
read_zigzag(const Ctx *c, pos_t *pos, int max_bytes)
{
    uint64_t raw, high;
    if (read_uvarint(c, pos, max_bytes, &raw, &high) < 0) {
        return NULL;
    }
    int negative = raw & 1;
    uint64_t half = (raw >> 1) | (high << 63); /* the low 64 bits of raw >> 1 */
    uint64_t half_high = high >> 1;
    if (half_high == 0 && half < ((uint64_t)1 << 63)) {
        long long value = (long long)half;
        return PyLong_FromLongLong(negative ? -value - 1 : value);
    }
    PyObject *top = PyLong_FromUnsignedLongLong(half_high);
    PyObject *shift = PyLong_FromLong(64);
    PyObject *low = PyLong_FromUnsignedLongLong(half);
    PyObject *shifted = top && shift ? PyNumber_Lshift(top, shift) : NULL;
    PyObject *whole = shifted && low ? PyNumber_Or(shifted, low) : NULL;
    Py_XDECREF(top);
    Py_XDECREF(shift);
    Py_XDECREF(low);
    Py_XDECREF(shifted);
    if (whole == NULL || !negative) {
        return whole;
    }
    PyObject *result = PyNumber_Invert(whole); /* ~x == -x - 1 */
    Py_DECREF(whole);
    return result;
}

static inline uint32_t
be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* struct's ">?bhHiIqd" of the bytes at p (which the caller checked are there). */
static PyObject *
fixed_value(int kind, const unsigned char *p)
{
    switch (kind) {
    case K_BOOL:
        return PyBool_FromLong(p[0] != 0);
    case K_INT8:
        return PyLong_FromLong((signed char)p[0]);
    case K_INT16:
        return PyLong_FromLong((int16_t)(uint16_t)((p[0] << 8) | p[1]));
    case K_UINT16:
        return PyLong_FromLong((p[0] << 8) | p[1]);
    case K_INT32:
        return PyLong_FromLong((int32_t)be32(p));
    case K_UINT32:
        return PyLong_FromUnsignedLong(be32(p));
    case K_INT64:
        return PyLong_FromLongLong((int64_t)(((uint64_t)be32(p) << 32) | be32(p + 4)));
    default: { /* K_FLOAT64 */
        double value = PyFloat_Unpack8((const char *)p, 0);
        if (value == -1.0 && PyErr_Occurred()) {
            return NULL;
        }
        return PyFloat_FromDouble(value);
    }
    }
}

/* uuid_from_bytes(): a UUID with its two slots set, as the pure decoder makes one. */
static PyObject *
uuid_value(const unsigned char *p)
{
#if PY_VERSION_HEX >= 0x030D0000
    PyObject *number = PyLong_FromUnsignedNativeBytes(p, 16, Py_ASNATIVEBYTES_BIG_ENDIAN);
#else
    PyObject *number = _PyLong_FromByteArray(p, 16, 0, 0);
#endif
    if (number == NULL) {
        return NULL;
    }
    /* Read before allocating: a collection there may run a finalizer that calls setup(). */
    PyTypeObject *type = uuid_type;
    Py_ssize_t int_offset = uuid_int_offset, safe_offset = uuid_safe_offset;
    PyObject *safe = Py_NewRef(uuid_safe);
    Py_INCREF(type);
    PyObject *value = type->tp_alloc(type, 0);
    Py_DECREF(type); /* the instance holds its own reference to its heap type */
    if (value == NULL) {
        Py_DECREF(number);
        Py_DECREF(safe);
        return NULL;
    }
    SLOT(value, int_offset) = number;
    SLOT(value, safe_offset) = safe;
    return value;
}

/* A length or count into ``*n``, as _decode_length() reads it: -1 (any negative value, for a
 * non-compact one) is null, which only a nullable field may hold. */
static int
read_length(const Ctx *c, const Op *op, pos_t *pos, int64_t *n)
{
    if (op->flags & F_COMPACT) {
        uint64_t raw;
        if (read_uvarint(c, pos, 5, &raw, NULL) < 0) {
            return -1;
        }
        *n = (int64_t)raw - 1;
    }
    else if (op->kind == K_STRING && !(op->flags & F_ARRAY)) {
        if (c->end - *pos < 2) {
            fail("length runs past the end");
            return -1;
        }
        const unsigned char *p = c->buf + *pos;
        *n = (int16_t)(uint16_t)((p[0] << 8) | p[1]);
        *pos += 2;
    }
    else {
        if (c->end - *pos < 4) {
            fail("length runs past the end");
            return -1;
        }
        *n = (int32_t)be32(c->buf + *pos);
        *pos += 4;
    }
    if (*n < 0 && !(op->flags & F_NULLABLE)) {
        fail("null in a field that is not nullable");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * Values
 */

static PyObject *decode_struct(const Decoder *d, Ctx *c, pos_t *pos_io);
static PyObject *decode_value(const Op *op, Ctx *c, pos_t *pos_io);

/* A string, bytes or records value of ``n`` bytes at ``pos`` (checked to be there). */
static PyObject *
slice_value(int kind, Ctx *c, pos_t pos, pos_t n)
{
    const char *start = (const char *)c->buf + pos;
    if (kind == K_STRING) {
        return PyUnicode_DecodeUTF8(start, (Py_ssize_t)n, NULL);
    }
    if (kind == K_BYTES) {
        return PyBytes_FromStringAndSize(start, (Py_ssize_t)n);
    }
    /* Records: a view of the frame, one memoryview per decode as in the pure decoder. */
    if (c->view == NULL) {
        c->view = PyMemoryView_FromObject(c->buf_obj);
        if (c->view == NULL) {
            return NULL;
        }
        c->own_view = 1;
    }
    return PySequence_GetSlice(c->view, (Py_ssize_t)pos, (Py_ssize_t)(pos + n));
}

/* Whether the tuple's items can hold references to GC objects (then it stays GC-tracked). */
static inline int
holds_containers(int kind)
{
    return kind == K_STRUCT || kind == K_RECORDS || kind == K_UUID;
}

static PyObject *
decode_array(const Op *op, Ctx *c, pos_t *pos_io)
{
    pos_t pos = *pos_io;
    int64_t n;
    if (read_length(c, op, &pos, &n) < 0) {
        return NULL;
    }
    if (n < 0) {
        *pos_io = pos;
        return Py_NewRef(Py_None);
    }
    /* Each element takes at least ``width`` bytes; zero-width ones (an empty struct) are
     * bounded by the buffer, as in _decode_array(). n is below 2**35: no overflow. */
    if (op->width ? n * op->width > c->end - pos : n > c->end - c->base) {
        return fail("array runs past the end");
    }
    PyObject *items = PyTuple_New((Py_ssize_t)n);
    if (items == NULL) {
        return NULL;
    }
    /* Out of the GC while some items are NULL (see kafkawire.records._accel); tuples of ints,
     * floats, strings and bytes stay out, as CPython's collector would leave them. */
    int retrack = n > 0 && PyObject_GC_IsTracked(items);
    if (retrack) {
        PyObject_GC_UnTrack(items);
        retrack = holds_containers(op->kind);
    }
    if (op->kind <= K_FLOAT64) {
        int width = fixed_width[op->kind];
        for (Py_ssize_t i = 0; i < (Py_ssize_t)n; i++) {
            PyObject *value = fixed_value(op->kind, c->buf + pos);
            if (value == NULL) {
                Py_DECREF(items);
                return NULL;
            }
            PyTuple_SET_ITEM(items, i, value);
            pos += width;
        }
    }
    else {
        Op element = *op;
        element.flags &= ~(F_ARRAY | F_NULLABLE);
        for (Py_ssize_t i = 0; i < (Py_ssize_t)n; i++) {
            PyObject *value = decode_value(&element, c, &pos);
            if (value == NULL) {
                Py_DECREF(items);
                return NULL;
            }
            PyTuple_SET_ITEM(items, i, value);
        }
    }
    if (retrack) {
        PyObject_GC_Track(items);
    }
    *pos_io = pos;
    return items;
}

static PyObject *
decode_value(const Op *op, Ctx *c, pos_t *pos_io)
{
    if (op->flags & F_ARRAY) {
        return decode_array(op, c, pos_io);
    }
    pos_t pos = *pos_io;
    PyObject *value;
    switch (op->kind) {
    case K_STRING:
    case K_BYTES:
    case K_RECORDS: {
        int64_t n;
        if (read_length(c, op, &pos, &n) < 0) {
            return NULL;
        }
        if (n < 0) {
            value = Py_NewRef(Py_None);
            break;
        }
        if (n > c->end - pos) {
            return fail("value runs past the end");
        }
        value = slice_value(op->kind, c, pos, n);
        pos += n;
        break;
    }
    case K_UUID:
        if (c->end - pos < 16) {
            return fail("a uuid needs 16 bytes");
        }
        value = uuid_value(c->buf + pos);
        pos += 16;
        break;
    case K_VARINT:
        value = read_zigzag(c, &pos, 5);
        break;
    case K_VARLONG:
        value = read_zigzag(c, &pos, 10);
        break;
    case K_STRUCT:
        if (op->flags & F_NULLABLE) {
            /* A marker byte: 128 and above (-1) for null, anything else for present. */
            if (pos >= c->end) {
                return fail("struct marker past the end");
            }
            pos += 1;
            if (c->buf[pos - 1] >= 128) {
                value = Py_NewRef(Py_None);
                break;
            }
        }
        value = decode_struct(op->nested, c, &pos);
        break;
    default:
        if (c->end - pos < fixed_width[op->kind]) {
            return fail("value runs past the end");
        }
        value = fixed_value(op->kind, c->buf + pos);
        pos += fixed_width[op->kind];
    }
    if (value != NULL) {
        *pos_io = pos;
    }
    return value;
}

/* The tagged-field section (see _decode_tags()); 0, or -1 with an error. */
static int
decode_tags(const Decoder *d, PyObject *obj, Ctx *c, pos_t *pos_io)
{
    pos_t pos = *pos_io;
    const Op *tagged = d->ops + d->n_fields;
    for (Py_ssize_t i = 0; i < d->n_tagged; i++) {
        SLOT(obj, tagged[i].offset) = Py_NewRef(tagged[i].dflt);
    }
    PyObject *unknown = NULL; /* a list, made at the first unknown tag */
    uint64_t count = 0;
    if (read_uvarint(c, &pos, 5, &count, NULL) < 0) {
        return -1;
    }
    if ((pos_t)count * 2 > c->end - pos) {
        fail("tagged fields cannot fit");
        return -1;
    }
    for (uint64_t k = 0; k < count; k++) {
        uint64_t tag, n;
        if (read_uvarint(c, &pos, 5, &tag, NULL) < 0 || read_uvarint(c, &pos, 5, &n, NULL) < 0) {
            goto error;
        }
        if ((pos_t)n > c->end - pos) {
            fail("tagged field runs past the end");
            goto error;
        }
        const Op *op = NULL;
        for (Py_ssize_t i = 0; i < d->n_tagged; i++) {
            if ((uint64_t)tagged[i].tag == tag) {
                op = tagged + i;
                break;
            }
        }
        if (op != NULL) {
            /* Decoded from exactly its own bytes, as the pure decoder decodes a copy of them. */
            pos_t end = c->end, base = c->base, at = pos;
            c->end = pos + (pos_t)n;
            c->base = pos;
            PyObject *value = decode_value(op, c, &at);
            c->end = end;
            c->base = base;
            if (value == NULL) {
                goto error;
            }
            if (at != pos + (pos_t)n) {
                Py_DECREF(value);
                fail("tagged field has bytes left over");
                goto error;
            }
            Py_SETREF(SLOT(obj, op->offset), value);
        }
        else {
            if (unknown == NULL && (unknown = PyList_New(0)) == NULL) {
                goto error;
            }
            PyObject *pair = Py_BuildValue("(Ky#)", (unsigned long long)tag,
                                           (const char *)c->buf + pos, (Py_ssize_t)n);
            if (pair == NULL) {
                goto error;
            }
            int appended = PyList_Append(unknown, pair);
            Py_DECREF(pair);
            if (appended < 0) {
                goto error;
            }
        }
        pos += (pos_t)n;
    }
    PyObject *kept = unknown == NULL ? PyTuple_New(0) : PyList_AsTuple(unknown);
    Py_XDECREF(unknown);
    if (kept == NULL) {
        return -1;
    }
    SLOT(obj, d->unknown_offset) = kept;
    *pos_io = pos;
    return 0;
error:
    Py_XDECREF(unknown);
    return -1;
}

static PyObject *
decode_struct(const Decoder *d, Ctx *c, pos_t *pos_io)
{
    pos_t pos = *pos_io;
    /* Structs may take no bytes, so the input does not bound the depth; a plan nesting deeper
     * than the recursion limit gets the RecursionError the pure decoder would raise, rather
     * than overflowing the C stack. */
    if (Py_EnterRecursiveCall(" while decoding a nested struct")) {
        return NULL;
    }
    PyObject *obj = d->cls->tp_alloc(d->cls, 0); /* zero-filled: safe to release half-filled */
    if (obj == NULL) {
        Py_LeaveRecursiveCall();
        return NULL;
    }
    /* Out of the GC until filled, so that no collector callback meets it half-built. */
    int retrack = PyObject_GC_IsTracked(obj);
    if (retrack) {
        PyObject_GC_UnTrack(obj);
    }
    for (Py_ssize_t i = 0; i < d->n_fields; i++) {
        PyObject *value = decode_value(d->ops + i, c, &pos);
        if (value == NULL) {
            goto error;
        }
        SLOT(obj, d->ops[i].offset) = value;
    }
    if (d->flexible && decode_tags(d, obj, c, &pos) < 0) {
        goto error;
    }
    if (retrack) {
        PyObject_GC_Track(obj);
    }
    Py_LeaveRecursiveCall();
    *pos_io = pos;
    return obj;
error:
    Py_LeaveRecursiveCall();
    if (retrack) {
        PyObject_GC_Track(obj); /* as its deallocator expects */
    }
    Py_DECREF(obj);
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Calling a Decoder: decode_from(buf, pos[, view]) -> (obj, pos)
 */

static PyObject *
run(Decoder *d, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (uuid_type == NULL) {
        return fail("setup() was not called");
    }
    if ((kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) || nargs < 2 ||
        nargs > 2 + d->holds_records) {
        return fail("arguments the compiled decoder does not take");
    }
    PyObject *buf = args[0];
    if (!PyBytes_CheckExact(buf) || !PyLong_CheckExact(args[1])) {
        return fail("only bytes and an int position"); /* slices of others differ in type */
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[1]);
    if (start < 0 || start > PyBytes_GET_SIZE(buf)) {
        return fail("position outside the buffer");
    }
    Ctx c = {(const unsigned char *)PyBytes_AS_STRING(buf), buf, NULL, 0,
             PyBytes_GET_SIZE(buf), 0};
    if (nargs == 3 && args[2] != Py_None) {
        if (!PyMemoryView_Check(args[2])) {
            return fail("view is not a memoryview");
        }
        c.view = args[2];
    }
    pos_t pos = start;
    PyObject *obj = decode_struct(d, &c, &pos);
    if (c.own_view) {
        Py_DECREF(c.view);
    }
    if (obj == NULL) {
        return NULL;
    }
    PyObject *result = Py_BuildValue("(NL)", obj, (long long)pos);
    return result;
}

static PyObject *
decoder_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Decoder *d = (Decoder *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *result = run(d, args, nargs, kwnames);
    /* Only errors of the input: KeyboardInterrupt and the like must reach the caller. */
    if (result == NULL && d->fallback != NULL && PyErr_ExceptionMatches(PyExc_Exception)) {
        PyErr_Clear();
        result = PyObject_Vectorcall(d->fallback, args, (size_t)nargs, kwnames);
    }
    return result;
}

static PyObject *
decoder_raw(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return run((Decoder *)self, args, nargs, kwnames);
}

/* ------------------------------------------------------------------------------------------
 * Building a Decoder: Decoder(cls, fields, tagged, flexible, holds_records, fallback)
 */

/* The offset of ``cls.name``'s object slot, checked to lie inside an instance; -1 with a
 * TypeError otherwise. */
static Py_ssize_t
slot_offset(PyTypeObject *cls, PyObject *name)
{
    PyObject *descr = PyUnicode_Check(name) ? PyObject_GetAttr((PyObject *)cls, name) : NULL;
    if (descr == NULL) {
        PyErr_Clear();
        descr = Py_NewRef(Py_None);
    }
    Py_ssize_t offset = -1;
    if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDescrObject *member = (PyMemberDescrObject *)descr;
        PyMemberDef *def = member->d_member;
        if (member->d_common.d_type == cls && def->type == Py_T_OBJECT_EX &&
            def->offset >= (Py_ssize_t)sizeof(PyObject) &&
            def->offset + (Py_ssize_t)sizeof(PyObject *) <= cls->tp_basicsize &&
            (def->offset - (Py_ssize_t)sizeof(PyObject)) % (Py_ssize_t)sizeof(PyObject *) == 0) {
            offset = def->offset;
        }
    }
    Py_DECREF(descr);
    if (offset < 0) {
        PyErr_Format(PyExc_TypeError, "%.100s.%R is not an object slot", cls->tp_name, name);
    }
    return offset;
}

/* Whether every base of ``cls`` up to object holds nothing: each a class statement's type (same
 * deallocator as ``cls``) with an empty __slots__, as the generated RequestMessage and
 * ResponseMessage are. Then the instance's slots are all ``cls``'s own, and releasing an object
 * clears exactly them. */
static int
bases_hold_nothing(PyTypeObject *cls)
{
    for (PyTypeObject *base = cls->tp_base; base != &PyBaseObject_Type; base = base->tp_base) {
        if (base == NULL || !PyType_HasFeature(base, Py_TPFLAGS_HEAPTYPE) ||
            base->tp_dealloc != cls->tp_dealloc ||
            base->tp_basicsize != (Py_ssize_t)sizeof(PyObject) || base->tp_itemsize != 0 ||
            base->tp_dictoffset != 0 || base->tp_weaklistoffset != 0) {
            return 0;
        }
    }
    return 1;
}

/* One op from (name, kind, flags, width, nested) or, tagged, (..., tag, default). */
static int
parse_op(PyTypeObject *cls, PyObject *item, int is_tagged, Op *op)
{
    PyObject *name, *nested, *dflt = NULL;
    long long tag = -1, width;
    if (!PyTuple_Check(item) ||
        !PyArg_ParseTuple(item, is_tagged ? "OiiLOLO;a tagged field" : "OiiLO;a field", &name,
                          &op->kind, &op->flags, &width, &nested, &tag, &dflt)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "a field must be a tuple");
        }
        return -1;
    }
    if (op->kind < 0 || op->kind >= K_KINDS || (op->flags & ~F_ALL) || width < 0 ||
        width > MAX_WIDTH || (is_tagged && tag < 0)) {
        PyErr_SetString(PyExc_TypeError, "a field's kind, flags, width or tag is out of range");
        return -1;
    }
    if ((op->kind == K_STRUCT) != (nested != Py_None) ||
        (nested != Py_None && !Py_IS_TYPE(nested, &DecoderType))) {
        PyErr_SetString(PyExc_TypeError, "a struct field needs its Decoder, and only it");
        return -1;
    }
    if ((op->flags & F_ARRAY) && op->kind <= K_FLOAT64 && width != fixed_width[op->kind]) {
        PyErr_SetString(PyExc_TypeError, "an array of fixed-width values has their width");
        return -1;
    }
    if ((op->offset = slot_offset(cls, name)) < 0) {
        return -1;
    }
    op->width = width;
    op->tag = tag;
    op->nested = nested == Py_None ? NULL : (Decoder *)Py_NewRef(nested);
    op->dflt = Py_XNewRef(dflt);
    return 0;
}

static void
decoder_dealloc(PyObject *self)
{
    Decoder *d = (Decoder *)self;
    if (d->ops != NULL) {
        for (Py_ssize_t i = 0; i < d->n_fields + d->n_tagged; i++) {
            Py_XDECREF(d->ops[i].nested);
            Py_XDECREF(d->ops[i].dflt);
        }
        PyMem_Free(d->ops);
    }
    Py_XDECREF(d->cls);
    Py_XDECREF(d->fallback);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
decoder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"cls", "fields", "tagged", "flexible", "holds_records", "fallback",
                             NULL};
    PyTypeObject *cls;
    PyObject *fields, *tagged, *fallback;
    int flexible, holds_records;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!O!ppO:Decoder", kwlist, &PyType_Type,
                                     &cls, &PyTuple_Type, &fields, &PyTuple_Type, &tagged,
                                     &flexible, &holds_records, &fallback)) {
        return NULL;
    }
    if (fallback != Py_None && !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "fallback must be callable or None");
        return NULL;
    }
    Py_ssize_t n_fields = PyTuple_GET_SIZE(fields), n_tagged = PyTuple_GET_SIZE(tagged);
    if (n_tagged > 0 && !flexible) {
        PyErr_SetString(PyExc_TypeError, "only flexible classes have tagged fields");
        return NULL;
    }
    Py_ssize_t n_slots = n_fields + n_tagged + flexible;
    /* Nothing but those slots after the object header (no __dict__, no __weakref__), in a
     * heap type whose deallocator clears them, so that every slot is written exactly once. */
    if (!PyType_HasFeature(cls, Py_TPFLAGS_HEAPTYPE) || !bases_hold_nothing(cls) ||
        cls->tp_itemsize != 0 || cls->tp_dictoffset != 0 || cls->tp_weaklistoffset != 0 ||
        cls->tp_alloc == NULL ||
        cls->tp_basicsize != (Py_ssize_t)(sizeof(PyObject) + n_slots * sizeof(PyObject *))) {
        PyErr_Format(PyExc_TypeError, "%.100s does not have the slot layout _accel expects",
                     cls->tp_name);
        return NULL;
    }
    Decoder *d = (Decoder *)type->tp_alloc(type, 0);
    if (d == NULL) {
        return NULL;
    }
    d->vectorcall = decoder_vectorcall;
    d->cls = (PyTypeObject *)Py_NewRef(cls);
    d->fallback = fallback == Py_None ? NULL : Py_NewRef(fallback);
    d->flexible = flexible;
    d->holds_records = holds_records;
    d->ops = PyMem_Calloc((size_t)(n_fields + n_tagged) + 1, sizeof(Op));
    if (d->ops == NULL) {
        PyErr_NoMemory();
        goto error;
    }
    for (Py_ssize_t i = 0; i < n_fields + n_tagged; i++) {
        int is_tagged = i >= n_fields;
        PyObject *item = PyTuple_GET_ITEM(is_tagged ? tagged : fields, i - is_tagged * n_fields);
        if (parse_op(cls, item, is_tagged, d->ops + i) < 0) {
            goto error;
        }
        /* Counted as parsed, so that dealloc releases what the op holds. */
        if (is_tagged) {
            d->n_tagged++;
        }
        else {
            d->n_fields++;
        }
    }
    if (flexible) {
        PyObject *name = PyUnicode_FromString("unknown_tagged_fields");
        d->unknown_offset = name == NULL ? -1 : slot_offset(cls, name);
        Py_XDECREF(name);
        if (d->unknown_offset < 0) {
            goto error;
        }
    }
    /* Distinct offsets: with n_slots of them inside the instance, every slot is filled. */
    for (Py_ssize_t i = 0; i < n_slots; i++) {
        Py_ssize_t a = i < n_fields + n_tagged ? d->ops[i].offset : d->unknown_offset;
        for (Py_ssize_t j = 0; j < i; j++) {
            if (d->ops[j].offset == a) {
                PyErr_Format(PyExc_TypeError, "%.100s: two fields share a slot", cls->tp_name);
                goto error;
            }
        }
    }
    return (PyObject *)d;
error:
    Py_DECREF(d);
    return NULL;
}

static PyMethodDef decoder_methods[] = {
    {"raw", (PyCFunction)(void (*)(void))decoder_raw, METH_FASTCALL | METH_KEYWORDS,
     "raw(buf, pos[, view])\n--\n\n"
     "Decode without falling back to the pure decoder: bad input raises ValueError."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject DecoderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafkawire.protocol._accel.Decoder",
    .tp_basicsize = sizeof(Decoder),
    .tp_dealloc = decoder_dealloc,
    .tp_vectorcall_offset = offsetof(Decoder, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Decoder(cls, fields, tagged, flexible, holds_records, fallback)\n--\n\n"
              "The compiled decode_from() of one message class.",
    .tp_methods = decoder_methods,
    .tp_new = decoder_new,
};

/* ------------------------------------------------------------------------------------------
 * Set-up: the UUID class and the plan version
 */

static PyObject *
setup(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyTypeObject *type;
    PyObject *safe;
    int version;
    if (!PyArg_ParseTuple(args, "O!Oi:setup", &PyType_Type, &type, &safe, &version)) {
        return NULL;
    }
    if (version != PLAN_VERSION) {
        PyErr_Format(PyExc_TypeError, "plan version %d, built for %d", version, PLAN_VERSION);
        return NULL;
    }
    PyObject *int_name = PyUnicode_FromString("int");
    PyObject *safe_name = PyUnicode_FromString("is_safe");
    Py_ssize_t int_offset = int_name ? slot_offset(type, int_name) : -1;
    Py_ssize_t safe_offset = int_offset >= 0 && safe_name ? slot_offset(type, safe_name) : -1;
    Py_XDECREF(int_name);
    Py_XDECREF(safe_name);
    if (safe_offset < 0) {
        return NULL;
    }
    if (int_offset == safe_offset || !PyType_HasFeature(type, Py_TPFLAGS_HEAPTYPE) ||
        type->tp_alloc == NULL || type->tp_itemsize != 0) {
        PyErr_SetString(PyExc_TypeError, "the UUID class does not have the expected slots");
        return NULL;
    }
    /* Replaced before the old ones are released (which may run Python code). */
    PyObject *old_type = (PyObject *)uuid_type, *old_safe = uuid_safe;
    uuid_int_offset = int_offset;
    uuid_safe_offset = safe_offset;
    uuid_type = (PyTypeObject *)Py_NewRef(type);
    uuid_safe = Py_NewRef(safe);
    Py_XDECREF(old_type);
    Py_XDECREF(old_safe);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"setup", (PyCFunction)setup, METH_VARARGS,
     "setup(uuid_class, safe_unknown, plan_version)\n--\n\n"
     "The UUID class uuid fields are built as; checks its slots and the plan version."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "kafkawire.protocol._accel",
    "The message-body decoders of kafkawire.protocol.codec, compiled.",
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
    if (PyType_Ready(&DecoderType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "Decoder", (PyObject *)&DecoderType) < 0 ||
        PyModule_AddIntConstant(m, "PLAN_VERSION", PLAN_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
