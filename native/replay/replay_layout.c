/* The program's layout into the replay pass's arrays (replay_engine.h), read straight
 * from the Python objects of src/mpi_overlap/predict/program.py (per rank a list of
 * Call, each with enter, exit, fn and ops, a list of (code, index) pairs). Taking them
 * one value at a time from Python cost more than the pass itself (docs/method.md,
 * "Speed"). Built only where the Python the package runs on has its headers
 * (CMakeLists.txt), and called through ctypes.PyDLL (the GIL held); native.py checks
 * that the library was built for its Python's version, and lays the program out
 * itself where this is absent or answers -1 (an object of another shape). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

int mop_replay_py_version(void) { return PY_VERSION_HEX; }

static PyObject *name_enter, *name_exit, *name_ops, *name_fn;

static int names(void)
{
    if (name_enter)
        return 0;
    name_enter = PyUnicode_InternFromString("enter");
    name_exit = PyUnicode_InternFromString("exit");
    name_ops = PyUnicode_InternFromString("ops");
    name_fn = PyUnicode_InternFromString("fn");
    return name_enter && name_exit && name_ops && name_fn ? 0 : -1;
}

static int as_double(PyObject *obj, PyObject *name, double *out)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (!v)
        return -1;
    *out = PyFloat_AsDouble(v);
    Py_DECREF(v);
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

/* Fill the per-call arrays (enter, exit, operations per call, function index: a new
 * function gets the next index in `fn_index`, a dict) and the per-operation ones, for
 * `ncalls` calls and up to `room` operations. Returns the number of operations
 * (more than `room` when they did not fit: the caller lays them out again with that
 * room), or -1 on another shape. */
int64_t mop_replay_layout(PyObject *calls, PyObject *fn_index, int64_t ncalls, int64_t room,
                      double *enter, double *exit, int64_t *call_nops, int64_t *fn_id,
                      int32_t *op_code, int64_t *op_idx)
{
    if (names() || !PyList_Check(calls) || !PyDict_Check(fn_index))
        goto fail;
    int64_t c = 0, o = 0;
    for (Py_ssize_t r = 0; r < PyList_GET_SIZE(calls); r++) {
        PyObject *cs = PyList_GET_ITEM(calls, r);
        if (!PyList_Check(cs))
            goto fail;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(cs); i++, c++) {
            PyObject *call = PyList_GET_ITEM(cs, i);
            if (c >= ncalls || as_double(call, name_enter, &enter[c])
                || as_double(call, name_exit, &exit[c]))
                goto fail;
            PyObject *fn = PyObject_GetAttr(call, name_fn);
            if (!fn)
                goto fail;
            PyObject *id = PyDict_GetItemWithError(fn_index, fn);
            if (!id) {
                if (PyErr_Occurred()) {
                    Py_DECREF(fn);
                    goto fail;
                }
                id = PyLong_FromSsize_t(PyDict_GET_SIZE(fn_index));
                int bad = !id || PyDict_SetItem(fn_index, fn, id);
                Py_XDECREF(id);  /* the dict holds it */
                if (bad) {
                    Py_DECREF(fn);
                    goto fail;
                }
            }
            Py_DECREF(fn);
            fn_id[c] = PyLong_AsLongLong(id);
            PyObject *ops = PyObject_GetAttr(call, name_ops);
            if (!ops)
                goto fail;
            PyObject *seq = PySequence_Fast(ops, "ops");
            Py_DECREF(ops);
            if (!seq)
                goto fail;
            Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
            call_nops[c] = n;
            for (Py_ssize_t k = 0; k < n; k++, o++) {
                PyObject *pair = PySequence_Fast_GET_ITEM(seq, k);
                if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
                    Py_DECREF(seq);
                    goto fail;
                }
                long long code = PyLong_AsLongLong(PyTuple_GET_ITEM(pair, 0));
                long long idx = PyLong_AsLongLong(PyTuple_GET_ITEM(pair, 1));
                if (PyErr_Occurred() || code < 0 || code > 8 || idx < 0) {
                    Py_DECREF(seq);
                    goto fail;
                }
                if (o < room) {
                    op_code[o] = (int32_t)code;
                    op_idx[o] = idx;
                }
            }
            Py_DECREF(seq);
        }
    }
    if (c != ncalls)
        goto fail;
    return o;
fail:
    PyErr_Clear();
    return -1;
}
