/* Columns of nullable byte strings, as kafkawire.records.columns hands them to C.
 *
 * Shared by the compiled extensions that read a column of keys or values a record at a time
 * (kafkawire.records._accel, kafkawire.producer._accel). A column arrives as a pair
 * (kind, payload), made by kafkawire.records.columns.column():
 *
 * - (0, None): every item is None;
 * - (1, a list or tuple): each item bytes or None;
 * - (2, (validity, offsets, data, offset, length, wide)): an Arrow binary or string array's
 *   buffers: the validity bitmap (or None: no nulls), the offsets (int32, or int64 when
 *   ``wide``), the data, and the array's offset and length within them. Every offset the
 *   array uses is checked against the data's length when the column is opened, so reading an
 *   item never reads outside the buffers.
 *
 * Items are read by index, 0 <= index < column length (the caller checks the index).
 */
#ifndef KAFKAWIRE_COLUMNS_H
#define KAFKAWIRE_COLUMNS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

enum { COLUMN_NONE = 0, COLUMN_SEQUENCE = 1, COLUMN_ARROW = 2 };

typedef struct {
    int kind;
    Py_ssize_t length;
    PyObject *items; /* COLUMN_SEQUENCE: a list or tuple (a strong reference) */
    /* COLUMN_ARROW */
    Py_buffer validity, offsets, data;
    int has_validity, has_offsets, has_data, wide;
    Py_ssize_t offset;
} Column;

static void
column_close(Column *column)
{
    if (column->has_validity) {
        PyBuffer_Release(&column->validity);
    }
    if (column->has_offsets) {
        PyBuffer_Release(&column->offsets);
    }
    if (column->has_data) {
        PyBuffer_Release(&column->data);
    }
    Py_CLEAR(column->items);
    column->has_validity = column->has_offsets = column->has_data = 0;
}

static inline int64_t
column_offset_at(const Column *column, Py_ssize_t at)
{
    return column->wide ? ((const int64_t *)column->offsets.buf)[at]
                        : (int64_t)((const int32_t *)column->offsets.buf)[at];
}

/* Open ``spec`` ((kind, payload), see above) named ``what`` in errors, of ``length`` items
 * (-1: whatever it holds; the length is then column->length). 0, or -1 with an error. */
static int
column_open(Column *column, PyObject *spec, const char *what, Py_ssize_t length)
{
    memset(column, 0, sizeof(*column));
    long kind;
    PyObject *payload;
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 2 ||
        ((kind = PyLong_AsLong(PyTuple_GET_ITEM(spec, 0))) == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: not a column", what);
        return -1;
    }
    payload = PyTuple_GET_ITEM(spec, 1);
    column->kind = (int)kind;
    if (kind == COLUMN_NONE) {
        column->length = length;
        return 0;
    }
    if (kind == COLUMN_SEQUENCE) {
        if (!PyList_Check(payload) && !PyTuple_Check(payload)) {
            PyErr_Format(PyExc_TypeError, "%s must be a list or tuple", what);
            return -1;
        }
        column->items = Py_NewRef(payload);
        column->length = PySequence_Fast_GET_SIZE(payload);
    }
    else if (kind == COLUMN_ARROW) {
        PyObject *validity, *offsets, *data;
        Py_ssize_t offset, count;
        int wide;
        if (!PyArg_ParseTuple(payload, "OOOnnp", &validity, &offsets, &data, &offset, &count,
                              &wide)) {
            return -1;
        }
        column->wide = wide;
        column->offset = offset;
        column->length = count;
        if (validity != Py_None) {
            if (PyObject_GetBuffer(validity, &column->validity, PyBUF_SIMPLE) < 0) {
                goto error;
            }
            column->has_validity = 1;
        }
        if (PyObject_GetBuffer(offsets, &column->offsets, PyBUF_SIMPLE) < 0) {
            goto error;
        }
        column->has_offsets = 1;
        if (PyObject_GetBuffer(data, &column->data, PyBUF_SIMPLE) < 0) {
            goto error;
        }
        column->has_data = 1;
        Py_ssize_t width = wide ? 8 : 4;
        if (offset < 0 || count < 0 || offset > PY_SSIZE_T_MAX / 2 - count ||
            (offset + count + 1) > column->offsets.len / width ||
            (column->has_validity && (offset + count + 7) / 8 > column->validity.len)) {
            PyErr_Format(PyExc_ValueError, "%s: the Arrow buffers are shorter than the array",
                         what);
            goto error;
        }
        /* Offsets never decrease and stay within the data: checked once here, so that
         * column_get() can trust them. */
        int64_t previous = column_offset_at(column, offset);
        if (previous < 0) {
            goto bad_offsets;
        }
        for (Py_ssize_t i = offset + 1; i <= offset + count; i++) {
            int64_t next = column_offset_at(column, i);
            if (next < previous) {
                goto bad_offsets;
            }
            previous = next;
        }
        if (previous > (int64_t)column->data.len) {
            goto bad_offsets;
        }
    }
    else {
        PyErr_Format(PyExc_TypeError, "%s: not a column (kind %ld)", what, kind);
        return -1;
    }
    if (length >= 0 && column->length != length) {
        PyErr_Format(PyExc_ValueError, "%s has %zd items, not %zd", what, column->length, length);
        goto error;
    }
    return 0;
bad_offsets:
    PyErr_Format(PyExc_ValueError, "%s: the Arrow offsets are not within the data", what);
error:
    column_close(column);
    return -1;
}

/* Item ``index``: 1 with its bytes in *data and *size, 0 for None, -1 with a TypeError
 * (``what``[index] is neither bytes nor None). */
static inline int
column_get(const Column *column, Py_ssize_t index, const char *what, const char **data,
           Py_ssize_t *size)
{
    if (column->kind == COLUMN_SEQUENCE) {
        PyObject *item = PySequence_Fast_GET_ITEM(column->items, index);
        if (item == Py_None) {
            return 0;
        }
        if (!PyBytes_CheckExact(item)) {
            PyErr_Format(PyExc_TypeError, "%s[%zd] must be bytes or None, not %.100s", what,
                         index, Py_TYPE(item)->tp_name);
            return -1;
        }
        *data = PyBytes_AS_STRING(item);
        *size = PyBytes_GET_SIZE(item);
        return 1;
    }
    if (column->kind == COLUMN_ARROW) {
        Py_ssize_t at = column->offset + index;
        if (column->has_validity &&
            !((((const unsigned char *)column->validity.buf)[at >> 3] >> (at & 7)) & 1)) {
            return 0;
        }
        int64_t start = column_offset_at(column, at);
        *data = (const char *)column->data.buf + start;
        *size = (Py_ssize_t)(column_offset_at(column, at + 1) - start);
        return 1;
    }
    return 0;
}

#endif
