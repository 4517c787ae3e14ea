/*
 * _fastenc_cache.h: the word cache of encode_text, and the hash and comparison of pieces by code points.
 *
 * Included by _fastenc.c after _fastenc_table.h (the Merger holds the cache's entries, arenas and index); the word
 * counter of _fastenc_count.h uses its piece_hash and piece_equal too.  It provides cache_find, cache_store,
 * cache_clear and the methods clear_cache and cached_words.
 *
 * Keyed by the code points of a piece, so that a piece of the text is looked up without making a str of it.  No
 * Python object is made per word either: an entry's key (its code points) and value (its dense ids) live in two
 * arenas of plain integers, so a new word costs no allocation of the interpreter's, and the garbage collector has
 * nothing to walk however large the cache grows.  At most ``limit`` words: a full cache first loses its older half
 * (insertion order), as bpeproof.impl.word_cache.WordCache does.
 */

#ifndef BPEPROOF_FASTENC_CACHE_H
#define BPEPROOF_FASTENC_CACHE_H

#include "_fastenc_table.h"

typedef struct CacheEntry {
    uint64_t hash; /* piece_hash of the key */
    Py_ssize_t key_at, ids_at; /* where the key starts in m->cache_keys, the ids in m->cache_ids */
    int32_t key_len, ids_len;
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

/* Whether the cached key k[0..length) holds exactly the code points data[start:start + length). */
static inline int
key_equal(const Py_UCS4 *k, int kind, const void *data, Py_ssize_t start, Py_ssize_t length)
{
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *p = (const Py_UCS1 *)data + start;
        for (Py_ssize_t i = 0; i < length; i++)
            if (k[i] != p[i])
                return 0;
    } else if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *p = (const Py_UCS2 *)data + start;
        for (Py_ssize_t i = 0; i < length; i++)
            if (k[i] != p[i])
                return 0;
    } else {
        return memcmp(k, (const Py_UCS4 *)data + start, (size_t)length * sizeof(Py_UCS4)) == 0;
    }
    return 1;
}

static void
cache_clear(Merger *m)
{
    m->n_entries = 0;
    m->keys_len = m->ids_len = 0;
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

/* The cached entry of data[start:end], or NULL. */
static inline const CacheEntry *
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
        if (entry->hash == hash && entry->key_len == end - start &&
            key_equal(m->cache_keys + entry->key_at, kind, data, start, end - start))
            return entry;
        slot = (slot + 1) & m->index_mask;
    }
}

/* Room for ``more`` items after ``len`` in an arena of ``*cap`` items of ``size`` bytes; -1 when out of memory. */
static int
arena_reserve(void **arena, Py_ssize_t *cap, Py_ssize_t len, Py_ssize_t more, size_t size)
{
    if (len + more <= *cap)
        return 0;
    Py_ssize_t grown = *cap ? *cap : 4096;
    while (grown < len + more)
        grown *= 2;
    void *bigger = PyMem_Realloc(*arena, (size_t)grown * size);
    if (bigger == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *arena = bigger;
    *cap = grown;
    return 0;
}

/* Drop the older half of the entries (at least one), and what they hold in the arenas. */
static int
cache_drop_half(Merger *m)
{
    Py_ssize_t drop = m->n_entries / 2 > 0 ? m->n_entries / 2 : 1;
    m->n_entries -= drop;
    memmove(m->entries, m->entries + drop, (size_t)m->n_entries * sizeof(CacheEntry));
    Py_ssize_t key_shift = m->n_entries ? m->entries[0].key_at : m->keys_len;
    Py_ssize_t ids_shift = m->n_entries ? m->entries[0].ids_at : m->ids_len;
    m->keys_len -= key_shift;
    m->ids_len -= ids_shift;
    memmove(m->cache_keys, m->cache_keys + key_shift, (size_t)m->keys_len * sizeof(Py_UCS4));
    memmove(m->cache_ids, m->cache_ids + ids_shift, (size_t)m->ids_len * sizeof(int32_t));
    for (Py_ssize_t e = 0; e < m->n_entries; e++) {
        m->entries[e].key_at -= key_shift;
        m->entries[e].ids_at -= ids_shift;
    }
    return cache_reindex(m, m->index_mask + 1);
}

/* Store data[start:end] -> ids[0..n_ids) (dense ids), first dropping the older half when ``limit`` words are
 * cached; -1 with an exception on failure. */
static int
cache_store(Merger *m, Py_ssize_t limit, uint64_t hash, int kind, const void *data, Py_ssize_t start,
            Py_ssize_t end, const int32_t *ids, Py_ssize_t n_ids)
{
    if (m->n_entries >= limit && cache_drop_half(m) < 0)
        return -1;
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
    Py_ssize_t length = end - start;
    if (arena_reserve((void **)&m->cache_keys, &m->keys_cap, m->keys_len, length, sizeof(Py_UCS4)) < 0 ||
        arena_reserve((void **)&m->cache_ids, &m->ids_cap, m->ids_len, n_ids, sizeof(int32_t)) < 0)
        return -1;
    uint64_t size = m->index == NULL ? 2048 : m->index_mask + 1;
    while ((uint64_t)(m->n_entries + 1) * 2 > size)
        size *= 2;
    if ((m->index == NULL || size != m->index_mask + 1) && cache_reindex(m, size) < 0)
        return -1;
    Py_UCS4 *key = m->cache_keys + m->keys_len;
    for (Py_ssize_t i = 0; i < length; i++)
        key[i] = PyUnicode_READ(kind, data, start + i);
    memcpy(m->cache_ids + m->ids_len, ids, (size_t)n_ids * sizeof(int32_t));
    Py_ssize_t e = m->n_entries++;
    CacheEntry *entry = &m->entries[e];
    entry->hash = hash;
    entry->key_at = m->keys_len;
    entry->key_len = (int32_t)length;
    entry->ids_at = m->ids_len;
    entry->ids_len = (int32_t)n_ids;
    m->keys_len += length;
    m->ids_len += n_ids;
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
