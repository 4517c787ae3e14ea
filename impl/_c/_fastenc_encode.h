/*
 * _fastenc_encode.h: the Merger's encoding methods, encode (one word), encode_pieces and encode_text.
 *
 * Included by _fastenc.c after the merge loop (_fastenc_merge.h), the word cache (_fastenc_cache.h) and the
 * pre-tokenizers (_fastenc_scan.h), which encode_text runs over the text without making the list of pieces.
 * It also holds what they share: load_utf8 (a piece's UTF-8 bytes into the merge loop's input), evict_half (the
 * caller's dict cache of encode_pieces) and IdBuffer (the ids of every piece, gathered into one list).
 */

#ifndef BPEPROOF_FASTENC_ENCODE_H
#define BPEPROOF_FASTENC_ENCODE_H

#include "_fastenc_merge.h"
#include "_fastenc_cache.h"
#include "_fastenc_scan.h"

static PyObject *
Merger_encode(Merger *m, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Py_ssize_t n = view.len;
    if (n >= INT32_MAX) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_OverflowError, "word too long for the C merge loop");
        return NULL;
    }
    if (ensure_capacity(m, n) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    memcpy(m->bytes, view.buf, (size_t)n);
    PyBuffer_Release(&view);
    return result_tuple(m, merge(m, n));
}

/* The UTF-8 bytes of the code points data[start:end) of ``text`` (surrogateescape: U+DC80..U+DCFF stand for the
 * bytes 0x80..0xFF) into m->bytes; their number, or -1 with an exception on failure. */
static Py_ssize_t
load_utf8(Merger *m, PyObject *text, int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    Py_ssize_t length = end - start;
    if (length > (INT32_MAX - 1) / 4) {
        PyErr_SetString(PyExc_OverflowError, "word too long for the C merge loop");
        return -1;
    }
    if (ensure_capacity(m, 4 * length) < 0)
        return -1;
    unsigned char *out = m->bytes;
    Py_ssize_t n = 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *p = (const Py_UCS1 *)data;
        for (Py_ssize_t i = start; i < end; i++) {
            Py_UCS1 ch = p[i];
            if (ch < 0x80) {
                out[n++] = ch;
            } else {
                out[n++] = (unsigned char)(0xC0 | (ch >> 6));
                out[n++] = (unsigned char)(0x80 | (ch & 0x3F));
            }
        }
        return n;
    }
    for (Py_ssize_t i = start; i < end; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (ch < 0x80) {
            out[n++] = (unsigned char)ch;
        } else if (ch < 0x800) {
            out[n++] = (unsigned char)(0xC0 | (ch >> 6));
            out[n++] = (unsigned char)(0x80 | (ch & 0x3F));
        } else if (ch < 0x10000) {
            if (ch >= 0xD800 && ch <= 0xDFFF) {
                if (ch >= 0xDC80 && ch <= 0xDCFF) {
                    out[n++] = (unsigned char)(ch - 0xDC00);
                    continue;
                }
                /* Not an escaped byte: let the codec raise its own error about the piece. */
                PyObject *piece = PyUnicode_Substring(text, start, end);
                PyObject *encoded = piece == NULL ? NULL : PyUnicode_AsEncodedString(piece, "utf-8", "surrogateescape");
                Py_XDECREF(piece);
                if (encoded != NULL) {
                    Py_DECREF(encoded);
                    PyErr_SetString(PyExc_UnicodeError, "unexpected surrogate");
                }
                return -1;
            }
            out[n++] = (unsigned char)(0xE0 | (ch >> 12));
            out[n++] = (unsigned char)(0x80 | ((ch >> 6) & 0x3F));
            out[n++] = (unsigned char)(0x80 | (ch & 0x3F));
        } else {
            out[n++] = (unsigned char)(0xF0 | (ch >> 18));
            out[n++] = (unsigned char)(0x80 | ((ch >> 12) & 0x3F));
            out[n++] = (unsigned char)(0x80 | ((ch >> 6) & 0x3F));
            out[n++] = (unsigned char)(0x80 | (ch & 0x3F));
        }
    }
    return n;
}

/* Drop the older half of ``cache`` (at least one entry), in insertion order. */
static int
evict_half(PyObject *cache)
{
    Py_ssize_t size = PyDict_GET_SIZE(cache);
    Py_ssize_t drop = size / 2 > 0 ? size / 2 : 1;
    PyObject *keys = PyList_New(0);
    if (keys == NULL)
        return -1;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyList_GET_SIZE(keys) < drop && PyDict_Next(cache, &pos, &key, &value)) {
        if (PyList_Append(keys, key) < 0) {
            Py_DECREF(keys);
            return -1;
        }
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); i++) {
        if (PyDict_DelItem(cache, PyList_GET_ITEM(keys, i)) < 0) {
            Py_DECREF(keys);
            return -1;
        }
    }
    Py_DECREF(keys);
    return 0;
}

typedef struct {
    PyObject **items; /* owned references */
    Py_ssize_t len, cap;
} IdBuffer;

/* Room for ``add`` more ids; -1 when out of memory. */
static inline int
buffer_reserve(IdBuffer *buffer, Py_ssize_t add)
{
    if (buffer->len + add > buffer->cap) {
        Py_ssize_t cap = buffer->cap ? buffer->cap : 1024;
        while (cap < buffer->len + add)
            cap *= 2;
        PyObject **items = PyMem_Realloc(buffer->items, (size_t)cap * sizeof(PyObject *));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        buffer->items = items;
        buffer->cap = cap;
    }
    return 0;
}

static int
buffer_extend(IdBuffer *buffer, PyObject *tuple)
{
    Py_ssize_t add = PyTuple_GET_SIZE(tuple);
    if (buffer_reserve(buffer, add) < 0)
        return -1;
    for (Py_ssize_t i = 0; i < add; i++) {
        PyObject *id = PyTuple_GET_ITEM(tuple, i);
        Py_INCREF(id);
        buffer->items[buffer->len++] = id;
    }
    return 0;
}

/* Append the reported ids of the dense ids ids[0..n) (each checked to have one when it was merged). */
static inline int
buffer_extend_dense(IdBuffer *buffer, const Merger *m, const int32_t *ids, Py_ssize_t n)
{
    if (buffer_reserve(buffer, n) < 0)
        return -1;
    PyObject **out = buffer->items + buffer->len;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *id = m->outputs[ids[i]];
        Py_INCREF(id);
        out[i] = id;
    }
    buffer->len += n;
    return 0;
}

static void
buffer_clear(IdBuffer *buffer)
{
    for (Py_ssize_t i = 0; i < buffer->len; i++)
        Py_DECREF(buffer->items[i]);
    PyMem_Free(buffer->items);
    buffer->items = NULL;
    buffer->len = buffer->cap = 0;
}

/* Append the ids of one piece (str) to ``buffer``, through ``cache``; -1 with an exception on failure. */
static int
add_piece(Merger *m, PyObject *piece, PyObject *cache, Py_ssize_t limit, IdBuffer *buffer)
{
    PyObject *ids = PyDict_GetItemWithError(cache, piece);
    if (ids != NULL) {
        Py_INCREF(ids);
    } else if (PyErr_Occurred()) {
        return -1;
    } else {
        Py_ssize_t n = load_utf8(m, piece, PyUnicode_KIND(piece), PyUnicode_DATA(piece), 0, PyUnicode_GET_LENGTH(piece));
        if (n < 0)
            return -1;
        ids = result_tuple(m, merge(m, n));
        if (ids == NULL)
            return -1;
        if (limit > 0) {
            if ((PyDict_GET_SIZE(cache) >= limit && evict_half(cache) < 0) || PyDict_SetItem(cache, piece, ids) < 0) {
                Py_DECREF(ids);
                return -1;
            }
        }
    }
    if (!PyTuple_Check(ids)) {
        Py_DECREF(ids);
        PyErr_SetString(PyExc_TypeError, "cache values must be tuples");
        return -1;
    }
    int failed = buffer_extend(buffer, ids);
    Py_DECREF(ids);
    return failed;
}

/* The buffer's ids as a list (the buffer is emptied either way). */
static PyObject *
buffer_to_list(IdBuffer *buffer)
{
    PyObject *result = PyList_New(buffer->len);
    if (result == NULL) {
        buffer_clear(buffer);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < buffer->len; i++)
        PyList_SET_ITEM(result, i, buffer->items[i]);
    PyMem_Free(buffer->items);
    buffer->items = NULL;
    buffer->len = buffer->cap = 0;
    return result;
}

static PyObject *
Merger_encode_pieces(Merger *m, PyObject *args)
{
    PyObject *pieces, *cache;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "O!O!n:encode_pieces", &PyList_Type, &pieces, &PyDict_Type, &cache, &limit))
        return NULL;
    IdBuffer buffer = {NULL, 0, 0};
    for (Py_ssize_t p = 0; p < PyList_GET_SIZE(pieces); p++) {
        PyObject *piece = PyList_GET_ITEM(pieces, p);
        if (!PyUnicode_Check(piece)) {
            PyErr_Format(PyExc_TypeError, "pieces must be str, not %.100s", Py_TYPE(piece)->tp_name);
            goto fail;
        }
        Py_INCREF(piece);
        int failed = add_piece(m, piece, cache, limit, &buffer);
        Py_DECREF(piece);
        if (failed)
            goto fail;
    }
    return buffer_to_list(&buffer);
fail:
    buffer_clear(&buffer);
    return NULL;
}

static PyObject *
Merger_encode_text(Merger *m, PyObject *args)
{
    PyObject *text, *table;
    int which;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "USin:encode_text", &text, &table, &which, &limit))
        return NULL;
    Scan sc;
    if (scan_init(&sc, text, table, which) < 0)
        return NULL;
    Py_INCREF(text);
    IdBuffer buffer = {NULL, 0, 0};
    if (buffer_reserve(&buffer, sc.n / 3 + 16) < 0) /* about the ids of most texts: fewer regrowths */
        goto fail;
    for (Py_ssize_t i = 0; i < sc.n;) {
        Py_ssize_t j = piece_end(&sc, which, i);
        uint64_t hash = piece_hash(sc.kind, sc.data, i, j);
        const CacheEntry *entry = cache_find(m, hash, sc.kind, sc.data, i, j);
        int failed;
        if (entry != NULL) {
            failed = buffer_extend_dense(&buffer, m, m->cache_ids + entry->ids_at, entry->ids_len);
        } else {
            Py_ssize_t n = load_utf8(m, text, sc.kind, sc.data, i, j);
            if (n < 0)
                goto fail;
            Py_ssize_t len = merge(m, n);
            failed = check_outputs(m, len) < 0 ||
                     (limit > 0 && cache_store(m, limit, hash, sc.kind, sc.data, i, j, m->tok, len) < 0) ||
                     buffer_extend_dense(&buffer, m, m->tok, len) < 0;
        }
        if (failed)
            goto fail;
        i = j;
    }
    Py_DECREF(text);
    return buffer_to_list(&buffer);
fail:
    Py_DECREF(text);
    buffer_clear(&buffer);
    return NULL;
}

#endif /* BPEPROOF_FASTENC_ENCODE_H */
