/*
 * _fastenc_cache.h: the word cache of encode_text, and the hash and comparison of pieces by code points.
 *
 * Included by _fastenc.c after _fastenc_table.h (the Merger holds the cache's entries and index); the word counter
 * of _fastenc_count.h uses its piece_hash and piece_equal too.  It provides cache_find, cache_store, cache_clear
 * and the methods clear_cache and cached_words.
 *
 * Keyed by the code points of a piece, so that a piece of the text is looked up without making a str
 * of it; a str is made only for a new word.  At most ``limit`` words: a full cache first loses its
 * older half (insertion order), as bpeproof.impl.word_cache.WordCache does.
 */

#ifndef BPEPROOF_FASTENC_CACHE_H
#define BPEPROOF_FASTENC_CACHE_H

#include "_fastenc_table.h"

typedef struct CacheEntry {
    uint64_t hash; /* piece_hash of the key */
    PyObject *key; /* the piece (str), owned */
    PyObject *ids; /* its ids (tuple), owned */
} CacheEntry;

static inline uint64_t
piece_hash(int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325) ^ (uint64_t)(end - start);
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *p = (const Py_UCS1 *)data;
        for (Py_ssize_t i = start; i < end; i++)
            h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    } else if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *p = (const Py_UCS2 *)data;
        for (Py_ssize_t i = start; i < end; i++)
            h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    } else {
        const Py_UCS4 *p = (const Py_UCS4 *)data;
        for (Py_ssize_t i = start; i < end; i++)
            h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    }
    return h ^ (h >> 32);
}

/* Whether the str ``key`` holds exactly the code points data[start:end]. */
static inline int
piece_equal(PyObject *key, int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    Py_ssize_t length = end - start;
    if (PyUnicode_GET_LENGTH(key) != length)
        return 0;
    int key_kind = PyUnicode_KIND(key);
    const void *key_data = PyUnicode_DATA(key);
    if (key_kind == kind)
        return memcmp(key_data, (const char *)data + start * kind, (size_t)(length * kind)) == 0;
    for (Py_ssize_t i = 0; i < length; i++)
        if (PyUnicode_READ(key_kind, key_data, i) != PyUnicode_READ(kind, data, start + i))
            return 0;
    return 1;
}

static void
cache_clear(Merger *m)
{
    for (Py_ssize_t e = 0; e < m->n_entries; e++) {
        Py_DECREF(m->entries[e].key);
        Py_DECREF(m->entries[e].ids);
    }
    m->n_entries = 0;
    if (m->index != NULL)
        memset(m->index, 0xFF, (size_t)(m->index_mask + 1) * sizeof(int32_t));
}

/* Rebuild the index over the entries, with ``size`` slots (a power of two above twice the entries). */
static int
cache_reindex(Merger *m, uint64_t size)
{
    if (m->index == NULL || size != m->index_mask + 1) {
        int32_t *index = PyMem_Realloc(m->index, (size_t)size * sizeof(int32_t));
        if (index == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        m->index = index;
        m->index_mask = size - 1;
    }
    memset(m->index, 0xFF, (size_t)size * sizeof(int32_t));
    for (Py_ssize_t e = 0; e < m->n_entries; e++) {
        uint64_t slot = m->entries[e].hash & m->index_mask;
        while (m->index[slot] >= 0)
            slot = (slot + 1) & m->index_mask;
        m->index[slot] = (int32_t)e;
    }
    return 0;
}

/* The cached ids of data[start:end] (borrowed), or NULL. */
static inline PyObject *
cache_find(const Merger *m, uint64_t hash, int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    if (m->index == NULL)
        return NULL;
    uint64_t slot = hash & m->index_mask;
    for (;;) {
        int32_t e = m->index[slot];
        if (e < 0)
            return NULL;
        const CacheEntry *entry = &m->entries[e];
        if (entry->hash == hash && piece_equal(entry->key, kind, data, start, end))
            return entry->ids;
        slot = (slot + 1) & m->index_mask;
    }
}

/* Store key -> ids (new references taken), first dropping the older half when ``limit`` words are cached. */
static int
cache_store(Merger *m, Py_ssize_t limit, uint64_t hash, PyObject *key, PyObject *ids)
{
    if (m->n_entries >= limit) {
        Py_ssize_t drop = m->n_entries / 2 > 0 ? m->n_entries / 2 : 1;
        for (Py_ssize_t e = 0; e < drop; e++) {
            Py_DECREF(m->entries[e].key);
            Py_DECREF(m->entries[e].ids);
        }
        m->n_entries -= drop;
        memmove(m->entries, m->entries + drop, (size_t)m->n_entries * sizeof(CacheEntry));
        if (cache_reindex(m, m->index_mask + 1) < 0)
            return -1;
    }
    if (m->n_entries >= (Py_ssize_t)INT32_MAX - 1)
        return 0; /* entry numbers are 32-bit: a cache this large stops growing */
    if (m->n_entries == m->cap_entries) {
        Py_ssize_t cap = m->cap_entries ? 2 * m->cap_entries : 1024;
        CacheEntry *entries = PyMem_Realloc(m->entries, (size_t)cap * sizeof(CacheEntry));
        if (entries == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        m->entries = entries;
        m->cap_entries = cap;
    }
    uint64_t size = m->index == NULL ? 2048 : m->index_mask + 1;
    while ((uint64_t)(m->n_entries + 1) * 2 > size)
        size *= 2;
    if ((m->index == NULL || size != m->index_mask + 1) && cache_reindex(m, size) < 0)
        return -1;
    Py_INCREF(key);
    Py_INCREF(ids);
    Py_ssize_t e = m->n_entries++;
    m->entries[e].hash = hash;
    m->entries[e].key = key;
    m->entries[e].ids = ids;
    uint64_t slot = hash & m->index_mask;
    while (m->index[slot] >= 0)
        slot = (slot + 1) & m->index_mask;
    m->index[slot] = (int32_t)e;
    return 0;
}

static PyObject *
Merger_clear_cache(Merger *m, PyObject *unused)
{
    cache_clear(m);
    Py_RETURN_NONE;
}

static PyObject *
Merger_cached_words(Merger *m, PyObject *unused)
{
    return PyLong_FromSsize_t(m->n_entries);
}

#endif /* BPEPROOF_FASTENC_CACHE_H */
