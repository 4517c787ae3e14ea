/*
 * _fastenc_encode.h: the Merger's encoding methods, encode (one word), encode_pieces and encode_text.
 *
 * Included by _fastenc.c after the merge loop (_fastenc_merge.h), the word cache (_fastenc_cache.h) and the
 * pre-tokenizers (_fastenc_scan.h), which encode_text runs over the text without making the list of pieces.
 * It also holds what they and encode_texts (_fastenc_batch.h) share: load_utf8 (a piece's UTF-8 bytes into the
 * merge loop's input), encode_run (the ids of a text's pieces, through a thread's cache, without the interpreter),
 * raise_failure (the exception for what encode_run failed on), evict_half (the caller's dict cache of
 * encode_pieces) and IdBuffer (the ids of every piece, gathered into one list).
 */

#ifndef BPEPROOF_FASTENC_ENCODE_H
#define BPEPROOF_FASTENC_ENCODE_H

#include "_fastenc_merge.h"
#include "_fastenc_shared.h"
#include "_fastenc_scan.h"

/* Why a word could not be encoded (encode_run and load_utf8 return one of these, below zero). */
enum { FAIL_MEMORY = -1, FAIL_TOO_LONG = -2, FAIL_SURROGATE = -3, FAIL_UNREPORTED = -4,
       FAIL_TOO_BIG = -5 /* an id of 2**32 or more, asked for as a uint32 (encode_texts) */ };

/* What encode_run stopped on: the failure, and where (the piece and, for FAIL_UNREPORTED, the byte). */
typedef struct {
    int code;
    Py_ssize_t start, end;
    int32_t byte;
} Failure;

/* The exception for ``failure`` in ``text`` (the GIL held). */
static void
raise_failure(PyObject *text, const Failure *failure)
{
    if (failure->code == FAIL_MEMORY) {
        PyErr_NoMemory();
    } else if (failure->code == FAIL_TOO_LONG) {
        PyErr_SetString(PyExc_OverflowError, "word too long for the C merge loop");
    } else if (failure->code == FAIL_UNREPORTED) {
        raise_unreported(failure->byte);
    } else {
        /* A surrogate that is no escaped byte: the codec raises its own error about the piece. */
        PyObject *piece = PyUnicode_Substring(text, failure->start, failure->end);
        PyObject *encoded = piece == NULL ? NULL : PyUnicode_AsEncodedString(piece, "utf-8", "surrogateescape");
        Py_XDECREF(piece);
        if (encoded != NULL) {
            Py_DECREF(encoded);
            PyErr_SetString(PyExc_UnicodeError, "unexpected surrogate");
        }
    }
}

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
    if (ensure_capacity(&m->work, n) < 0) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    memcpy(m->work.bytes, view.buf, (size_t)n);
    PyBuffer_Release(&view);
    return result_tuple(m, &m->work, merge(m, &m->work, n));
}

/* The loops merge_each can be asked for: merge_short (the flat array) and merge_long (the heap). */
enum { LOOP_FLAT = 0, LOOP_HEAP = 1 };

/*
 * merge_each(words: list[bytes], loop: int) -> bytes: enc_R of each word by the loop ``loop`` names, whatever the
 * word's length, as dense ids (native int32), each word's ids followed by -1.  merge picks the heap loop only past
 * SHORT_WORD bytes, so without this no word short enough to check exhaustively ever reaches it; and one call and
 * one object for a whole list of words keep the interpreter's cost per word out of such a check.  Each word is
 * merged from its bytes (byte_units), as merge does when the whole-piece table lacks it.
 */
static PyObject *
Merger_merge_each(Merger *m, PyObject *args)
{
    PyObject *words;
    int loop;
    if (!PyArg_ParseTuple(args, "O!i:merge_each", &PyList_Type, &words, &loop))
        return NULL;
    if (loop != LOOP_FLAT && loop != LOOP_HEAP) {
        PyErr_SetString(PyExc_ValueError, "loop must be 0 (the flat array) or 1 (the heap)");
        return NULL;
    }
    /* A word of n bytes gives at most n ids and its -1: the room needed, found before anything is merged. */
    Py_ssize_t count = PyList_GET_SIZE(words), room = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *word = PyList_GET_ITEM(words, k);
        if (!PyBytes_Check(word)) {
            PyErr_Format(PyExc_TypeError, "words must be bytes, not %.100s", Py_TYPE(word)->tp_name);
            return NULL;
        }
        Py_ssize_t n = PyBytes_GET_SIZE(word);
        if (n >= INT32_MAX || room > (PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(int32_t)) - n - 1) {
            PyErr_SetString(PyExc_OverflowError, "words too long for the C merge loop");
            return NULL;
        }
        room += n + 1;
    }
    PyObject *result = PyBytes_FromStringAndSize(NULL, room * (Py_ssize_t)sizeof(int32_t));
    if (result == NULL)
        return NULL;
    /* Written by memcpy: the bytes object's buffer is an array of char. */
    char *out = PyBytes_AS_STRING(result);
    const int32_t end_of_word = -1;
    Py_ssize_t used = 0;
    Work *w = &m->work;
    /* No Python code runs below (the items are bytes, whose contents cannot change), so the list stays as it is. */
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *word = PyList_GET_ITEM(words, k);
        Py_ssize_t n = PyBytes_GET_SIZE(word);
        if (ensure_capacity(w, n) < 0) {
            Py_DECREF(result);
            return PyErr_NoMemory();
        }
        memcpy(w->bytes, PyBytes_AS_STRING(word), (size_t)n);
        for (Py_ssize_t i = 0; i < n; i++)
            w->tok[i] = m->byte_units[w->bytes[i]];
        Py_ssize_t len = loop == LOOP_FLAT ? merge_short(m, w, n) : merge_long(m, w, n);
        memcpy(out + used * (Py_ssize_t)sizeof(int32_t), w->tok, (size_t)len * sizeof(int32_t));
        used += len;
        memcpy(out + used * (Py_ssize_t)sizeof(int32_t), &end_of_word, sizeof(int32_t));
        used++;
    }
    if (_PyBytes_Resize(&result, used * (Py_ssize_t)sizeof(int32_t)) < 0)
        return NULL;
    return result;
}

/* The UTF-8 bytes of the code points data[start:end) (surrogateescape: U+DC80..U+DCFF stand for the bytes
 * 0x80..0xFF, unless ``strict``, where every surrogate fails) into w->bytes; their number, or a FAIL_ code. */
static Py_ssize_t
load_utf8(Work *w, int kind, const void *data, Py_ssize_t start, Py_ssize_t end, int strict)
{
    Py_ssize_t length = end - start;
    if (length > (INT32_MAX - 1) / 4)
        return FAIL_TOO_LONG;
    if (ensure_capacity(w, 4 * length) < 0)
        return FAIL_MEMORY;
    unsigned char *out = w->bytes;
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
                if (ch < 0xDC80 || ch > 0xDCFF || strict)
                    return FAIL_SURROGATE;
                out[n++] = (unsigned char)(ch - 0xDC00);
                continue;
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

/* A growing array of dense ids, in PyMem_Raw* memory (a thread appends to one with the GIL released). */
typedef struct {
    int32_t *ids;
    Py_ssize_t len, cap;
} DenseIds;

static inline int
dense_append(DenseIds *out, const int32_t *ids, Py_ssize_t n)
{
    if (out->len + n > out->cap) {
        Py_ssize_t cap = out->cap ? out->cap : 1024;
        while (cap < out->len + n)
            cap *= 2;
        int32_t *grown = PyMem_RawRealloc(out->ids, (size_t)cap * sizeof(int32_t));
        if (grown == NULL)
            return -1;
        out->ids = grown;
        out->cap = cap;
    }
    memcpy(out->ids + out->len, ids, (size_t)n * sizeof(int32_t));
    out->len += n;
    return 0;
}

/* The place of the first surrogate code point of the scanned text, or -1 (a str of one-byte kind holds none). */
static Py_ssize_t
first_surrogate(const Scan *sc)
{
    if (sc->kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *p = (const Py_UCS2 *)sc->data;
        for (Py_ssize_t i = 0; i < sc->n; i++)
            if ((p[i] & 0xF800) == 0xD800)
                return i;
    } else if (sc->kind == PyUnicode_4BYTE_KIND) {
        const Py_UCS4 *p = (const Py_UCS4 *)sc->data;
        for (Py_ssize_t i = 0; i < sc->n; i++)
            if (p[i] >= 0xD800 && p[i] <= 0xDFFF)
                return i;
    }
    return -1;
}

/* Append to ``out`` the dense ids of the pieces of the scanned text, through w's cache (at most ``limit`` words;
 * none when 0), after looking in ``shared`` (the calling thread's cache, only read here; NULL for none) and in a
 * batch's ``table`` (NULL for none), where the words merged here go while it has room: 0, or a FAIL_ code with
 * ``failure`` filled in.  Calls nothing of the interpreter's. */
static int
encode_run(const Merger *m, Work *w, const Work *shared, SharedTable *table, const Scan *sc, int which,
           Py_ssize_t limit, int strict, DenseIds *out, Failure *failure)
{
    if (strict) { /* before any look-up: a cached word may hold an escaped byte that a non-strict call merged */
        Py_ssize_t at = first_surrogate(sc);
        if (at >= 0) {
            failure->code = FAIL_SURROGATE;
            failure->start = at;
            failure->end = at + 1;
            return FAIL_SURROGATE;
        }
    }
    /* The pieces are found one ahead, and the slots where the next one will be looked up are fetched while this
     * one is looked up or merged: tables larger than the CPU's cache otherwise cost a wait for memory per word. */
    Py_ssize_t i = 0, j = sc->n > 0 ? piece_end(sc, which, 0) : 0;
    uint64_t hash = piece_hash(sc->kind, sc->data, 0, j);
    while (i < sc->n) {
        Py_ssize_t after = j < sc->n ? piece_end(sc, which, j) : j;
        uint64_t next_hash = piece_hash(sc->kind, sc->data, j, after);
        if (shared != NULL)
            cache_prefetch(shared, next_hash);
        if (table != NULL)
            shared_prefetch(table, next_hash);
        cache_prefetch(w, next_hash);
        const int32_t *found = NULL;
        Py_ssize_t found_len = 0;
        const WordRecord *record = shared != NULL ? cache_find(shared, hash, sc->kind, sc->data, i, j) : NULL;
        if (record == NULL && table != NULL)
            record = shared_find(table, hash, sc->kind, sc->data, i, j);
        if (record == NULL)
            record = cache_find(w, hash, sc->kind, sc->data, i, j);
        if (record != NULL) {
            found = RECORD_IDS(record);
            found_len = record->ids_len;
        }
        int code = 0;
        if (found != NULL) {
            if (dense_append(out, found, found_len) < 0)
                code = FAIL_MEMORY;
        } else {
            Py_ssize_t n = load_utf8(w, sc->kind, sc->data, i, j, strict);
            if (n < 0) {
                code = (int)n;
            } else {
                Py_ssize_t len = merge(m, w, n);
                Py_ssize_t bad = first_unreported(m, w->tok, len);
                int kept = 0;
                if (bad >= 0) {
                    code = FAIL_UNREPORTED;
                    failure->byte = w->tok[bad];
                } else if (limit > 0 && table != NULL &&
                           (kept = shared_put(table, w, hash, sc->kind, sc->data, i, j, w->tok, len)) < 0) {
                    code = FAIL_MEMORY;
                } else if ((limit > 0 && !kept && cache_store(w, limit, hash, sc->kind, sc->data, i, j, w->tok, len) < 0) ||
                           dense_append(out, w->tok, len) < 0) {
                    code = FAIL_MEMORY;
                }
            }
        }
        if (code < 0) {
            failure->code = code;
            failure->start = i;
            failure->end = j;
            return code;
        }
        i = j;
        j = after;
        hash = next_hash;
    }
    return 0;
}

/* The reported ids of ids[0..n) as a list (each checked to have one when it was merged). */
static PyObject *
reported_list(const Merger *m, const int32_t *ids, Py_ssize_t n)
{
    PyObject *list = PyList_New(n);
    if (list == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *id = m->outputs[ids[i]];
        Py_INCREF(id);
        PyList_SET_ITEM(list, i, id);
    }
    return list;
}

/* Drop the older half of ``cache`` (``older_half``), in insertion order. */
static int
evict_half(PyObject *cache)
{
    Py_ssize_t drop = older_half(PyDict_GET_SIZE(cache));
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
        Py_ssize_t n = load_utf8(&m->work, PyUnicode_KIND(piece), PyUnicode_DATA(piece), 0, PyUnicode_GET_LENGTH(piece), 0);
        if (n < 0) {
            Failure failure = {(int)n, 0, PyUnicode_GET_LENGTH(piece), 0};
            raise_failure(piece, &failure);
            return -1;
        }
        ids = result_tuple(m, &m->work, merge(m, &m->work, n));
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
    int which, strict = 0;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "USin|p:encode_text", &text, &table, &which, &limit, &strict))
        return NULL;
    if (m->spelt) {
        PyErr_SetString(PyExc_TypeError, "encode_text: this merger reports units as several ids (encode_pieces)");
        return NULL;
    }
    Scan sc;
    if (scan_init(&sc, text, table, which) < 0)
        return NULL;
    DenseIds out = {NULL, 0, 0};
    Failure failure = {0, 0, 0, 0};
    PyObject *result = NULL;
    if (lock_shared_cache(m) < 0)
        return NULL;
    int code = encode_run(m, &m->work, NULL, NULL, &sc, which, limit, strict, &out, &failure);
    unlock_shared_cache(m);
    if (code < 0)
        raise_failure(text, &failure);
    else
        result = reported_list(m, out.ids, out.len);
    PyMem_RawFree(out.ids);
    return result;
}

#endif /* BPEPROOF_FASTENC_ENCODE_H */
