/*
 * _fastenc_table.h: the Merger's state and its two look-up tables, of pairs and of whole pieces.
 *
 * Included by _fastenc.c (one translation unit, so that lookup inlines into the merge loops of _fastenc_merge.h).
 * It provides the Merger struct (its tables, and the fields of the merge loops' work space and of the word cache
 * of _fastenc_cache.h), the pair table (lookup: the rank and result of a pair of dense ids; insert_pair;
 * pairs_alloc), the whole-piece table (whole_find: the dense id whose bytes are a whole word; whole_build;
 * whole_list, what it was built from), the BitFilter in front of each (most look-ups find nothing, and the
 * filter answers them without reading the table) and advise_huge_pages for the large tables.
 */

#ifndef BPEPROOF_FASTENC_TABLE_H
#define BPEPROOF_FASTENC_TABLE_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <stdint.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* A pair's value: (rank << 32) | dense id of the result; NO_VALUE when the pair does not merge. */
#define NO_VALUE UINT64_MAX
#define VALUE(rank, result) (((uint64_t)(uint32_t)(rank) << 32) | (uint32_t)(result))
#define RANK_OF(value) ((int32_t)((value) >> 32))
#define RESULT_OF(value) ((int32_t)((value) & 0xFFFFFFFFu))
#define EMPTY_KEY UINT64_MAX

/* A filter of two bits per item in one 64-bit word, about eight bits per item: it answers "surely not there" for
 * all but about one in twenty of the items it lacks, and it is small enough to stay in the CPU's cache where the
 * table behind it is not.  Its hashes are the item's hash times FILTER_MIX, so that the items that share a slot
 * of the table (the low or high bits of their plain hash) do not share their filter bits too. */
typedef struct {
    uint64_t *words;
    int shift; /* 64 - log2(number of words): a hash's word is its top bits */
} BitFilter;

#define FILTER_MIX UINT64_C(0xD6E8FEB86659FD93)
#define FILTER_BITS(h) ((UINT64_C(1) << ((h) >> 32 & 63)) | (UINT64_C(1) << ((h) >> 38 & 63)))

/* An empty filter for ``items`` items in place of f's; -1 (no exception set) when out of memory. */
static int
filter_alloc(BitFilter *f, uint64_t items)
{
    int words_log2 = 6;
    while (((uint64_t)64 << words_log2) < items * 8)
        words_log2++;
    uint64_t *words = PyMem_Calloc((size_t)1 << words_log2, sizeof(uint64_t));
    if (words == NULL)
        return -1;
    PyMem_Free(f->words);
    f->words = words;
    f->shift = 64 - words_log2;
    return 0;
}

static inline void
filter_add(BitFilter *f, uint64_t hash)
{
    uint64_t h = hash * FILTER_MIX;
    f->words[h >> f->shift] |= FILTER_BITS(h);
}

static inline int
filter_may_hold(const BitFilter *f, uint64_t hash)
{
    uint64_t h = hash * FILTER_MIX, bits = FILTER_BITS(h);
    return (f->words[h >> f->shift] & bits) == bits;
}

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
    unsigned char *records; /* the cached words' WordRecords, in the order they came, one after the other */
    size_t records_len, records_cap;
    Py_ssize_t n_entries;
    uint64_t *index; /* INDEX_SLOT of each record, 0 for a free slot */
    uint64_t index_mask; /* index size - 1; the index is NULL until the first entry */
    struct Chunk *chunks; /* the entries this thread put in a batch's shared table (_fastenc_shared.h), newest first */
    Py_ssize_t uncounted; /* entries this thread put there and has not yet added to the table's count */
    /* The Works of a batch's threads lie side by side (Merger.more_work): a cache line apart, so that what one
     * thread writes in its own never makes another wait for the line that holds the fields it reads. */
    char apart[64];
} Work;

/* The table of words a batch's threads share (_fastenc_shared.h): slots of entry pointers, set once each. */
typedef struct {
    struct WordRecord **slots; /* NULL when no batch made one */
    uint64_t mask;
    Py_ssize_t room; /* entries it takes (under half its slots); further words go to the threads' own caches */
    /* Entries in it, counted atomically, SHARED_COUNT_STEP at a time by each thread, on a cache line of its own:
     * a count written at every new word, beside the fields every look-up reads, made each thread's look-ups
     * wait for the line the other had just written. */
    char before_count[64];
    Py_ssize_t count;
    char after_count[64];
} SharedTable;

typedef struct {
    PyObject_HEAD
    uint64_t *byte_pairs; /* the value of each pair of dense ids below 256 (a << 8 | b) */
    int32_t byte_units[256]; /* the dense id a word's byte starts as */
    Slot *slots;
    uint64_t mask;
    int shift;
    BitFilter pair_filter; /* the pairs in the table: most pairs that do not merge are told so without reading it */
    Py_ssize_t n_ids; /* 256 + number of rules */
    PyObject **outputs; /* n_ids owned references; None for a byte that has no id (an error when reported) */
    int spelt; /* some output is a tuple of ids: a unit reported as several (a character without a token, as its
                  bytes' tokens); then only the calls that make a tuple per word (result_tuple) report them */
    /* The whole-piece table: a word whose bytes are one of these is that dense id, without merging. */
    uint64_t *whole_slots; /* WHOLE_SLOT(hash, record offset) per slot, 0 for a free one; NULL when there is no table */
    unsigned char *whole_records; /* the WholeRecord of each piece in the table, one after the other */
    size_t whole_records_len;
    uint64_t whole_mask;
    Py_ssize_t whole_longest; /* the most bytes of any whole piece: a longer word is never looked up */
    BitFilter whole_filter; /* the whole pieces' hashes: most words that are no piece are told so here */
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

/* Ask the kernel to back the 2 MB pages inside p[0..size) with huge pages, before they are first touched: the pair
 * and whole-piece tables of a large vocabulary are read at random, one cache miss per word, and with 4 KB pages each
 * miss was also a miss of the TLB. */
static void
advise_huge_pages(void *p, size_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)1 << 21;
    uintptr_t start = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t end = ((uintptr_t)p + size) & ~(huge - 1);
    if (end > start)
        (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
    (void)p;
    (void)size;
#endif
}

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
    if (!filter_may_hold(&m->pair_filter, key))
        return NO_VALUE;
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

/* An empty pair table (and filter) for ``pairs`` pairs, in place of m's; -1 with MemoryError. */
static int
pairs_alloc(Merger *m, Py_ssize_t pairs)
{
    uint64_t slots = 16;
    int bits = 4;
    while (slots < (uint64_t)pairs * 2 + 2) {
        slots *= 2;
        bits++;
    }
    Slot *table = PyMem_Malloc(slots * sizeof(Slot));
    if (table == NULL || filter_alloc(&m->pair_filter, (uint64_t)pairs) < 0) {
        PyMem_Free(table);
        PyErr_NoMemory();
        return -1;
    }
    advise_huge_pages(table, slots * sizeof(Slot));
    for (uint64_t i = 0; i < slots; i++)
        table[i].key = EMPTY_KEY;
    PyMem_Free(m->slots);
    m->slots = table;
    m->mask = slots - 1;
    m->shift = 64 - bits;
    return 0;
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
        filter_add(&m->pair_filter, key);
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

/* A slot of the whole-piece table: the hash's high 24 bits beside 1 + the offset of the piece's record in
 * m->whole_records, so that a probe reads one slot, and a hit one record (its dense id and its bytes side by
 * side), where the bytes of a Python object were two more dependent reads away. */
#define WHOLE_TAG_SHIFT 40
#define WHOLE_SLOT(hash, offset) ((((hash) >> WHOLE_TAG_SHIFT) << WHOLE_TAG_SHIFT) | (uint64_t)((offset) + 1))

/* A record of m->whole_records: the dense id and the length, then the bytes, padded to eight bytes. */
typedef struct {
    int32_t id;
    uint32_t len;
    unsigned char bytes[];
} WholeRecord;

#define WHOLE_RECORD_SIZE(n) ((sizeof(WholeRecord) + (size_t)(n) + 7) & ~(size_t)7)

/* The dense id whose whole-piece bytes are data[0..n), or -1. */
static int32_t
whole_find(const Merger *m, const unsigned char *data, Py_ssize_t n)
{
    if (m->whole_slots == NULL || n > m->whole_longest)
        return -1;
    uint64_t h = bytes_hash(data, n);
    if (!filter_may_hold(&m->whole_filter, h))
        return -1;
    uint64_t i = h & m->whole_mask;
    for (;;) {
        uint64_t slot = m->whole_slots[i];
        if (slot == 0)
            return -1;
        if ((slot ^ h) >> WHOLE_TAG_SHIFT == 0) {
            const WholeRecord *record =
                (const WholeRecord *)(m->whole_records + ((slot & ((UINT64_C(1) << WHOLE_TAG_SHIFT) - 1)) - 1));
            if (record->len == (uint64_t)n && memcmp(record->bytes, data, (size_t)n) == 0)
                return record->id;
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
    size_t records = 0;
    for (Py_ssize_t d = 0; d < n; d++) {
        if (items[d] == Py_None)
            continue;
        if (!PyBytes_Check(items[d])) {
            PyErr_SetString(PyExc_TypeError, "whole entries must be bytes or None");
            return -1;
        }
        if (PyBytes_GET_SIZE(items[d]) > (Py_ssize_t)UINT32_MAX) {
            PyErr_SetString(PyExc_OverflowError, "a whole piece too long for the C merge loop");
            return -1;
        }
        count++;
        records += WHOLE_RECORD_SIZE(PyBytes_GET_SIZE(items[d]));
    }
    if (count == 0)
        return 0;
    if (records >= (UINT64_C(1) << WHOLE_TAG_SHIFT) - 1) {
        PyErr_SetString(PyExc_OverflowError, "whole pieces too large for the C merge loop");
        return -1;
    }
    uint64_t size = 16;
    while (size < (uint64_t)count * 2 + 2)
        size *= 2;
    m->whole_slots = PyMem_Calloc(size, sizeof(uint64_t));
    m->whole_records = PyMem_Malloc(records);
    if (m->whole_slots == NULL || m->whole_records == NULL ||
        filter_alloc(&m->whole_filter, (uint64_t)count) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    m->whole_mask = size - 1;
    advise_huge_pages(m->whole_slots, size * sizeof(uint64_t));
    advise_huge_pages(m->whole_records, records);
    m->whole_longest = 0;
    for (Py_ssize_t d = 0; d < n; d++)
        if (items[d] != Py_None && PyBytes_GET_SIZE(items[d]) > m->whole_longest)
            m->whole_longest = PyBytes_GET_SIZE(items[d]);
    size_t used = 0;
    for (Py_ssize_t d = 0; d < n; d++) {
        if (items[d] == Py_None)
            continue;
        const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(items[d]);
        Py_ssize_t len = PyBytes_GET_SIZE(items[d]);
        if (whole_find(m, data, len) >= 0)
            continue; /* the first id with these bytes keeps them */
        WholeRecord *record = (WholeRecord *)(m->whole_records + used);
        record->id = (int32_t)d;
        record->len = (uint32_t)len;
        memcpy(record->bytes, data, (size_t)len);
        uint64_t h = bytes_hash(data, len);
        uint64_t i = h & m->whole_mask;
        while (m->whole_slots[i] != 0)
            i = (i + 1) & m->whole_mask;
        m->whole_slots[i] = WHOLE_SLOT(h, used);
        used += WHOLE_RECORD_SIZE(len);
        m->whole_records_len = used;
        filter_add(&m->whole_filter, h);
    }
    return 0;
}

/* The ``whole`` that whole_build took, made again from the records: a bytes object for each dense id the table
 * keeps, None for the others; None when there is no table.  NULL with an exception on failure. */
static PyObject *
whole_list(const Merger *m)
{
    if (m->whole_slots == NULL)
        return Py_NewRef(Py_None);
    PyObject *whole = PyList_New(m->n_ids);
    if (whole == NULL)
        return NULL;
    for (Py_ssize_t d = 0; d < m->n_ids; d++)
        PyList_SET_ITEM(whole, d, Py_NewRef(Py_None));
    for (size_t at = 0; at < m->whole_records_len;) {
        const WholeRecord *record = (const WholeRecord *)(m->whole_records + at);
        PyObject *data = PyBytes_FromStringAndSize((const char *)record->bytes, (Py_ssize_t)record->len);
        if (data == NULL) {
            Py_DECREF(whole);
            return NULL;
        }
        PyObject *none = PyList_GET_ITEM(whole, record->id);
        PyList_SET_ITEM(whole, record->id, data);
        Py_DECREF(none);
        at += WHOLE_RECORD_SIZE(record->len);
    }
    return whole;
}

#endif /* BPEPROOF_FASTENC_TABLE_H */
