/* kafkawire.producer._accel: the producer's per-record steps, in C.
 *
 * Optional: the build compiles it when it can (see hatch_build.py at the repository root), and
 * kafkawire.producer falls back to its pure-Python twins (kafkawire.producer._pure) when it is
 * missing or when KAFKAWIRE_NO_EXTENSIONS is set. Each function here gives exactly what its
 * twin gives, errors included.
 *
 * - murmur2(data), partition_for_key(key, count): Kafka's hash of a key (Java's
 *   Utils.murmur2) and the partition Java's BuiltInPartitioner.partitionForKey picks with it.
 * - key_partitions(keys, count): partition_for_key of every key of a column (see
 *   _columns.h; -1 for None), as an array of int32, and group_by_partition(partitions,
 *   count): the record indexes grouped by partition, for Producer.send_batch.
 * - append(builder, future, key, value): stamp a record with the wall clock's milliseconds,
 *   append it to a batch builder (its append method, called as Python calls it), and return
 *   its Delivery. The Delivery is built as the record decoders build records, without
 *   __init__: allocated for the class and its slots written at the offsets of the class's
 *   member descriptors, which setup() looks up and checks once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <time.h>

#include "../_columns.h"

#ifndef Py_T_OBJECT_EX
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

enum { D_FUTURE, D_OFFSET, D_TIMESTAMP, D_KEY_SIZE, D_VALUE_SIZE, D_FIELDS };

static const char *const delivery_fields[D_FIELDS] = {"_future", "_offset", "_timestamp",
                                                      "_key_size", "_value_size"};
static PyTypeObject *delivery_type = NULL;
static Py_ssize_t delivery_offsets[D_FIELDS];
static PyObject *kw_timestamp = NULL; /* ("timestamp",), the builder's append's keyword */
static PyObject *name_append = NULL;  /* "append" */

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* ------------------------------------------------------------------------------------------
 * murmur2
 */

static uint32_t
murmur2_of(const unsigned char *data, Py_ssize_t length)
{
    const uint32_t m = 0x5bd1e995;
    uint32_t h = 0x9747b28cu ^ (uint32_t)length;
    Py_ssize_t whole = length & ~(Py_ssize_t)3;
    for (Py_ssize_t i = 0; i < whole; i += 4) {
        uint32_t k = (uint32_t)data[i] | ((uint32_t)data[i + 1] << 8) |
                     ((uint32_t)data[i + 2] << 16) | ((uint32_t)data[i + 3] << 24);
        k *= m;
        k ^= k >> 24;
        k *= m;
        h *= m;
        h ^= k;
    }
    switch (length & 3) {
    case 3:
        h ^= (uint32_t)data[whole + 2] << 16;
        /* fall through */
    case 2:
        h ^= (uint32_t)data[whole + 1] << 8;
        /* fall through */
    case 1:
        h ^= (uint32_t)data[whole];
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

/* The murmur2 of a bytes-like ``obj``; -1 with a TypeError otherwise. */
static int
hash_of(PyObject *obj, uint32_t *out)
{
    if (PyBytes_CheckExact(obj)) {
        *out = murmur2_of((const unsigned char *)PyBytes_AS_STRING(obj), PyBytes_GET_SIZE(obj));
        return 0;
    }
    Py_buffer view;
    if (!PyObject_CheckBuffer(obj) || PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "a key must be bytes-like, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    *out = murmur2_of(view.buf, view.len);
    PyBuffer_Release(&view);
    return 0;
}

static PyObject *
murmur2(PyObject *Py_UNUSED(module), PyObject *data)
{
    uint32_t hash;
    if (hash_of(data, &hash) < 0) {
        return NULL;
    }
    return PyLong_FromUnsignedLong(hash);
}

/* A partition count: an int of at least 1. */
static int
partition_count(PyObject *obj, long *out)
{
    long count = PyLong_AsLong(obj);
    if (count == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (count < 1) {
        PyErr_Format(PyExc_ValueError, "a topic has at least one partition, not %ld", count);
        return -1;
    }
    *out = count;
    return 0;
}

/* The partition count of a call ``name(first, partition_count)``; -1 with an error. */
static int
second_is_count(const char *name, PyObject *const *args, Py_ssize_t nargs, long *count)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "%s() takes 2 arguments (%zd given)", name, nargs);
        return -1;
    }
    return partition_count(args[1], count);
}

static PyObject *
partition_for_key(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    uint32_t hash;
    long count;
    if (second_is_count("partition_for_key", args, nargs, &count) < 0 ||
        hash_of(args[0], &hash) < 0) {
        return NULL;
    }
    return PyLong_FromLong((long)((hash & 0x7fffffffu) % (unsigned long)count));
}

static PyObject *
key_partitions(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    long count;
    if (second_is_count("key_partitions", args, nargs, &count) < 0) {
        return NULL;
    }
    Column keys;
    if (column_open(&keys, args[0], "keys", -1) < 0) {
        return NULL;
    }
    if (keys.length < 0) {
        column_close(&keys);
        PyErr_SetString(PyExc_TypeError, "keys: not a column of known length");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, keys.length * (Py_ssize_t)sizeof(int32_t));
    if (out == NULL) {
        column_close(&keys);
        return NULL;
    }
    int32_t *partitions = (int32_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < keys.length; i++) {
        const char *data;
        Py_ssize_t size;
        int found = column_get(&keys, i, "keys", &data, &size);
        if (found < 0) {
            Py_DECREF(out);
            column_close(&keys);
            return NULL;
        }
        partitions[i] = found ? (int32_t)((murmur2_of((const unsigned char *)data, size) &
                                           0x7fffffffu) %
                                          (unsigned long)count)
                              : -1;
    }
    column_close(&keys);
    return out;
}

static PyObject *
group_by_partition(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    long count;
    if (second_is_count("group_by_partition", args, nargs, &count) < 0) {
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    const int32_t *partitions = view.buf;
    Py_ssize_t n = view.len / (Py_ssize_t)sizeof(int32_t);
    PyObject *order = NULL, *bounds = NULL, *result = NULL;
    /* Counting sort, stable: group g holds the records of partition g, group count those
     * of -1 (no partition yet), each in their order. */
    Py_ssize_t *starts = PyMem_Calloc((size_t)count + 2, sizeof(Py_ssize_t));
    if (starts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t partition = partitions[i];
        if (partition < -1 || partition >= count) {
            PyErr_Format(PyExc_ValueError, "record %zd: partition %d is not one of %ld", i,
                         (int)partition, count);
            goto done;
        }
        starts[(partition < 0 ? count : partition) + 1]++;
    }
    for (long g = 0; g <= count; g++) {
        starts[g + 1] += starts[g];
    }
    bounds = PyList_New(count + 2);
    if (bounds == NULL) {
        goto done;
    }
    for (long g = 0; g < count + 2; g++) {
        PyObject *bound = PyLong_FromSsize_t(starts[g]);
        if (bound == NULL) {
            goto done;
        }
        PyList_SET_ITEM(bounds, g, bound);
    }
    order = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int32_t));
    if (order == NULL) {
        goto done;
    }
    int32_t *out = (int32_t *)PyBytes_AS_STRING(order);
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t partition = partitions[i];
        out[starts[partition < 0 ? count : partition]++] = (int32_t)i;
    }
    result = PyTuple_Pack(2, order, bounds);
done:
    PyMem_Free(starts);
    Py_XDECREF(order);
    Py_XDECREF(bounds);
    PyBuffer_Release(&view);
    return result;
}

/* ------------------------------------------------------------------------------------------
 * append: one record into a batch builder, and its Delivery
 */

/* The wall clock in milliseconds since the epoch, as time.time_ns() // 1_000_000 (C11's
 * timespec_get, which both POSIX C libraries and MSVC's have). */
static PyObject *
now_ms(void)
{
    struct timespec now;
    if (timespec_get(&now, TIME_UTC) != TIME_UTC) {
        PyErr_SetString(PyExc_OSError, "timespec_get() failed");
        return NULL;
    }
    return PyLong_FromLongLong((long long)now.tv_sec * 1000 + now.tv_nsec / 1000000);
}

/* -1 for None, else the length of a bytes object (the caller passes bytes or None). */
static PyObject *
size_of(PyObject *data)
{
    if (data == Py_None) {
        return PyLong_FromLong(-1);
    }
    Py_ssize_t size = PyObject_Length(data);
    return size < 0 ? NULL : PyLong_FromSsize_t(size);
}

static PyObject *
append(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "append() takes 4 arguments (%zd given)", nargs);
        return NULL;
    }
    if (delivery_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "kafkawire.producer._accel.setup() was not called");
        return NULL;
    }
    PyObject *builder = args[0], *future = args[1], *key = args[2], *value = args[3];
    PyObject *timestamp = now_ms();
    if (timestamp == NULL) {
        return NULL;
    }
    /* builder.append(key, value, timestamp=timestamp), as a method call (no bound method) */
    PyObject *call_args[4] = {builder, key, value, timestamp};
    PyObject *offset = PyObject_VectorcallMethod(name_append, call_args,
                                                 3, kw_timestamp);
    if (offset == NULL) {
        Py_DECREF(timestamp);
        return NULL;
    }
    PyObject *key_size = size_of(key);
    PyObject *value_size = key_size == NULL ? NULL : size_of(value);
    PyObject *delivery = value_size == NULL ? NULL : delivery_type->tp_alloc(delivery_type, 0);
    if (delivery == NULL) {
        Py_DECREF(timestamp);
        Py_DECREF(offset);
        Py_XDECREF(key_size);
        Py_XDECREF(value_size);
        return NULL;
    }
    SLOT(delivery, delivery_offsets[D_FUTURE]) = Py_NewRef(future);
    SLOT(delivery, delivery_offsets[D_OFFSET]) = offset;
    SLOT(delivery, delivery_offsets[D_TIMESTAMP]) = timestamp;
    SLOT(delivery, delivery_offsets[D_KEY_SIZE]) = key_size;
    SLOT(delivery, delivery_offsets[D_VALUE_SIZE]) = value_size;
    return delivery;
}

/* ------------------------------------------------------------------------------------------
 * Set-up: the Delivery class, and the offsets of its slots
 */

static PyObject *
setup(PyObject *Py_UNUSED(module), PyObject *cls)
{
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "setup() needs the Delivery class");
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)cls;
    PyObject *slots = PyObject_GetAttrString(cls, "__slots__");
    Py_ssize_t n_slots = slots == NULL ? -1 : PyObject_Length(slots);
    Py_XDECREF(slots);
    if (n_slots < 0) {
        PyErr_Clear();
    }
    /* Nothing but the slots after the object header (no __dict__, no __weakref__): tp_alloc
     * then zero-fills every one, and the five writes fill them all. */
    if (n_slots != D_FIELDS || type->tp_base != &PyBaseObject_Type || type->tp_itemsize != 0 ||
        type->tp_dictoffset != 0 || type->tp_weaklistoffset != 0 ||
        type->tp_basicsize != (Py_ssize_t)(sizeof(PyObject) + D_FIELDS * sizeof(PyObject *))) {
        PyErr_Format(PyExc_TypeError, "%.100s does not have the slot layout _accel expects",
                     type->tp_name);
        return NULL;
    }
    Py_ssize_t offsets[D_FIELDS];
    for (int i = 0; i < D_FIELDS; i++) {
        PyObject *descr = PyObject_GetAttrString(cls, delivery_fields[i]);
        if (descr == NULL) {
            PyErr_Clear();
            descr = Py_NewRef(Py_None);
        }
        int ok = Py_IS_TYPE(descr, &PyMemberDescr_Type);
        if (ok) {
            PyMemberDef *def = ((PyMemberDescrObject *)descr)->d_member;
            ok = ((PyMemberDescrObject *)descr)->d_common.d_type == type &&
                 def->type == Py_T_OBJECT_EX && def->offset >= (Py_ssize_t)sizeof(PyObject) &&
                 def->offset + (Py_ssize_t)sizeof(PyObject *) <= type->tp_basicsize;
            offsets[i] = def->offset;
            for (int j = 0; ok && j < i; j++) {
                ok = offsets[j] != offsets[i];
            }
        }
        Py_DECREF(descr);
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "%.100s.%s is not an object slot", type->tp_name,
                         delivery_fields[i]);
            return NULL;
        }
    }
    PyObject *old = (PyObject *)delivery_type;
    memcpy(delivery_offsets, offsets, sizeof(offsets));
    delivery_type = (PyTypeObject *)Py_NewRef(cls);
    Py_XDECREF(old);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"setup", (PyCFunction)setup, METH_O,
     "setup(delivery_class)\n--\n\nThe class append() builds; checks its slot layout."},
    {"murmur2", (PyCFunction)murmur2, METH_O,
     "murmur2(data)\n--\n\nKafka's 32-bit murmur2 of data, as an unsigned int."},
    {"partition_for_key", (PyCFunction)(void (*)(void))partition_for_key, METH_FASTCALL,
     "partition_for_key(key, partition_count)\n--\n\nThe partition Kafka's Java client picks "
     "for key."},
    {"key_partitions", (PyCFunction)(void (*)(void))key_partitions, METH_FASTCALL,
     "key_partitions(keys, partition_count)\n--\n\npartition_for_key of each key (-1 for "
     "None), as int32 values."},
    {"group_by_partition", (PyCFunction)(void (*)(void))group_by_partition, METH_FASTCALL,
     "group_by_partition(partitions, partition_count)\n--\n\nRecord indexes grouped by "
     "partition (int32, stable; those of -1 last) and each group's bounds."},
    {"append", (PyCFunction)(void (*)(void))append, METH_FASTCALL,
     "append(builder, future, key, value)\n--\n\nAppend a record stamped now; its Delivery."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "kafkawire.producer._accel",
    "The producer's per-record steps, compiled.",
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
    PyObject *timestamp = PyUnicode_InternFromString("timestamp");
    kw_timestamp = timestamp == NULL ? NULL : PyTuple_Pack(1, timestamp);
    Py_XDECREF(timestamp);
    name_append = PyUnicode_InternFromString("append");
    if (kw_timestamp == NULL || name_append == NULL) {
        return NULL;
    }
    return PyModule_Create(&module);
}
