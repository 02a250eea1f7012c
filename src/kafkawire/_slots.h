/* The offsets of named object slots of a Python class, for C that reads and writes them in
 * place.
 *
 * Shared by the compiled extensions that build or update instances of Python classes with
 * __slots__ (kafkawire.records._accel: records and headers; kafkawire.producer._accel: the
 * Delivery, the batch and the buffer use).
 */
#ifndef KAFKAWIRE_SLOTS_H
#define KAFKAWIRE_SLOTS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#ifndef Py_T_OBJECT_EX /* its name before Python 3.12 */
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

/* The offsets of the object slots ``names`` of ``type``, each a slot of ``type`` itself,
 * within its instances and aligned; -1 with a TypeError naming the first that is not. They
 * are distinct, so that n writes fill n slots: a slot left unwritten would hold whatever the
 * allocator left there (a name rebound to another field's descriptor would do that, and
 * write one slot twice). */
static int
slot_offsets(PyTypeObject *type, const char *const *names, int n, Py_ssize_t *offsets)
{
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

#endif /* KAFKAWIRE_SLOTS_H */
