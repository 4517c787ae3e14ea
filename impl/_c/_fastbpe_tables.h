/*
 * _fastbpe_tables.h: word-count tables packed into one buffer, the trainer's input (impl/io/packed_counts.py
 * describes the layout and writes it in Python; _fastenc_count.h's WordCounter.pack writes it in C).
 *
 *   8 bytes   "bpecnt1\n"
 *   int64     n, the number of words
 *   int64     their bytes in all
 *   int64[n]  the count of each word (>= 1)
 *   uint32[n] the length of each word (>= 1)
 *   0-4 bytes zeros, up to a multiple of 8
 *   bytes     the words one after the other
 *
 * Integers are in the machine's order: a table travels between processes of one machine.  A table is read where
 * it lies (the counts and lengths with memcpy, so that no alignment is assumed); table_open checks every field
 * once, before anything else reads it.
 */

#ifndef BPEPROOF_FASTBPE_TABLES_H
#define BPEPROOF_FASTBPE_TABLES_H

#include <stdint.h>
#include <string.h>

#define TABLE_MAGIC "bpecnt1\n"
#define TABLE_HEADER 24

typedef struct {
    int64_t n;                    /* words */
    int64_t n_bytes;              /* their bytes */
    const unsigned char *counts;  /* n int64 */
    const unsigned char *lengths; /* n uint32 */
    const unsigned char *data;    /* n_bytes */
} Table;

static inline int64_t table_count(const Table *t, int64_t i)
{
    int64_t v;
    memcpy(&v, t->counts + 8 * i, 8);
    return v;
}

static inline uint32_t table_length(const Table *t, int64_t i)
{
    uint32_t v;
    memcpy(&v, t->lengths + 4 * i, 4);
    return v;
}

/* The size of a table of n words of n_bytes bytes; -1 when it would not fit in int64. */
static inline int64_t table_size(int64_t n, int64_t n_bytes)
{
    if (n < 0 || n_bytes < 0 || n > (INT64_MAX - TABLE_HEADER - 8) / 16 || n_bytes > INT64_MAX / 2)
        return -1;
    return TABLE_HEADER + 8 * n + ((4 * n + 7) & ~(int64_t)7) + n_bytes;
}

/* Read a table from ``size`` bytes at ``buf``: NULL when it is well formed, else what is wrong. */
static inline const char *table_open(Table *t, const unsigned char *buf, int64_t size)
{
    if (size < TABLE_HEADER || memcmp(buf, TABLE_MAGIC, 8) != 0)
        return "not a packed count table";
    memcpy(&t->n, buf + 8, 8);
    memcpy(&t->n_bytes, buf + 16, 8);
    if (table_size(t->n, t->n_bytes) != size)
        return "a packed count table whose size does not match its header";
    t->counts = buf + TABLE_HEADER;
    t->lengths = t->counts + 8 * t->n;
    t->data = buf + TABLE_HEADER + 8 * t->n + ((4 * t->n + 7) & ~(int64_t)7);
    int64_t total = 0;
    for (int64_t i = 0; i < t->n; i++) {
        uint32_t length = table_length(t, i);
        if (length == 0)
            return "a packed count table with an empty word";
        total += length;
        if (total > t->n_bytes)
            break;
        if (table_count(t, i) < 1)
            return "a packed count table with a count below 1";
    }
    if (total != t->n_bytes)
        return "a packed count table whose words do not add up to its size";
    return NULL;
}

/* A word's hash, eight bytes at a time: it chooses the word's partition and its slot there.  (The partitions are
 * any split of the words: the hash decides how fast, never what is learned.) */
static inline uint64_t word_hash(const unsigned char *p, uint32_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        h = (h ^ v) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    uint64_t v = 0;
    memcpy(&v, p, n);
    h = (h ^ v) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
    return h;
}

#endif /* BPEPROOF_FASTBPE_TABLES_H */
