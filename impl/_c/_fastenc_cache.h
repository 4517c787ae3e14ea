/*
 * _fastenc_cache.h: the word cache of encode_text, and the hash and comparison of pieces by code points.
 *
 * Included by _fastenc.c after _fastenc_table.h (each thread's Work holds a cache's entries, arenas and index); the
 * word counter of _fastenc_count.h uses its piece_hash and piece_equal too.  It provides cache_find, cache_store,
 * cache_clear and work_free; _fastenc_shared.h shares a cache between threads.  The functions on a Work never call
 * the interpreter (-1 means out of memory; the caller raises), so that threads run them with the GIL released.
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
cache_clear(Work *w)
{
    w->n_entries = 0;
    w->keys_len = w->ids_len = 0;
    if (w->index != NULL)
        memset(w->index, 0xFF, (size_t)(w->index_mask + 1) * sizeof(int32_t));
}

/* Free a Work's cache and work space. */
static void
work_free(Work *w)
{
    PyMem_RawFree(w->tok);
    PyMem_RawFree(w->aux);
    PyMem_RawFree(w->nxt);
    PyMem_RawFree(w->prv);
    PyMem_RawFree(w->heap);
    PyMem_RawFree(w->bytes);
    PyMem_RawFree(w->entries);
    PyMem_RawFree(w->index);
    PyMem_RawFree(w->cache_keys);
    PyMem_RawFree(w->cache_ids);
    memset(w, 0, sizeof(*w));
}

/* Rebuild the index over the entries, with ``size`` slots (a power of two above twice the entries). */
static int
cache_reindex(Work *w, uint64_t size)
{
    if (w->index == NULL || size != w->index_mask + 1) {
        int32_t *index = PyMem_RawRealloc(w->index, (size_t)size * sizeof(int32_t));
        if (index == NULL)
            return -1;
        w->index = index;
        w->index_mask = size - 1;
    }
    memset(w->index, 0xFF, (size_t)size * sizeof(int32_t));
    for (Py_ssize_t e = 0; e < w->n_entries; e++) {
        uint64_t slot = w->entries[e].hash & w->index_mask;
        while (w->index[slot] >= 0)
            slot = (slot + 1) & w->index_mask;
        w->index[slot] = (int32_t)e;
    }
    return 0;
}

/* The cached entry of data[start:end], or NULL. */
static inline const CacheEntry *
cache_find(const Work *w, uint64_t hash, int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    if (w->index == NULL)
        return NULL;
    uint64_t slot = hash & w->index_mask;
    for (;;) {
        int32_t e = w->index[slot];
        if (e < 0)
            return NULL;
        const CacheEntry *entry = &w->entries[e];
        if (entry->hash == hash && entry->key_len == end - start &&
            key_equal(w->cache_keys + entry->key_at, kind, data, start, end - start))
            return entry;
        slot = (slot + 1) & w->index_mask;
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
    void *bigger = PyMem_RawRealloc(*arena, (size_t)grown * size);
    if (bigger == NULL)
        return -1;
    *arena = bigger;
    *cap = grown;
    return 0;
}

/* Drop the older half of the entries (at least one), and what they hold in the arenas. */
static int
cache_drop_half(Work *w)
{
    Py_ssize_t drop = w->n_entries / 2 > 0 ? w->n_entries / 2 : 1;
    w->n_entries -= drop;
    memmove(w->entries, w->entries + drop, (size_t)w->n_entries * sizeof(CacheEntry));
    Py_ssize_t key_shift = w->n_entries ? w->entries[0].key_at : w->keys_len;
    Py_ssize_t ids_shift = w->n_entries ? w->entries[0].ids_at : w->ids_len;
    w->keys_len -= key_shift;
    w->ids_len -= ids_shift;
    memmove(w->cache_keys, w->cache_keys + key_shift, (size_t)w->keys_len * sizeof(Py_UCS4));
    memmove(w->cache_ids, w->cache_ids + ids_shift, (size_t)w->ids_len * sizeof(int32_t));
    for (Py_ssize_t e = 0; e < w->n_entries; e++) {
        w->entries[e].key_at -= key_shift;
        w->entries[e].ids_at -= ids_shift;
    }
    return cache_reindex(w, w->index_mask + 1);
}

/* Store data[start:end] -> ids[0..n_ids) (dense ids), first dropping the older half when ``limit`` words are
 * cached; -1 when out of memory. */
static int
cache_store(Work *w, Py_ssize_t limit, uint64_t hash, int kind, const void *data, Py_ssize_t start,
            Py_ssize_t end, const int32_t *ids, Py_ssize_t n_ids)
{
    if (w->n_entries >= limit && cache_drop_half(w) < 0)
        return -1;
    if (w->n_entries >= (Py_ssize_t)INT32_MAX - 1)
        return 0; /* entry numbers are 32-bit: a cache this large stops growing */
    if (w->n_entries == w->cap_entries) {
        Py_ssize_t cap = w->cap_entries ? 2 * w->cap_entries : 1024;
        CacheEntry *entries = PyMem_RawRealloc(w->entries, (size_t)cap * sizeof(CacheEntry));
        if (entries == NULL)
            return -1;
        w->entries = entries;
        w->cap_entries = cap;
    }
    Py_ssize_t length = end - start;
    if (arena_reserve((void **)&w->cache_keys, &w->keys_cap, w->keys_len, length, sizeof(Py_UCS4)) < 0 ||
        arena_reserve((void **)&w->cache_ids, &w->ids_cap, w->ids_len, n_ids, sizeof(int32_t)) < 0)
        return -1;
    uint64_t size = w->index == NULL ? 2048 : w->index_mask + 1;
    while ((uint64_t)(w->n_entries + 1) * 2 > size)
        size *= 2;
    if ((w->index == NULL || size != w->index_mask + 1) && cache_reindex(w, size) < 0)
        return -1;
    Py_UCS4 *key = w->cache_keys + w->keys_len;
    for (Py_ssize_t i = 0; i < length; i++)
        key[i] = PyUnicode_READ(kind, data, start + i);
    memcpy(w->cache_ids + w->ids_len, ids, (size_t)n_ids * sizeof(int32_t));
    Py_ssize_t e = w->n_entries++;
    CacheEntry *entry = &w->entries[e];
    entry->hash = hash;
    entry->key_at = w->keys_len;
    entry->key_len = (int32_t)length;
    entry->ids_at = w->ids_len;
    entry->ids_len = (int32_t)n_ids;
    w->keys_len += length;
    w->ids_len += n_ids;
    uint64_t slot = hash & w->index_mask;
    while (w->index[slot] >= 0)
        slot = (slot + 1) & w->index_mask;
    w->index[slot] = (int32_t)e;
    return 0;
}

#endif /* BPEPROOF_FASTENC_CACHE_H */
