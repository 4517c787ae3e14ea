/*
 * _fastload_blobs.h: the compiled-vocabulary cache's arrays: lists of bytes or of strings as one blob and their offsets
 * (joined, cut), and lists of ints as one array (int_array).
 *
 * Included by _fastload.c (one translation unit, as _fastenc's parts are).
 */

#ifndef BPEPROOF_FASTLOAD_BLOBS_H
#define BPEPROOF_FASTLOAD_BLOBS_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <stdint.h>
#include <string.h>

/* ---- lists as one blob ------------------------------------------------------------------------------------ */

/* The offset ``index`` of an array of int32 (width 4) or int64 (width 8) values. */
static int64_t
offset_at(const char *raw, int width, Py_ssize_t index)
{
    if (width == 4) {
        int32_t value;
        memcpy(&value, raw + index * 4, 4);
        return value;
    }
    int64_t value;
    memcpy(&value, raw + index * 8, 8);
    return value;
}

static PyObject *
joined(PyObject *Py_UNUSED(module), PyObject *arg)
{
    if (!PyList_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "joined takes a list of bytes or of str");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(arg);
    int text = count > 0 && PyUnicode_Check(PyList_GET_ITEM(arg, 0));
    int64_t total = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyList_GET_ITEM(arg, i);
        if (text ? !PyUnicode_Check(item) : !PyBytes_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "joined takes a list of bytes or of str, not of both");
            return NULL;
        }
        total += text ? PyUnicode_GET_LENGTH(item) : PyBytes_GET_SIZE(item);
    }
    int width = total <= INT32_MAX ? 4 : 8;
    PyObject *offsets = PyBytes_FromStringAndSize(NULL, (count + 1) * width);
    if (offsets == NULL)
        return NULL;
    char *out = PyBytes_AS_STRING(offsets);
    int64_t at = 0;
    for (Py_ssize_t i = 0; i <= count; i++) {
        if (width == 4) {
            int32_t value = (int32_t)at;
            memcpy(out + i * 4, &value, 4);
        }
        else
            memcpy(out + i * 8, &at, 8);
        if (i < count) {
            PyObject *item = PyList_GET_ITEM(arg, i);
            at += text ? PyUnicode_GET_LENGTH(item) : PyBytes_GET_SIZE(item);
        }
    }
    PyObject *blob;
    if (text) {
        PyObject *empty = PyUnicode_New(0, 0);
        blob = empty == NULL ? NULL : PyUnicode_Join(empty, arg);
        Py_XDECREF(empty);
    }
    else {
        blob = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
        if (blob != NULL) {
            char *to = PyBytes_AS_STRING(blob);
            for (Py_ssize_t i = 0; i < count; i++) {
                PyObject *item = PyList_GET_ITEM(arg, i);
                memcpy(to, PyBytes_AS_STRING(item), (size_t)PyBytes_GET_SIZE(item));
                to += PyBytes_GET_SIZE(item);
            }
        }
    }
    if (blob == NULL) {
        Py_DECREF(offsets);
        return NULL;
    }
    return Py_BuildValue("(NNi)", blob, offsets, width);
}

static PyObject *
int_array(PyObject *Py_UNUSED(module), PyObject *arg)
{
    if (!PyList_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "int_array takes a list");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(arg);
    int64_t *values = PyMem_Malloc((size_t)(count > 0 ? count : 1) * sizeof(int64_t));
    if (values == NULL)
        return PyErr_NoMemory();
    int narrow = 1, counting = 1;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyList_GET_ITEM(arg, i);
        int overflow = 0;
        long long value = PyLong_CheckExact(item) ? PyLong_AsLongLongAndOverflow(item, &overflow) : 0;
        if (!PyLong_CheckExact(item) || overflow || (value == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            PyMem_Free(values);
            Py_RETURN_NONE; /* not an int (a bool, None, ...) or beyond 64 bits: the Python path's */
        }
        values[i] = value;
        narrow &= value >= INT32_MIN && value <= INT32_MAX;
        counting &= value == i;
    }
    int width = narrow ? 4 : 8;
    PyObject *data = PyBytes_FromStringAndSize(NULL, count * width);
    if (data != NULL) {
        char *out = PyBytes_AS_STRING(data);
        for (Py_ssize_t i = 0; i < count; i++) {
            if (narrow) {
                int32_t value = (int32_t)values[i];
                memcpy(out + i * 4, &value, 4);
            }
            else
                memcpy(out + i * 8, &values[i], 8);
        }
    }
    PyMem_Free(values);
    if (data == NULL)
        return NULL;
    return Py_BuildValue("(NiO)", data, width, counting ? Py_True : Py_False);
}

static PyObject *
cut(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *blob;
    Py_buffer view, bytes = {0};
    int width;
    if (!PyArg_ParseTuple(args, "Oy*i:cut", &blob, &view, &width))
        return NULL;
    int text = PyUnicode_Check(blob);
    PyObject *items = NULL;
    if (!text && PyObject_GetBuffer(blob, &bytes, PyBUF_SIMPLE) < 0)
        goto fail;
    Py_ssize_t length = text ? PyUnicode_GET_LENGTH(blob) : bytes.len;
    if ((width != 4 && width != 8) || view.len % width != 0 || view.len == 0) {
        PyErr_SetString(PyExc_ValueError, "cut: offsets must be int32 or int64 values, the first 0 and the last the"
                        " length");
        goto fail;
    }
    Py_ssize_t count = view.len / width - 1;
    const char *raw = view.buf;
    int64_t previous = offset_at(raw, width, 0), last = offset_at(raw, width, count);
    if (previous != 0 || last != (int64_t)length) {
        PyErr_SetString(PyExc_ValueError, "cut: offsets must start at 0 and end at the blob's length");
        goto fail;
    }
    items = PyList_New(count);
    if (items == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t next = offset_at(raw, width, i + 1);
        if (next < previous || next > (int64_t)length) {
            PyErr_SetString(PyExc_ValueError, "cut: offsets out of order");
            goto fail;
        }
        PyObject *item = text ? PyUnicode_Substring(blob, (Py_ssize_t)previous, (Py_ssize_t)next)
                              : PyBytes_FromStringAndSize((const char *)bytes.buf + previous,
                                                          (Py_ssize_t)(next - previous));
        if (item == NULL)
            goto fail;
        PyList_SET_ITEM(items, i, item);
        previous = next;
    }
    PyBuffer_Release(&view);
    if (!text)
        PyBuffer_Release(&bytes);
    return items;
fail:
    Py_XDECREF(items);
    PyBuffer_Release(&view);
    if (!text && bytes.obj != NULL)
        PyBuffer_Release(&bytes);
    return NULL;
}

#endif /* BPEPROOF_FASTLOAD_BLOBS_H */
