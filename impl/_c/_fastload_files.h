/*
 * _fastload_files.h: the readers of whole files: tiktoken rank files (rank_file), GGUF arrays of strings
 * (length_prefixed) and sentencepiece models (sentencepiece_pieces).
 *
 * Included by _fastload.c (one translation unit, as _fastenc's parts are).
 */

#ifndef BPEPROOF_FASTLOAD_FILES_H
#define BPEPROOF_FASTLOAD_FILES_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <stdint.h>
#include <string.h>

/* ---- tiktoken rank files ---------------------------------------------------------------------------------- */

/* The value of each base64 character, -1 for any other byte. */
static signed char base64_value[256];

static void
base64_init(void)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    memset(base64_value, -1, sizeof base64_value);
    for (int i = 0; i < 64; i++)
        base64_value[(unsigned char)alphabet[i]] = (signed char)i;
}

/* The token whose canonical base64 (binascii.b2a_base64 without its newline) is field[0:n], or NULL without an
 * exception when the field is not that of a non-empty token. */
static PyObject *
canonical_base64(const unsigned char *field, Py_ssize_t n)
{
    if (n == 0 || n % 4 != 0)
        return NULL;
    Py_ssize_t pad = field[n - 1] == '=' ? (field[n - 2] == '=' ? 2 : 1) : 0;
    for (Py_ssize_t i = 0; i < n - pad; i++)
        if (base64_value[field[i]] < 0)
            return NULL;
    /* The bits a padded group leaves over are zero in the canonical form. */
    if (pad == 2 && (base64_value[field[n - 3]] & 0x0F) != 0)
        return NULL;
    if (pad == 1 && (base64_value[field[n - 2]] & 0x03) != 0)
        return NULL;
    Py_ssize_t size = n / 4 * 3 - pad;
    PyObject *token = PyBytes_FromStringAndSize(NULL, size);
    if (token == NULL)
        return NULL;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(token);
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i += 4) {
        uint32_t a = (uint32_t)base64_value[field[i]], b = (uint32_t)base64_value[field[i + 1]];
        uint32_t c = field[i + 2] == '=' ? 0 : (uint32_t)base64_value[field[i + 2]];
        uint32_t d = field[i + 3] == '=' ? 0 : (uint32_t)base64_value[field[i + 3]];
        uint32_t group = a << 18 | b << 12 | c << 6 | d;
        out[k++] = (unsigned char)(group >> 16);
        if (k < size)
            out[k++] = (unsigned char)(group >> 8);
        if (k < size)
            out[k++] = (unsigned char)group;
    }
    return token;
}

/* A decimal field of at most 30 digits as an int; NULL without an exception for anything else. */
static PyObject *
decimal(const unsigned char *field, Py_ssize_t n)
{
    if (n == 0 || n > 30)
        return NULL;
    unsigned long long value = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (field[i] < '0' || field[i] > '9')
            return NULL;
        value = value * 10 + (unsigned long long)(field[i] - '0');
    }
    if (n <= 18)
        return PyLong_FromUnsignedLongLong(value);
    char text[32];
    memcpy(text, field, (size_t)n);
    text[n] = '\0';
    return PyLong_FromString(text, NULL, 10);
}

static int
is_blank(unsigned char c)
{
    /* bytes.split()'s white space (Py_ISSPACE); no line holds LF, and VT / FF are refused before. */
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\x0b' || c == '\x0c';
}

static PyObject *
rank_file(PyObject *Py_UNUSED(module), PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *data = view.buf;
    Py_ssize_t size = view.len;
    PyObject *ranks = NULL;
    for (Py_ssize_t i = 0; i < size; i++) {
        unsigned char c = data[i];
        if (c == '\x0b' || c == '\x0c' || (c == '\r' && (i + 1 >= size || data[i + 1] != '\n')))
            goto none;
    }
    ranks = PyDict_New();
    if (ranks == NULL)
        goto fail;
    Py_ssize_t pos = 0, lines = 0;
    while (pos < size) {
        const unsigned char *line_end = memchr(data + pos, '\n', (size_t)(size - pos));
        Py_ssize_t end = line_end == NULL ? size : line_end - data;
        const unsigned char *fields[3];
        Py_ssize_t lengths[3];
        int count = 0;
        Py_ssize_t i = pos;
        while (i < end) {
            while (i < end && is_blank(data[i]))
                i++;
            if (i >= end)
                break;
            Py_ssize_t start = i;
            while (i < end && !is_blank(data[i]))
                i++;
            if (count == 2)
                goto none; /* a third field */
            fields[count] = data + start;
            lengths[count++] = i - start;
        }
        pos = end + 1;
        if (count == 0)
            continue;
        if (count != 2)
            goto none;
        PyObject *rank = decimal(fields[1], lengths[1]);
        if (rank == NULL) {
            if (PyErr_Occurred())
                goto fail;
            goto none;
        }
        PyObject *token = canonical_base64(fields[0], lengths[0]);
        if (token == NULL) {
            Py_DECREF(rank);
            if (PyErr_Occurred())
                goto fail;
            goto none;
        }
        /* One look-up per line; a token given twice leaves the table smaller than the lines (found below). */
        PyObject *kept = PyDict_SetDefault(ranks, token, rank);
        Py_DECREF(token);
        Py_DECREF(rank);
        if (kept == NULL)
            goto fail;
        lines++;
    }
    if (lines == 0 || PyDict_GET_SIZE(ranks) != lines)
        goto none;
    PyBuffer_Release(&view);
    return ranks;
none:
    Py_XDECREF(ranks);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(ranks);
    PyBuffer_Release(&view);
    return NULL;
}

/* ---- GGUF arrays of strings ------------------------------------------------------------------------------- */

static uint64_t
read_u64(const unsigned char *p)
{
    uint64_t value = 0;
    for (int i = 7; i >= 0; i--)
        value = value << 8 | p[i];
    return value;
}

static PyObject *
length_prefixed(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer view;
    Py_ssize_t offset, count;
    int keep;
    if (!PyArg_ParseTuple(args, "y*nnp:length_prefixed", &view, &offset, &count, &keep))
        return NULL;
    const unsigned char *data = view.buf;
    Py_ssize_t size = view.len;
    PyObject *strings = NULL;
    if (offset < 0 || count < 0 || offset > size) {
        PyErr_SetString(PyExc_ValueError, "length_prefixed: an offset or count outside the buffer");
        goto fail;
    }
    if (keep) {
        strings = PyList_New(count);
        if (strings == NULL)
            goto fail;
    }
    /* As the Python loop: a length is read at every offset up to the buffer's end; a string reaching past it
     * is noticed when the next length cannot be read, or after the last string. */
    Py_ssize_t failed = -1;
    uint64_t at = (uint64_t)offset;
    for (Py_ssize_t number = 0; number < count; number++) {
        if (at > (uint64_t)size || (uint64_t)size - at < 8) {
            failed = number;
            break;
        }
        uint64_t length = read_u64(data + at);
        uint64_t start = at + 8;
        if (length > (uint64_t)size - start) {
            failed = number + 1 < count ? number + 1 : number;
            break;
        }
        if (keep) {
            PyObject *text = PyUnicode_DecodeUTF8((const char *)data + start, (Py_ssize_t)length, "surrogateescape");
            if (text == NULL)
                goto fail;
            PyList_SET_ITEM(strings, number, text);
        }
        at = start + length;
    }
    PyBuffer_Release(&view);
    if (failed >= 0) {
        Py_XDECREF(strings);
        return Py_BuildValue("(Onn)", Py_None, size + 1, failed);
    }
    if (!keep)
        return Py_BuildValue("(Onn)", Py_None, (Py_ssize_t)at, (Py_ssize_t)-1);
    return Py_BuildValue("(Nnn)", strings, (Py_ssize_t)at, (Py_ssize_t)-1);
fail:
    Py_XDECREF(strings);
    PyBuffer_Release(&view);
    return NULL;
}


/* ---- sentencepiece models --------------------------------------------------------------------------------- */

/* A protobuf varint at *pos (below end), as _Wire.varint reads it; -1 when truncated or longer than 10 bytes. */
static int
varint(const unsigned char *data, Py_ssize_t *pos, Py_ssize_t end, uint64_t *out)
{
    uint64_t result = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*pos >= end)
            return -1;
        unsigned char byte = data[(*pos)++];
        if (shift < 64)
            result |= (uint64_t)(byte & 0x7F) << shift;
        if (byte < 0x80) {
            *out = result;
            return 0;
        }
    }
    return -1;
}

/* One piece in the usual layout (``_quick_piece``): 0 with its three values set, 1 for another layout. */
static int
quick_piece(const unsigned char *data, Py_ssize_t start, Py_ssize_t end, PyObject **text, double *score, long *kind)
{
    if (end - start < 2 || data[start] != 0x0A || data[start + 1] >= 0x80)
        return 1;
    Py_ssize_t text_end = start + 2 + data[start + 1];
    if (text_end + 5 > end || data[text_end] != 0x15)
        return 1;
    Py_ssize_t after = text_end + 5;
    if (after == end)
        *kind = 1;
    else if (after + 2 == end && data[after] == 0x18 && data[after + 1] >= 1 && data[after + 1] <= 6)
        *kind = data[after + 1];
    else
        return 1;
    if (text_end == start + 2)
        return 1; /* an empty text */
    *text = PyUnicode_DecodeUTF8((const char *)data + start + 2, text_end - start - 2, "strict");
    if (*text == NULL) {
        PyErr_Clear();
        return 1;
    }
    float value;
    memcpy(&value, data + text_end + 1, 4); /* a little-endian float32 (the machines CPython builds on) */
    *score = value;
    return 0;
}

static PyObject *
sentencepiece_pieces(PyObject *Py_UNUSED(module), PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *data = view.buf;
    Py_ssize_t end = view.len, pos = 0;
    PyObject *texts = PyList_New(0), *scores = PyList_New(0), *types = PyList_New(0), *others = PyList_New(0);
    if (texts == NULL || scores == NULL || types == NULL || others == NULL)
        goto fail;
    while (pos < end) {
        uint64_t key, value;
        if (varint(data, &pos, end, &key) < 0 || (key >> 3) == 0)
            goto none;
        uint64_t number = key >> 3;
        int wire = (int)(key & 7);
        PyObject *item = NULL;
        if (wire == 0) {
            if (varint(data, &pos, end, &value) < 0)
                goto none;
            item = Py_BuildValue("(KiK)", (unsigned long long)number, wire, (unsigned long long)value);
        }
        else if (wire == 1 || wire == 5) {
            Py_ssize_t width = wire == 1 ? 8 : 4;
            if (end - pos < width)
                goto none;
            item = Py_BuildValue("(Kiy#)", (unsigned long long)number, wire, (const char *)data + pos, width);
            pos += width;
        }
        else if (wire == 2) {
            if (varint(data, &pos, end, &value) < 0 || value > (uint64_t)(end - pos))
                goto none;
            Py_ssize_t start = pos;
            pos += (Py_ssize_t)value;
            if (number == 1) {
                PyObject *text;
                double score;
                long kind;
                if (quick_piece(data, start, pos, &text, &score, &kind))
                    goto none;
                PyObject *score_obj = PyFloat_FromDouble(score), *kind_obj = PyLong_FromLong(kind);
                int failed = score_obj == NULL || kind_obj == NULL || PyList_Append(texts, text) < 0 ||
                             PyList_Append(scores, score_obj) < 0 || PyList_Append(types, kind_obj) < 0;
                Py_DECREF(text);
                Py_XDECREF(score_obj);
                Py_XDECREF(kind_obj);
                if (failed)
                    goto fail;
                continue;
            }
            item = Py_BuildValue("(Ki(nn))", (unsigned long long)number, wire, start, pos);
        }
        else
            goto none;
        if (number <= 3 && wire != 2)
            goto none_item; /* a piece or spec that is not a sub-message: the Python reader refuses it */
        if (item == NULL || PyList_Append(others, item) < 0) {
            Py_XDECREF(item);
            goto fail;
        }
        Py_DECREF(item);
        continue;
    none_item:
        Py_XDECREF(item);
        goto none;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(NNNN)", texts, scores, types, others);
none:
    Py_DECREF(texts);
    Py_DECREF(scores);
    Py_DECREF(types);
    Py_DECREF(others);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(texts);
    Py_XDECREF(scores);
    Py_XDECREF(types);
    Py_XDECREF(others);
    PyBuffer_Release(&view);
    return NULL;
}

#endif /* BPEPROOF_FASTLOAD_FILES_H */
