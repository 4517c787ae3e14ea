/*
 * _fastenc_table.h: the Merger's state and its two look-up tables, of pairs and of whole pieces.
 *
 * Included by _fastenc.c (one translation unit, so that lookup inlines into the merge loops of _fastenc_merge.h).
 * It provides the Merger struct (its tables, and the fields of the merge loops' work space and of the word cache
 * of _fastenc_cache.h), the pair table (lookup: the rank and result of a pair of dense ids; insert_pair) and the
 * whole-piece table (whole_find: the dense id whose bytes are a whole word; whole_build).
 */

#ifndef BPEPROOF_FASTENC_TABLE_H
#define BPEPROOF_FASTENC_TABLE_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <stdint.h>
#include <string.h>

/* A pair's value: (rank << 32) | dense id of the result; NO_VALUE when the pair does not merge. */
#define NO_VALUE UINT64_MAX
#define VALUE(rank, result) (((uint64_t)(uint32_t)(rank) << 32) | (uint32_t)(result))
#define RANK_OF(value) ((int32_t)((value) >> 32))
#define RESULT_OF(value) ((int32_t)((value) & 0xFFFFFFFFu))
#define EMPTY_KEY UINT64_MAX

/* One slot of the pair table: key and rank side by side, so that a lookup touches one cache line. */
typedef struct {
    uint64_t key; /* (a << 32) | b, EMPTY_KEY for a free slot */
    uint64_t value; /* VALUE(rank, result) */
} Slot;

/* What one thread needs to encode: the merge loops' work space and a word cache (encode_text's entries in insertion
 * order, an open-addressing index over them, and the arenas their keys, as code points, and dense ids are kept in).
 * Its buffers are PyMem_Raw* memory, grown on demand, so that a thread may grow them with the GIL released; the
 * functions that take a Work never call the interpreter (they return -1 on failure, and the caller, holding the
 * GIL, raises). */
typedef struct Work {
    int32_t *tok, *nxt, *prv;
    uint64_t *aux;
    uint64_t *heap;
    unsigned char *bytes; /* the UTF-8 bytes of the word being merged */
    Py_ssize_t cap;
    struct CacheEntry *entries;
    Py_ssize_t n_entries, cap_entries;
    int32_t *index; /* entry numbers, -1 for a free slot */
    uint64_t index_mask; /* index size - 1; the index is NULL until the first entry */
    Py_UCS4 *cache_keys;
    int32_t *cache_ids;
    Py_ssize_t keys_len, keys_cap, ids_len, ids_cap;
    struct Chunk *chunks; /* the entries this thread put in a batch's shared table (_fastenc_shared.h), newest first */
} Work;

/* The table of words a batch's threads share (_fastenc_shared.h): slots of entry pointers, set once each. */
typedef struct {
    struct SharedEntry **slots; /* NULL when no batch made one */
    uint64_t mask;
    Py_ssize_t room; /* entries it takes (half its slots); further words go to the threads' own caches */
    Py_ssize_t count; /* entries in it, counted atomically */
} SharedTable;

typedef struct {
    PyObject_HEAD
    uint64_t *byte_pairs; /* the value of each pair of dense ids below 256 (a << 8 | b) */
    int32_t byte_units[256]; /* the dense id a word's byte starts as */
    Slot *slots;
    uint64_t mask;
    int shift;
    Py_ssize_t n_ids; /* 256 + number of rules */
    PyObject **outputs; /* n_ids owned references; None for a byte that has no id (an error when reported) */
    /* The whole-piece table: a word whose bytes are one of these is that dense id, without merging. */
    PyObject **whole; /* n_ids owned bytes references or NULL; NULL when there is no table */
    uint64_t *whole_slots; /* WHOLE_SLOT(hash, dense id) per slot, 0 for a free one; NULL when there is no table */
    uint64_t whole_mask;
    Py_ssize_t whole_longest; /* the most bytes of any whole piece: a longer word is never looked up */
    uint64_t *whole_filter; /* one bit per WHOLE_FILTER_BIT of each whole piece's hash: most words that are no
                             * whole piece are told so by this table, small enough to stay in the cache */
    int whole_filter_shift;
    Work work; /* the calling thread's */
    Work *more_work; /* n_more_work more, one per further thread of encode_texts (their caches stay warm) */
    Py_ssize_t n_more_work;
    void *batch_lock; /* a PyThread_type_lock, made by the first encode_texts: one batch at a time owns more_work */
    Py_ssize_t pending_work, pending_limit; /* the first pending_work of more_work hold words a batch merged that
                                             * the calling thread's cache (of at most pending_limit) has not yet */
    SharedTable shared; /* the last batch's table, until its words join the calling thread's cache */
    int64_t *output_values; /* each dense id's reported id as a number, -1 when it is 2**32 or more (made when a
                             * batch first asks for uint32 ids), so that threads write ids without the interpreter */
} Merger;

static inline uint64_t
slot_of(const Merger *m, uint64_t key)
{
    return (key * UINT64_C(0x9E3779B97F4A7C15)) >> m->shift;
}

static inline uint64_t
lookup(const Merger *m, int32_t a, int32_t b)
{
    if ((a | b) < 256)
        return m->byte_pairs[a << 8 | b];
    uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
    uint64_t i = slot_of(m, key);
    for (;;) {
        uint64_t found = m->slots[i].key;
        if (found == key)
            return m->slots[i].value;
        if (found == EMPTY_KEY)
            return NO_VALUE;
        i = (i + 1) & m->mask;
    }
}

/* Set the value of the pair (a, b), replacing an earlier one when ``replace``. */
static void
insert_pair(Merger *m, int32_t a, int32_t b, uint64_t value, int replace)
{
    uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
    uint64_t i = slot_of(m, key);
    while (m->slots[i].key != EMPTY_KEY && m->slots[i].key != key)
        i = (i + 1) & m->mask;
    if (m->slots[i].key == EMPTY_KEY || replace) {
        m->slots[i].key = key;
        m->slots[i].value = value;
        if ((a | b) < 256)
            m->byte_pairs[a << 8 | b] = value;
    }
}

/* A hash of data[0..n) read eight bytes at a time (the table is rebuilt in every process: never stored). */
static inline uint64_t
bytes_hash(const unsigned char *data, Py_ssize_t n)
{
    uint64_t h = UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)n;
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, data, 8);
        h = (h ^ word) * UINT64_C(0xFF51AFD7ED558CCD);
        h ^= h >> 32;
        data += 8;
        n -= 8;
    }
    uint64_t tail = 0;
    memcpy(&tail, data, (size_t)n);
    h = (h ^ tail) * UINT64_C(0xC4CEB9FE1A85EC53);
    return h ^ (h >> 29);
}

/* A slot of the whole-piece table: the hash's high half beside the dense id + 1, so that one read of one slot
 * decides nearly every probe (the bytes are compared only when the halves agree). */
#define WHOLE_SLOT(hash, d) (((hash) & UINT64_C(0xFFFFFFFF00000000)) | (uint64_t)(uint32_t)((d) + 1))

/* A hash's bit in the whole-piece filter (bits other than the slot's, which are the low ones). */
#define WHOLE_FILTER_BIT(m, h) (((h) * UINT64_C(0x9E3779B97F4A7C15)) >> (m)->whole_filter_shift)

/* The dense id whose whole-piece bytes are data[0..n), or -1. */
static int32_t
whole_find(const Merger *m, const unsigned char *data, Py_ssize_t n)
{
    if (m->whole_slots == NULL || n > m->whole_longest)
        return -1;
    uint64_t h = bytes_hash(data, n);
    uint64_t bit = WHOLE_FILTER_BIT(m, h);
    if (!(m->whole_filter[bit >> 6] >> (bit & 63) & 1))
        return -1;
    uint64_t i = h & m->whole_mask;
    for (;;) {
        uint64_t slot = m->whole_slots[i];
        if (slot == 0)
            return -1;
        if ((slot ^ h) >> 32 == 0) {
            int32_t d = (int32_t)(uint32_t)slot - 1;
            PyObject *key = m->whole[d];
            if (PyBytes_GET_SIZE(key) == n && memcmp(PyBytes_AS_STRING(key), data, (size_t)n) == 0)
                return d;
        }
        i = (i + 1) & m->whole_mask;
    }
}

/* The whole-piece table from ``whole``: one bytes object (or None) per dense id. */
static int
whole_build(Merger *m, PyObject *whole_seq)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(whole_seq);
    if (n != m->n_ids) {
        PyErr_SetString(PyExc_ValueError, "whole must have one entry per dense id");
        return -1;
    }
    PyObject **items = PySequence_Fast_ITEMS(whole_seq);
    Py_ssize_t count = 0;
    for (Py_ssize_t d = 0; d < n; d++) {
        if (items[d] != Py_None && !PyBytes_Check(items[d])) {
            PyErr_SetString(PyExc_TypeError, "whole entries must be bytes or None");
            return -1;
        }
        count += items[d] != Py_None;
    }
    if (count == 0)
        return 0;
    uint64_t size = 16;
    while (size < (uint64_t)count * 2 + 2)
        size *= 2;
    /* About sixteen filter bits per piece: one word in twenty that is no piece gets past the filter. */
    int filter_bits = 12;
    while (((uint64_t)1 << filter_bits) < (uint64_t)count * 16)
        filter_bits++;
    m->whole_filter_shift = 64 - filter_bits;
    m->whole = PyMem_Calloc((size_t)n, sizeof(PyObject *));
    m->whole_slots = PyMem_Calloc(size, sizeof(uint64_t));
    m->whole_filter = PyMem_Calloc(((size_t)1 << filter_bits) / 64, sizeof(uint64_t));
    if (m->whole == NULL || m->whole_slots == NULL || m->whole_filter == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    m->whole_mask = size - 1;
    m->whole_longest = 0;
    for (Py_ssize_t d = 0; d < n; d++)
        if (items[d] != Py_None && PyBytes_GET_SIZE(items[d]) > m->whole_longest)
            m->whole_longest = PyBytes_GET_SIZE(items[d]);
    for (Py_ssize_t d = 0; d < n; d++) {
        if (items[d] == Py_None)
            continue;
        const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(items[d]);
        Py_ssize_t len = PyBytes_GET_SIZE(items[d]);
        if (whole_find(m, data, len) >= 0)
            continue; /* the first id with these bytes keeps them */
        Py_INCREF(items[d]);
        m->whole[d] = items[d];
        uint64_t h = bytes_hash(data, len);
        uint64_t i = h & m->whole_mask;
        while (m->whole_slots[i] != 0)
            i = (i + 1) & m->whole_mask;
        m->whole_slots[i] = WHOLE_SLOT(h, d);
        uint64_t bit = WHOLE_FILTER_BIT(m, h);
        m->whole_filter[bit >> 6] |= (uint64_t)1 << (bit & 63);
    }
    return 0;
}

#endif /* BPEPROOF_FASTENC_TABLE_H */
