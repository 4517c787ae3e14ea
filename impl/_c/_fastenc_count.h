/*
 * _fastenc_count.h: WordCounter, the word counting of training for tiktoken's three patterns, in C.
 *
 * Included by _fastenc.c after _fastenc_scan.h (piece_end) and the word cache's piece_hash / piece_equal
 * (_fastenc_cache.h).
 *
 * WordCounter()
 *   add(text: str, table: bytes, which: int) -> None
 *       Count every piece of split_pattern(text, table, which): collections.Counter.update on that list,
 *       without the list.  The words are kept by their code points (an open-addressing table keyed by
 *       piece_hash), so a piece seen before costs no str object and no int object.
 *   counts() -> dict[bytes, int]
 *       Every word counted, as its UTF-8 bytes, with its count.
 *   pack() -> bytes
 *       The same table packed as the trainer reads it (_fastbpe_tables.h, impl/io/packed_counts.py): one
 *       buffer, no object for each word.
 *   len(counter): the number of distinct words.
 */

#ifndef BPEPROOF_FASTENC_COUNT_H
#define BPEPROOF_FASTENC_COUNT_H

#include "_fastbpe_tables.h"
#include "_fastenc_cache.h"
#include "_fastenc_scan.h"

typedef struct {
    uint64_t hash;  /* piece_hash of the word */
    PyObject *key;  /* the word (str), owned */
    long long count;
} CountEntry;

typedef struct {
    PyObject_HEAD
    CountEntry *entries;
    Py_ssize_t n_entries, cap_entries;
    Py_ssize_t *index;   /* entry numbers, -1 for a free slot */
    uint64_t index_mask; /* index size - 1; the index is NULL until the first word */
} WordCounter;

/* Rebuild the index with ``size`` slots (a power of two above twice the entries). */
static int
counter_reindex(WordCounter *c, uint64_t size)
{
    Py_ssize_t *index = PyMem_Realloc(c->index, (size_t)size * sizeof(Py_ssize_t));
    if (index == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    c->index = index;
    c->index_mask = size - 1;
    memset(c->index, 0xFF, (size_t)size * sizeof(Py_ssize_t));
    for (Py_ssize_t e = 0; e < c->n_entries; e++) {
        uint64_t slot = c->entries[e].hash & c->index_mask;
        while (c->index[slot] >= 0)
            slot = (slot + 1) & c->index_mask;
        c->index[slot] = e;
    }
    return 0;
}

/* Add one occurrence of text[start:end]; -1 with an exception on failure. */
static int
counter_add_piece(WordCounter *c, PyObject *text, const Scan *sc, Py_ssize_t start, Py_ssize_t end)
{
    uint64_t hash = piece_hash(sc->kind, sc->data, start, end);
    uint64_t slot = hash & c->index_mask;
    for (;;) {
        Py_ssize_t e = c->index[slot];
        if (e < 0)
            break;
        CountEntry *entry = &c->entries[e];
        if (entry->hash == hash && piece_equal(entry->key, sc->kind, sc->data, start, end)) {
            if (entry->count == LLONG_MAX) {
                PyErr_SetString(PyExc_OverflowError, "a word occurs more than 2**63 - 1 times");
                return -1;
            }
            entry->count++;
            return 0;
        }
        slot = (slot + 1) & c->index_mask;
    }
    if (c->n_entries == c->cap_entries) {
        Py_ssize_t cap = 2 * c->cap_entries;
        CountEntry *entries = PyMem_Realloc(c->entries, (size_t)cap * sizeof(CountEntry));
        if (entries == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        c->entries = entries;
        c->cap_entries = cap;
    }
    PyObject *key = PyUnicode_Substring(text, start, end);
    if (key == NULL)
        return -1;
    Py_ssize_t e = c->n_entries++;
    c->entries[e].hash = hash;
    c->entries[e].key = key;
    c->entries[e].count = 1;
    c->index[slot] = e;
    if ((uint64_t)c->n_entries * 2 > c->index_mask + 1)
        return counter_reindex(c, (c->index_mask + 1) * 2);
    return 0;
}

static PyObject *
WordCounter_add(WordCounter *c, PyObject *args)
{
    PyObject *text, *table;
    int which;
    if (!PyArg_ParseTuple(args, "USi:add", &text, &table, &which))
        return NULL;
    Scan sc;
    if (scan_init(&sc, text, table, which) < 0)
        return NULL;
    for (Py_ssize_t i = 0; i < sc.n;) {
        Py_ssize_t j = piece_end(&sc, which, i);
        if (counter_add_piece(c, text, &sc, i, j) < 0)
            return NULL;
        i = j;
    }
    Py_RETURN_NONE;
}

static PyObject *
WordCounter_counts(WordCounter *c, PyObject *unused)
{
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    for (Py_ssize_t e = 0; e < c->n_entries; e++) {
        PyObject *word = PyUnicode_AsUTF8String(c->entries[e].key);
        PyObject *count = word == NULL ? NULL : PyLong_FromLongLong(c->entries[e].count);
        if (count == NULL || PyDict_SetItem(out, word, count) < 0) {
            Py_XDECREF(word);
            Py_XDECREF(count);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(word);
        Py_DECREF(count);
    }
    return out;
}

static PyObject *
WordCounter_pack(WordCounter *c, PyObject *unused)
{
    int64_t n = c->n_entries, size = 0;
    for (Py_ssize_t e = 0; e < c->n_entries; e++) {
        Py_ssize_t length;
        if (PyUnicode_AsUTF8AndSize(c->entries[e].key, &length) == NULL)
            return NULL; /* a lone surrogate: UnicodeEncodeError */
        if ((uint64_t)length > UINT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "a word of more than 2**32 - 1 bytes");
            return NULL;
        }
        size += length;
    }
    int64_t total = table_size(n, size);
    if (total < 0 || total > PY_SSIZE_T_MAX)
        return PyErr_NoMemory();
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (out == NULL)
        return NULL;
    unsigned char *buf = (unsigned char *)PyBytes_AS_STRING(out);
    memcpy(buf, TABLE_MAGIC, 8);
    memcpy(buf + 8, &n, 8);
    memcpy(buf + 16, &size, 8);
    unsigned char *counts = buf + TABLE_HEADER, *lengths = counts + 8 * n;
    unsigned char *data = buf + TABLE_HEADER + 8 * n + ((4 * n + 7) & ~(int64_t)7);
    memset(lengths + 4 * n, 0, (size_t)(data - (lengths + 4 * n)));
    for (Py_ssize_t e = 0; e < c->n_entries; e++) {
        Py_ssize_t length;
        const char *utf8 = PyUnicode_AsUTF8AndSize(c->entries[e].key, &length); /* cached by the first pass */
        int64_t count = c->entries[e].count;
        uint32_t length32 = (uint32_t)length;
        memcpy(counts + 8 * e, &count, 8);
        memcpy(lengths + 4 * e, &length32, 4);
        memcpy(data, utf8, (size_t)length);
        data += length;
    }
    return out;
}

static Py_ssize_t
WordCounter_length(WordCounter *c)
{
    return c->n_entries;
}

static PyObject *
WordCounter_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (!PyArg_ParseTuple(args, ":WordCounter") || (kwargs != NULL && PyDict_GET_SIZE(kwargs) > 0)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "WordCounter() takes no arguments");
        return NULL;
    }
    WordCounter *c = (WordCounter *)type->tp_alloc(type, 0);
    if (c == NULL)
        return NULL;
    c->cap_entries = 1024;
    c->entries = PyMem_Malloc((size_t)c->cap_entries * sizeof(CountEntry));
    if (c->entries == NULL || counter_reindex(c, 4096) < 0) {
        Py_DECREF(c);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    return (PyObject *)c;
}

static void
WordCounter_dealloc(WordCounter *c)
{
    for (Py_ssize_t e = 0; e < c->n_entries; e++)
        Py_DECREF(c->entries[e].key);
    PyMem_Free(c->entries);
    PyMem_Free(c->index);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyMethodDef WordCounter_methods[] = {
    {"add", (PyCFunction)WordCounter_add, METH_VARARGS,
     "add(text, table, which): count every piece of split_pattern(text, table, which)."},
    {"counts", (PyCFunction)WordCounter_counts, METH_NOARGS, "Every word counted (UTF-8 bytes) with its count."},
    {"pack", (PyCFunction)WordCounter_pack, METH_NOARGS, "The counts as one packed count table (bytes)."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods WordCounter_sequence = {
    .sq_length = (lenfunc)WordCounter_length,
};

static PyTypeObject WordCounterType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bpeproof.impl._c._fastenc.WordCounter",
    .tp_basicsize = sizeof(WordCounter),
    .tp_dealloc = (destructor)WordCounter_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Word counts of texts cut by split_pattern (see _fastenc_count.h).",
    .tp_methods = WordCounter_methods,
    .tp_as_sequence = &WordCounter_sequence,
    .tp_new = WordCounter_new,
};

#endif /* BPEPROOF_FASTENC_COUNT_H */
