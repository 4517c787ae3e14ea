/*
 * _fastenc_cache.h: the word cache of encode_text, and the hash and comparison of pieces by code points.
 *
 * Included by _fastenc.c after _fastenc_table.h (each thread's Work holds a cache's records and index); the word
 * counter of _fastenc_count.h uses its piece_hash and piece_equal too.  It provides WordRecord, cache_find,
 * cache_store, cache_clear and work_free; _fastenc_shared.h shares a cache between threads.  The functions on a Work
 * never call the interpreter (-1 means out of memory; the caller raises), so that threads run them with the GIL
 * released.
 *
 * Keyed by the code points of a piece, so that a piece of the text is looked up without making a str of it.  No
 * Python object is made per word either: a word's key (its code points) and value (its dense ids) follow its
 * header in one arena of records, so a new word costs no allocation of the interpreter's, the garbage collector
 * has nothing to walk however large the cache grows, and a hit reads the index and then one record.  At most
 * ``limit`` words: a full cache first loses its older half (insertion order, ``older_half``), as
 * bpeproof.impl.word_cache.WordCache does.
 */

#ifndef BPEPROOF_FASTENC_CACHE_H
#define BPEPROOF_FASTENC_CACHE_H

#include "_fastenc_table.h"

/* How many of a full word cache's ``size`` entries go when it takes a new word: the older half, at least one.
 * Every word cache in C drops this many (this one's records, and the caller's dict of encode_pieces,
 * _fastenc_encode.h's evict_half), as bpeproof.impl.word_cache.drop_older_half does in Python. */
static inline Py_ssize_t
older_half(Py_ssize_t size)
{
    return size / 2 > 0 ? size / 2 : 1;
}

/* A cached word: its piece_hash, its key (code points) and its dense ids, in one record, so that a hit reads one
 * place after the index.  The shared table of a batch (_fastenc_shared.h) holds the same records. */
typedef struct WordRecord {
    uint64_t hash;
    int32_t key_len, ids_len;
    /* followed by key_len code points (Py_UCS4), then ids_len dense ids (int32_t), then padding to 8 bytes */
} WordRecord;

#define RECORD_KEY(r) ((const Py_UCS4 *)((const WordRecord *)(r) + 1))
#define RECORD_IDS(r) ((const int32_t *)(RECORD_KEY(r) + (r)->key_len))
#define RECORD_SIZE(key_len, ids_len) \
    ((sizeof(WordRecord) + (size_t)(key_len) * sizeof(Py_UCS4) + (size_t)(ids_len) * sizeof(int32_t) + 7) & ~(size_t)7)

/* Fill the record at r for data[start:end] -> ids[0..n_ids). */
static void
record_fill(WordRecord *r, uint64_t hash, int kind, const void *data, Py_ssize_t start, Py_ssize_t end,
            const int32_t *ids, Py_ssize_t n_ids)
{
    Py_ssize_t length = end - start;
    r->hash = hash;
    r->key_len = (int32_t)length;
    r->ids_len = (int32_t)n_ids;
    Py_UCS4 *key = (Py_UCS4 *)(r + 1);
    for (Py_ssize_t i = 0; i < length; i++)
        key[i] = PyUnicode_READ(kind, data, start + i);
    memcpy(key + length, ids, (size_t)n_ids * sizeof(int32_t));
}

/* An index slot: the hash's high half beside 1 + the record's offset in eight-byte units (0 for a free slot), so
 * that a probe that is not the word rarely reads its record. */
#define INDEX_SLOT(hash, offset) (((hash) & UINT64_C(0xFFFFFFFF00000000)) | (uint64_t)((offset) / 8 + 1))
#define INDEX_OFFSET(slot) ((size_t)(((slot) & 0xFFFFFFFFu) - 1) * 8)

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
    w->records_len = 0;
    if (w->index != NULL)
        memset(w->index, 0, (size_t)(w->index_mask + 1) * sizeof(uint64_t));
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
    PyMem_RawFree(w->records);
    PyMem_RawFree(w->index);
    memset(w, 0, sizeof(*w));
}

static inline void
index_put(Work *w, uint64_t hash, size_t offset)
{
    uint64_t slot = hash & w->index_mask;
    while (w->index[slot] != 0)
        slot = (slot + 1) & w->index_mask;
    w->index[slot] = INDEX_SLOT(hash, offset);
}

/* Rebuild the index over the records, with ``size`` slots (a power of two above twice the entries). */
static int
cache_reindex(Work *w, uint64_t size)
{
    if (w->index == NULL || size != w->index_mask + 1) {
        uint64_t *index = PyMem_RawRealloc(w->index, (size_t)size * sizeof(uint64_t));
        if (index == NULL)
            return -1;
        w->index = index;
        w->index_mask = size - 1;
        advise_huge_pages(index, (size_t)size * sizeof(uint64_t));
    }
    memset(w->index, 0, (size_t)size * sizeof(uint64_t));
    for (size_t at = 0; at < w->records_len;) {
        const WordRecord *r = (const WordRecord *)(w->records + at);
        index_put(w, r->hash, at);
        at += RECORD_SIZE(r->key_len, r->ids_len);
    }
    return 0;
}

/* The cached record of data[start:end], or NULL. */
static inline const WordRecord *
cache_find(const Work *w, uint64_t hash, int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    if (w->index == NULL)
        return NULL;
    uint64_t slot = hash & w->index_mask;
    for (;;) {
        uint64_t found = w->index[slot];
        if (found == 0)
            return NULL;
        if ((found ^ hash) >> 32 == 0) {
            const WordRecord *r = (const WordRecord *)(w->records + INDEX_OFFSET(found));
            if (r->hash == hash && r->key_len == end - start && key_equal(RECORD_KEY(r), kind, data, start, end - start))
                return r;
        }
        slot = (slot + 1) & w->index_mask;
    }
}

/* Start fetching the index slot where cache_find(w, hash, ...) will look first. */
static inline void
cache_prefetch(const Work *w, uint64_t hash)
{
    if (w->index != NULL)
        __builtin_prefetch(&w->index[hash & w->index_mask]);
}

/* Drop the older half of the records (``older_half``). */
static int
cache_drop_half(Work *w)
{
    Py_ssize_t drop = older_half(w->n_entries);
    size_t cut = 0;
    for (Py_ssize_t e = 0; e < drop; e++) {
        const WordRecord *r = (const WordRecord *)(w->records + cut);
        cut += RECORD_SIZE(r->key_len, r->ids_len);
    }
    w->n_entries -= drop;
    w->records_len -= cut;
    memmove(w->records, w->records + cut, w->records_len);
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
    size_t bytes = RECORD_SIZE(end - start, n_ids);
    if (w->records_len + bytes > (size_t)UINT32_MAX * 8)
        return 0; /* offsets are 32-bit in eight-byte units: a cache this large stops growing */
    if (w->records_len + bytes > w->records_cap) {
        size_t cap = w->records_cap ? w->records_cap : 1 << 16;
        while (cap < w->records_len + bytes)
            cap *= 2;
        unsigned char *grown = PyMem_RawRealloc(w->records, cap);
        if (grown == NULL)
            return -1;
        w->records = grown;
        w->records_cap = cap;
        advise_huge_pages(grown + w->records_len, cap - w->records_len);
    }
    uint64_t size = w->index == NULL ? 2048 : w->index_mask + 1;
    while ((uint64_t)(w->n_entries + 1) * 2 > size)
        size *= 2;
    if ((w->index == NULL || size != w->index_mask + 1) && cache_reindex(w, size) < 0)
        return -1;
    record_fill((WordRecord *)(w->records + w->records_len), hash, kind, data, start, end, ids, n_ids);
    index_put(w, hash, w->records_len);
    w->records_len += bytes;
    w->n_entries++;
    return 0;
}

#endif /* BPEPROOF_FASTENC_CACHE_H */
