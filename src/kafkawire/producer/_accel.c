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
 * - SendPath: Producer.send()'s common case in one call (its rules: send_path.py, whose
 *   SendPathPure is its twin): checks, the partition, the room in the open batch and the
 *   append above. It reads and updates the producer's objects where they live (dicts, and
 *   the slots of ProducerBatch and BufferUse, found by setup_send_path()).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <time.h>

#include "../_columns.h"
#include "../_slots.h"

enum { D_FUTURE, D_OFFSET, D_TIMESTAMP, D_KEY_SIZE, D_VALUE_SIZE, D_FIELDS };

static const char *const delivery_fields[D_FIELDS] = {"_future", "_offset", "_timestamp",
                                                      "_key_size", "_value_size"};
static PyTypeObject *delivery_type = NULL;
static Py_ssize_t delivery_offsets[D_FIELDS];
static PyObject *kw_timestamp = NULL; /* ("timestamp",), the builder's append's keyword */
static PyObject *name_append = NULL;  /* "append" */
static PyObject *name_set = NULL;     /* "set" */

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

/* builder.append(key, value, timestamp=now), and the record's Delivery (setup() done). */
static PyObject *
append_record(PyObject *builder, PyObject *future, PyObject *key, PyObject *value)
{
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
    return append_record(args[0], args[1], args[2], args[3]);
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
    if (slot_offsets(type, delivery_fields, D_FIELDS, offsets) < 0) {
        return NULL;
    }
    PyObject *old = (PyObject *)delivery_type;
    memcpy(delivery_offsets, offsets, sizeof(offsets));
    delivery_type = (PyTypeObject *)Py_NewRef(cls);
    Py_XDECREF(old);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------------------
 * SendPath: Producer.send()'s common case (the rules: send_path.py)
 */

enum { B_MEMORY, B_BUILDER, B_FUTURE, B_FIELDS };

static const char *const batch_fields[B_FIELDS] = {"memory", "builder", "future"};
static const char *const use_fields[1] = {"used"};
static PyTypeObject *batch_type = NULL; /* ProducerBatch */
static Py_ssize_t batch_offsets[B_FIELDS];
static PyTypeObject *use_type = NULL; /* BufferUse: the accumulator's bytes in use */
static Py_ssize_t used_offset;
static PyObject *checked_partition = NULL; /* arguments.checked_partition */
static Py_ssize_t record_overhead;         /* batch.RECORD_OVERHEAD */

static PyObject *
setup_send_path(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *batch, *use, *checked;
    Py_ssize_t overhead;
    if (!PyArg_ParseTuple(args, "O!O!On:setup_send_path", &PyType_Type, &batch, &PyType_Type,
                          &use, &checked, &overhead)) {
        return NULL;
    }
    Py_ssize_t offsets[B_FIELDS], used;
    if (slot_offsets((PyTypeObject *)batch, batch_fields, B_FIELDS, offsets) < 0 ||
        slot_offsets((PyTypeObject *)use, use_fields, 1, &used) < 0) {
        return NULL;
    }
    memcpy(batch_offsets, offsets, sizeof(offsets));
    used_offset = used;
    record_overhead = overhead;
    Py_XSETREF(batch_type, (PyTypeObject *)Py_NewRef(batch));
    Py_XSETREF(use_type, (PyTypeObject *)Py_NewRef(use));
    Py_XSETREF(checked_partition, Py_NewRef(checked));
    Py_RETURN_NONE;
}

typedef struct {
    PyObject_HEAD
    PyObject *counts;    /* the producer's {topic: partition count} */
    PyObject *positions; /* StickyPartitioner's {topic: (partition, bytes so far)} */
    PyObject *open;      /* the accumulator's open batches, {topic: {partition: batch}} */
    PyObject *waiters;   /* the accumulator's sends waiting for room (a deque) */
    PyObject *wakeup;    /* the accumulator's asyncio.Event */
    PyObject *use;       /* the accumulator's BufferUse */
    PyObject *choose;    /* None, or the producer's call of a user's partitioner */
    Py_ssize_t sticky_size, batch_size, buffer_memory, max_record_size;
} SendPath;

/* ``owner.name``, which must be an exact ``type`` (NULL: any); a new reference. */
static PyObject *
part_of(PyObject *owner, const char *name, PyTypeObject *type)
{
    PyObject *found = PyObject_GetAttrString(owner, name);
    if (found != NULL && type != NULL && !Py_IS_TYPE(found, type)) {
        PyErr_Format(PyExc_TypeError, "SendPath: %.100s.%s is not a %.100s",
                     Py_TYPE(owner)->tp_name, name, type->tp_name);
        Py_CLEAR(found);
    }
    return found;
}

/* ``owner.name``, an int; -1 with an error. */
static Py_ssize_t
size_part_of(PyObject *owner, const char *name)
{
    PyObject *found = part_of(owner, name, &PyLong_Type);
    Py_ssize_t size = found == NULL ? -1 : PyLong_AsSsize_t(found);
    Py_XDECREF(found);
    return size;
}

static int
send_path_traverse(SendPath *self, visitproc visit, void *arg)
{
    Py_VISIT(self->counts);
    Py_VISIT(self->positions);
    Py_VISIT(self->open);
    Py_VISIT(self->waiters);
    Py_VISIT(self->wakeup);
    Py_VISIT(self->use);
    Py_VISIT(self->choose);
    return 0;
}

static int
send_path_clear(SendPath *self)
{
    Py_CLEAR(self->counts);
    Py_CLEAR(self->positions);
    Py_CLEAR(self->open);
    Py_CLEAR(self->waiters);
    Py_CLEAR(self->wakeup);
    Py_CLEAR(self->use);
    Py_CLEAR(self->choose);
    return 0;
}

static void
send_path_dealloc(SendPath *self)
{
    PyObject_GC_UnTrack(self);
    send_path_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* SendPath(accumulator, sticky, counts, max_record_size, choose), as SendPathPure's. */
static PyObject *
send_path_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"accumulator", "sticky", "counts", "max_record_size", "choose",
                               NULL};
    PyObject *accumulator, *sticky, *counts, *choose;
    Py_ssize_t max_record_size;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO!nO:SendPath", keywords, &accumulator,
                                     &sticky, &PyDict_Type, &counts, &max_record_size,
                                     &choose)) {
        return NULL;
    }
    if (batch_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "kafkawire.producer._accel.setup_send_path() was not called");
        return NULL;
    }
    SendPath *self = (SendPath *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->counts = Py_NewRef(counts);
    self->choose = Py_NewRef(choose);
    self->max_record_size = max_record_size;
    if ((self->positions = part_of(sticky, "_current", &PyDict_Type)) == NULL ||
        (self->open = part_of(accumulator, "_open", &PyDict_Type)) == NULL ||
        (self->waiters = part_of(accumulator, "_waiters", NULL)) == NULL ||
        (self->wakeup = part_of(accumulator, "wakeup", NULL)) == NULL ||
        (self->use = part_of(accumulator, "_memory", use_type)) == NULL ||
        (self->sticky_size = size_part_of(sticky, "_batch_size")) < 0 ||
        (self->batch_size = size_part_of(accumulator, "_batch_size")) < 0 ||
        (self->buffer_memory = size_part_of(accumulator, "_buffer_memory")) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* The int in an object slot: 1, or 0 when it is not an exact int that fits (the caller then
 * leaves the record to the full path); -1 with an error. */
static int
slot_size(PyObject *obj, Py_ssize_t offset, Py_ssize_t *out)
{
    PyObject *held = SLOT(obj, offset);
    if (held == NULL || !PyLong_CheckExact(held)) {
        return 0;
    }
    *out = PyLong_AsSsize_t(held);
    if (*out == -1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
            return -1;
        }
        PyErr_Clear();
        return 0;
    }
    return 1;
}

static int
set_slot_size(PyObject *obj, Py_ssize_t offset, Py_ssize_t size)
{
    PyObject *held = PyLong_FromSsize_t(size);
    if (held == NULL) {
        return -1;
    }
    Py_XSETREF(SLOT(obj, offset), held);
    return 0;
}

/* The partition of a record sent without one, as a new reference: a user's partitioner's
 * choice (*chosen then set), the key's, or the topic's sticky one while the record stays on
 * it (*position then holds the topic's (partition, bytes so far), a new reference). NULL with
 * an error, or without one when the sticky partition moves on (the full path's: it draws). */
static PyObject *
unchosen_partition(SendPath *self, PyObject *topic, PyObject *key, Py_ssize_t size,
                   long count, PyObject **position, int *chosen)
{
    if (self->choose != Py_None) {
        PyObject *size_obj = PyLong_FromSsize_t(size);
        PyObject *count_obj = size_obj == NULL ? NULL : PyLong_FromLong(count);
        PyObject *found = NULL;
        if (count_obj != NULL) {
            PyObject *call_args[4] = {topic, key, size_obj, count_obj};
            found = PyObject_Vectorcall(self->choose, call_args, 4, NULL);
        }
        Py_XDECREF(size_obj);
        Py_XDECREF(count_obj);
        *chosen = found != NULL;
        return found;
    }
    if (key != Py_None) {
        uint32_t hash = murmur2_of((const unsigned char *)PyBytes_AS_STRING(key),
                                   PyBytes_GET_SIZE(key));
        return PyLong_FromLong((long)((hash & 0x7fffffffu) % (unsigned long)count));
    }
    PyObject *now = PyDict_GetItemWithError(self->positions, topic);
    if (now == NULL || !PyTuple_CheckExact(now) || PyTuple_GET_SIZE(now) != 2) {
        return NULL; /* none yet (a move: the full path's), or an error */
    }
    PyObject *partition = PyTuple_GET_ITEM(now, 0);
    long at = PyLong_AsLong(partition);
    Py_ssize_t sent = PyLong_AsSsize_t(PyTuple_GET_ITEM(now, 1));
    if ((at == -1 || sent == -1) && PyErr_Occurred()) {
        return NULL;
    }
    if (at >= count || sent >= self->sticky_size) {
        return NULL; /* it moves on: the full path draws the next one */
    }
    *position = Py_NewRef(now);
    return Py_NewRef(partition);
}

/* A given partition, as a new reference: itself when it is an exact int of the topic's, else
 * what checked_partition() answers (or raises). */
static PyObject *
given_partition(PyObject *topic, PyObject *partition, long count)
{
    if (PyLong_CheckExact(partition)) {
        int overflow;
        long at = PyLong_AsLongAndOverflow(partition, &overflow);
        if (!overflow && at >= 0 && at < count) {
            return Py_NewRef(partition);
        }
    }
    PyObject *count_obj = PyLong_FromLong(count);
    if (count_obj == NULL) {
        return NULL;
    }
    PyObject *call_args[3] = {topic, partition, count_obj};
    PyObject *checked = PyObject_Vectorcall(checked_partition, call_args, 3, NULL);
    Py_DECREF(count_obj);
    return checked;
}

/* Append to ``batch`` (a ProducerBatch) if it and buffer_memory have room for ``size`` and
 * no send waits for room: the Delivery (*full set when the batch reached batch_size); else
 * NULL without an error (nothing changed). */
static PyObject *
append_if_room(SendPath *self, PyObject *batch, PyObject *key, PyObject *value, Py_ssize_t size,
               int *full)
{
    Py_ssize_t memory, used;
    int known = slot_size(batch, batch_offsets[B_MEMORY], &memory);
    if (known > 0) {
        known = slot_size(self->use, used_offset, &used);
    }
    if (known <= 0) {
        return NULL;
    }
    Py_ssize_t waiting = PyObject_Length(self->waiters);
    if (waiting < 0) {
        return NULL;
    }
    Py_ssize_t filled = memory + size;
    if (filled > self->batch_size || used + size > self->buffer_memory || waiting) {
        return NULL;
    }
    PyObject *builder = SLOT(batch, batch_offsets[B_BUILDER]);
    PyObject *future = SLOT(batch, batch_offsets[B_FUTURE]);
    if (builder == NULL || future == NULL) {
        return NULL;
    }
    PyObject *delivery = append_record(builder, future, key, value);
    if (delivery == NULL) {
        return NULL;
    }
    if (set_slot_size(batch, batch_offsets[B_MEMORY], filled) < 0 ||
        set_slot_size(self->use, used_offset, used + size) < 0) {
        Py_DECREF(delivery);
        return NULL;
    }
    *full = filled >= self->batch_size;
    return delivery;
}

/* send(topic, value, key, partition): the Delivery; or None, nothing changed (the full path
 * then takes the record); or, when a user's partitioner chose the partition and the record
 * could not be appended, that choice (the full path takes it: the partitioner is called once
 * per record). */
static PyObject *
send_path_send(SendPath *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "send() takes 4 arguments (%zd given)", nargs);
        return NULL;
    }
    PyObject *topic = args[0], *value = args[1], *key = args[2], *partition = args[3];
    if ((value != Py_None && !PyBytes_CheckExact(value)) ||
        (key != Py_None && !PyBytes_CheckExact(key))) {
        Py_RETURN_NONE;
    }
    PyObject *count_obj = PyDict_GetItemWithError(self->counts, topic);
    if (count_obj == NULL) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    long count = PyLong_AsLong(count_obj);
    if (count < 1) { /* none is stored (a count comes with the topic's partitions) */
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    Py_ssize_t size = record_overhead + (key == Py_None ? 0 : PyBytes_GET_SIZE(key)) +
                      (value == Py_None ? 0 : PyBytes_GET_SIZE(value));
    if (size > self->max_record_size) {
        Py_RETURN_NONE;
    }
    PyObject *position = NULL; /* the sticky (partition, bytes so far) the record stays on */
    int chosen = 0;
    PyObject *at = partition == Py_None
                       ? unchosen_partition(self, topic, key, size, count, &position, &chosen)
                       : given_partition(topic, partition, count);
    if (at == NULL) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    PyObject *delivery = NULL;
    int full = 0;
    PyObject *opened = Py_XNewRef(PyDict_GetItemWithError(self->open, topic));
    PyObject *batch = opened == NULL || !PyDict_CheckExact(opened)
                          ? NULL
                          : Py_XNewRef(PyDict_GetItemWithError(opened, at));
    Py_XDECREF(opened);
    if (batch != NULL && Py_IS_TYPE(batch, batch_type)) {
        delivery = append_if_room(self, batch, key, value, size, &full);
    }
    Py_XDECREF(batch);
    if (delivery != NULL && position != NULL) {
        /* counted once, now that it is appended: StickyPartitioner.add */
        Py_ssize_t sent = PyLong_AsSsize_t(PyTuple_GET_ITEM(position, 1));
        PyObject *sent_obj = PyLong_FromSsize_t(sent + size);
        PyObject *now = sent_obj == NULL ? NULL : PyTuple_Pack(2, at, sent_obj);
        Py_XDECREF(sent_obj);
        if (now == NULL || PyDict_SetItem(self->positions, topic, now) < 0) {
            Py_CLEAR(delivery);
        }
        Py_XDECREF(now);
    }
    Py_XDECREF(position);
    if (delivery != NULL && full) {
        /* as the accumulator does: the sender learns at once that the batch is full */
        PyObject *done = PyObject_CallMethodNoArgs(self->wakeup, name_set);
        Py_XDECREF(done);
        if (done == NULL) {
            Py_CLEAR(delivery);
        }
    }
    if (delivery != NULL || PyErr_Occurred()) {
        Py_DECREF(at);
        return delivery;
    }
    if (chosen) {
        return at;
    }
    Py_DECREF(at);
    Py_RETURN_NONE;
}

static PyMethodDef send_path_methods[] = {
    {"send", (PyCFunction)(void (*)(void))send_path_send, METH_FASTCALL,
     "send(topic, value, key, partition)\n--\n\n"
     "The record's Delivery, or None (nothing changed: the full path's), or a user's "
     "partitioner's choice for a record it could not append."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject send_path_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafkawire.producer._accel.SendPath",
    .tp_doc = "Producer.send()'s common case in one call (see send_path.py).",
    .tp_basicsize = sizeof(SendPath),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = send_path_new,
    .tp_dealloc = (destructor)send_path_dealloc,
    .tp_traverse = (traverseproc)send_path_traverse,
    .tp_clear = (inquiry)send_path_clear,
    .tp_methods = send_path_methods,
};

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
    {"setup_send_path", (PyCFunction)setup_send_path, METH_VARARGS,
     "setup_send_path(batch_class, use_class, checked_partition, record_overhead)\n--\n\n"
     "What SendPath reads: the batch's and the memory's slots, and send()'s partition check."},
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
    name_set = PyUnicode_InternFromString("set");
    if (kw_timestamp == NULL || name_append == NULL || name_set == NULL ||
        PyType_Ready(&send_path_type) < 0) {
        return NULL;
    }
    PyObject *module_object = PyModule_Create(&module);
    if (module_object != NULL &&
        PyModule_AddObjectRef(module_object, "SendPath", (PyObject *)&send_path_type) < 0) {
        Py_CLEAR(module_object);
    }
    return module_object;
}
