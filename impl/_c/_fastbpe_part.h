/*
 * _fastbpe_part.h: one partition of the distinct words, and a merge applied to it.
 *
 * The distinct words are split into partitions by their hash, one per thread.  A partition holds everything a
 * merge reads and writes in its words: their positions (a token array of doubly linked words), the pairs that
 * occur there with their counts over these words alone and the positions where each starts, and the pairs a
 * merge made.  No partition reads another's memory, so the threads apply a merge without a lock; the run
 * (_fastbpe_run.h) adds the partitions' counts of a pair to choose, exactly as one table of all the words would.
 *
 *  - part_collect takes the words of the tables whose hash falls in the partition; a word that is in several
 *    tables (counted by several workers) becomes one word with the sum of its counts;
 *  - part_build lays the words out as positions and counts the pairs of bytes (def-bpe step 2 on these words);
 *  - part_merge applies one rule (a, b -> c) to every position of the pair (a, b) here (def-merge): the loop of
 *    the module docstring of _fastbpe.c, on this partition's positions.
 */

#ifndef BPEPROOF_FASTBPE_PART_H
#define BPEPROOF_FASTBPE_PART_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_fastbpe_tables.h"

/* Results of the run other than a number of merges; a partition's status is 0 or one of them. */
#define RUN_NO_MEMORY (-1)
#define RUN_OVERFLOW (-2)
#define RUN_TOO_LARGE (-3)
#define RUN_INTERRUPTED (-4)

/* One position of the token array: everything a merge reads there, in one cache line or two. */
typedef struct {
    int32_t tok; /* the token, -1 once merged away */
    int32_t prv, nxt; /* the neighbours in the word, -1 at its ends */
    int32_t pid; /* the pair (tok, tok of nxt) in this partition, -1 at the end of the word */
    int32_t wid; /* the word */
} Pos;

/* A pair as one partition knows it. */
typedef struct {
    int32_t *occ; /* positions where the pair starts or once started, increasing */
    int32_t occ_len, occ_cap;
    int32_t a, b;
} Pair;

typedef struct {
    /* The words, while they are collected: where each lies, its length and hash; and their frequencies. */
    const unsigned char **word;
    uint32_t *len;
    uint64_t *hash;
    int64_t *freq;
    int64_t n_words, cap_words;
    uint64_t *slot; /* collect: a word's hash's upper half and its number, by hash; SLOT_FREE for none */
    uint64_t slot_mask;
    int64_t symbols;
    uint64_t words_low, words_high; /* the sum of the frequencies: words_high * 2**64 + words_low */
    /* The positions and the pairs. */
    Pos *pos;
    Pair *pairs;
    int64_t *count; /* this partition's share of N_j of each pair, apart from the pairs for locality */
    int32_t n_pairs, cap_pairs;
    /* build: the id of the pair of the bytes x, y at byte_index[x] * n_bytes + byte_index[y], -1 if it does not
     * occur; the bytes of the partition are numbered 0, 1, ... as they first occur (byte_index -1: absent). */
    int32_t *byte_id;
    int16_t byte_index[256];
    int32_t n_bytes;
    /* The pairs (x, c) and (c, y) made by the current step, by x and by y: valid when *_step is the step. */
    int32_t *left_id, *left_step, *right_id, *right_step;
    int32_t *touched; /* the pairs made by the current step */
    int64_t n_touched, cap_touched;
    int status;
    char apart[64]; /* partitions lie side by side: each one's fields in cache lines of its own (no false sharing) */
} Part;

/* Positions of one pair are scattered over the token array: ask for them a few visits ahead. */
#define PREFETCH 16
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH_POS(address) __builtin_prefetch((address), 1)
#define PREFETCH_READ(address) __builtin_prefetch((address), 0)
#else
#define PREFETCH_POS(address) ((void)0)
#define PREFETCH_READ(address) ((void)0)
#endif

#if defined(__linux__)
#include <sys/mman.h>
#endif

/* Memory for a large array that a merge reads at random: on Linux in huge pages where the system grants them
 * (transparent huge pages on madvise), which spares most of its page faults and TLB misses.  Freed by free(). */
static void *alloc_large(size_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const size_t huge = (size_t)2 << 20;
    if (size >= 2 * huge) {
        void *memory = NULL;
        if (posix_memalign(&memory, huge, size) != 0)
            return NULL;
        madvise(memory, size, MADV_HUGEPAGE);
        return memory;
    }
#endif
    return malloc(size);
}

/* *total += n; 0 (and *total unchanged) when the sum does not fit in int64. */
static inline int add_count(int64_t *total, int64_t n)
{
#if defined(__GNUC__) || defined(__clang__)
    int64_t sum;
    if (__builtin_add_overflow(*total, n, &sum))
        return 0;
    *total = sum;
#else
    if ((n > 0 && *total > INT64_MAX - n) || (n < 0 && *total < INT64_MIN - n))
        return 0;
    *total += n;
#endif
    return 1;
}

static void part_free(Part *pt)
{
    free(pt->word);
    free(pt->len);
    free(pt->hash);
    free(pt->freq);
    free(pt->slot);
    free(pt->pos);
    if (pt->pairs)
        for (int32_t id = 0; id < pt->n_pairs; id++)
            free(pt->pairs[id].occ);
    free(pt->pairs);
    free(pt->count);
    free(pt->byte_id);
    free(pt->left_id);
    free(pt->left_step);
    free(pt->right_id);
    free(pt->right_step);
    free(pt->touched);
    memset(pt, 0, sizeof *pt);
}

/* Room for ``cap`` words; -1 when out of memory. */
static int part_reserve_words(Part *pt, int64_t cap)
{
    const unsigned char **word = realloc((void *)pt->word, (size_t)cap * sizeof *word);
    if (word)
        pt->word = word;
    uint32_t *len = realloc(pt->len, (size_t)cap * sizeof *len);
    if (len)
        pt->len = len;
    uint64_t *hash = realloc(pt->hash, (size_t)cap * sizeof *hash);
    if (hash)
        pt->hash = hash;
    int64_t *freq = realloc(pt->freq, (size_t)cap * sizeof *freq);
    if (freq)
        pt->freq = freq;
    if (!word || !len || !hash || !freq)
        return -1;
    pt->cap_words = cap;
    return 0;
}

#define SLOT_FREE UINT64_MAX
#define SLOT(hash, w) (((hash) & 0xFFFFFFFF00000000ULL) | (uint64_t)(w))

/* The slot table with ``size`` slots (a power of two above twice the words); -1 when out of memory.  A slot holds
 * the upper half of the word's hash beside the word's number, so that a probe reads one place of memory. */
static int part_reslot(Part *pt, uint64_t size)
{
    uint64_t *slot = alloc_large((size_t)size * sizeof *slot);
    if (!slot)
        return -1;
    free(pt->slot);
    pt->slot = slot;
    pt->slot_mask = size - 1;
    memset(slot, 0xFF, (size_t)size * sizeof *slot);
    for (int64_t w = 0; w < pt->n_words; w++) {
        uint64_t s = pt->hash[w] & pt->slot_mask;
        while (slot[s] != SLOT_FREE)
            s = (s + 1) & pt->slot_mask;
        slot[s] = SLOT(pt->hash[w], w);
    }
    return 0;
}

/* One word of a table (hash h, count f) into the partition: a new word, or its count added to the same word's
 * (with ``dedupe``).  0, or a RUN_ value. */
static int part_add_word(Part *pt, const unsigned char *word, uint32_t n, uint64_t h, int64_t f, int dedupe)
{
    uint64_t s = 0;
    if (dedupe) {
        uint64_t entry, tag = SLOT(h, 0);
        for (s = h & pt->slot_mask; (entry = pt->slot[s]) != SLOT_FREE; s = (s + 1) & pt->slot_mask) {
            int64_t w = (int64_t)(entry & 0xFFFFFFFFULL);
            if ((entry & 0xFFFFFFFF00000000ULL) == tag && pt->len[w] == n && memcmp(pt->word[w], word, n) == 0)
                return add_count(&pt->freq[w], f) ? 0 : RUN_OVERFLOW;
        }
        if (pt->n_words >= (int64_t)0xFFFFFFFF)
            return RUN_TOO_LARGE;
    }
    if (pt->n_words == pt->cap_words && part_reserve_words(pt, 2 * pt->cap_words) < 0)
        return RUN_NO_MEMORY;
    int64_t w = pt->n_words++;
    pt->word[w] = word;
    pt->len[w] = n;
    pt->hash[w] = h;
    pt->freq[w] = f;
    pt->symbols += n;
    if (dedupe) {
        pt->slot[s] = SLOT(h, w);
        if ((uint64_t)pt->n_words * 2 > pt->slot_mask + 1 && part_reslot(pt, (pt->slot_mask + 1) * 2) < 0)
            return RUN_NO_MEMORY;
    }
    return 0;
}

/* Words read ahead in part_collect, so that their slots are asked for before they are probed. */
#define COLLECT_AHEAD 16

/*
 * The words of partition ``part`` of ``parts``: those whose hash is part modulo parts, from every table.  The words
 * of one table are distinct; several tables may hold the same word, whose counts are then added (slot table).
 * Sets status on failure.
 */
static void part_collect(Part *pt, const Table *tables, int n_tables, int part, int parts)
{
    int dedupe = n_tables > 1, status = 0;
    /* Sized for this partition's share of the words, with some room: the hash spreads them evenly. */
    int64_t expected = 0;
    for (int k = 0; k < n_tables; k++)
        expected += tables[k].n;
    expected = expected / parts + expected / (8 * parts) + 1024;
    uint64_t slots = 4096;
    while (slots < 2 * (uint64_t)expected)
        slots *= 2;
    if (part_reserve_words(pt, expected) < 0 || (dedupe && part_reslot(pt, slots) < 0)) {
        pt->status = RUN_NO_MEMORY;
        return;
    }
    struct {
        const unsigned char *word;
        uint32_t n;
        uint64_t h;
        int64_t f;
    } ahead[COLLECT_AHEAD];
    for (int k = 0; k < n_tables && !status; k++) {
        const Table *t = &tables[k];
        const unsigned char *p = t->data;
        for (int64_t i = 0; i < t->n && !status;) {
            /* The next words of this partition, their slots asked for; then each added. */
            int got = 0;
            for (; i < t->n && got < COLLECT_AHEAD; i++) {
                uint32_t n = table_length(t, i);
                const unsigned char *word = p;
                p += n;
                uint64_t h = parts > 1 || dedupe ? word_hash(word, n) : 0;
                if (parts > 1 && (int)((h >> 32) % (uint64_t)parts) != part)
                    continue;
                ahead[got].word = word;
                ahead[got].n = n;
                ahead[got].h = h;
                ahead[got].f = table_count(t, i);
                if (dedupe)
                    PREFETCH_READ(&pt->slot[h & pt->slot_mask]);
                got++;
            }
            for (int g = 0; g < got && !status; g++)
                status = part_add_word(pt, ahead[g].word, ahead[g].n, ahead[g].h, ahead[g].f, dedupe);
        }
    }
    free(pt->slot);
    pt->slot = NULL;
    free(pt->hash);
    pt->hash = NULL;
    if (status) {
        pt->status = status;
        return;
    }
    for (int64_t w = 0; w < pt->n_words; w++) {
        uint64_t before = pt->words_low;
        pt->words_low += (uint64_t)pt->freq[w];
        pt->words_high += pt->words_low < before;
    }
}

/* A new pair (a, b) with count 0 and no occurrences; -1 when out of memory. */
static int32_t part_add_pair(Part *pt, int32_t a, int32_t b)
{
    if (pt->n_pairs == pt->cap_pairs) {
        int32_t cap = pt->cap_pairs ? pt->cap_pairs * 2 : 1024;
        Pair *pairs = realloc(pt->pairs, (size_t)cap * sizeof(Pair));
        if (!pairs)
            return -1;
        pt->pairs = pairs;
        int64_t *count = realloc(pt->count, (size_t)cap * sizeof(int64_t));
        if (!count)
            return -1;
        pt->count = count;
        pt->cap_pairs = cap;
    }
    int32_t id = pt->n_pairs++;
    Pair *p = &pt->pairs[id];
    p->a = a;
    p->b = b;
    p->occ = NULL;
    p->occ_len = p->occ_cap = 0;
    pt->count[id] = 0;
    return id;
}

/*
 * Lay the collected words out as positions (the words one after another) and count their pairs of bytes: step 2
 * of def-bpe on this partition, N_0(a, b) = sum_k f_k cnt_{w_k}(a, b), with where each pair starts.  All tokens
 * are bytes here, so a pair's id is found in a table of B x B for the B distinct bytes of the partition (byte_id,
 * which the run reads to join the partitions' pairs, part_byte_pair): at most 256 x 256, and for a small corpus a
 * few entries where a table of all 65,536 pairs of bytes would cost more to clear than the training.  The lists
 * are sized by a first pass.  ``ids`` is 256 + the merges to make.
 */
static void part_build(Part *pt, int64_t ids)
{
    int32_t total = (int32_t)pt->symbols;
    pt->pos = alloc_large((size_t)(total ? total : 1) * sizeof(Pos));
    pt->left_id = malloc((size_t)ids * sizeof(int32_t));
    pt->left_step = malloc((size_t)ids * sizeof(int32_t));
    pt->right_id = malloc((size_t)ids * sizeof(int32_t));
    pt->right_step = malloc((size_t)ids * sizeof(int32_t));
    if (!pt->pos || !pt->left_id || !pt->left_step || !pt->right_id || !pt->right_step)
        goto no_memory;
    for (int64_t x = 0; x < ids; x++)
        pt->left_step[x] = pt->right_step[x] = -1;
    memset(pt->byte_index, 0xFF, sizeof pt->byte_index);
    pt->n_bytes = 0;
    int32_t at = 0;
    for (int64_t w = 0; w < pt->n_words; w++) {
        const unsigned char *data = pt->word[w];
        int32_t size = (int32_t)pt->len[w];
        for (int32_t i = 0; i < size; i++) {
            Pos *here = &pt->pos[at + i];
            here->tok = data[i];
            if (pt->byte_index[data[i]] < 0)
                pt->byte_index[data[i]] = (int16_t)pt->n_bytes++;
            here->prv = i ? at + i - 1 : -1;
            here->nxt = i + 1 < size ? at + i + 1 : -1;
            here->pid = -1;
            here->wid = (int32_t)w;
        }
        at += size;
    }
    free((void *)pt->word);
    pt->word = NULL;
    free(pt->len);
    pt->len = NULL;

    Pos *pos = pt->pos;
    int32_t table = pt->n_bytes * pt->n_bytes;
    pt->byte_id = malloc((size_t)(table ? table : 1) * sizeof(int32_t));
    if (!pt->byte_id)
        goto no_memory;
    for (int32_t x = 0; x < table; x++)
        pt->byte_id[x] = -1;
    for (int32_t p = 0; p < total; p++) {
        if (pos[p].nxt < 0)
            continue;
        int32_t key = pt->byte_index[pos[p].tok] * pt->n_bytes + pt->byte_index[pos[p + 1].tok];
        int32_t id = pt->byte_id[key];
        if (id < 0) {
            id = pt->byte_id[key] = part_add_pair(pt, pos[p].tok, pos[p + 1].tok);
            if (id < 0)
                goto no_memory;
        }
        pt->pairs[id].occ_cap++;
        if (!add_count(&pt->count[id], pt->freq[pos[p].wid])) {
            pt->status = RUN_OVERFLOW;
            return;
        }
        pos[p].pid = id;
    }
    for (int32_t id = 0; id < pt->n_pairs; id++) {
        pt->pairs[id].occ = malloc((size_t)pt->pairs[id].occ_cap * sizeof(int32_t));
        if (!pt->pairs[id].occ)
            goto no_memory;
    }
    for (int32_t p = 0; p < total; p++) {
        if (pos[p].pid >= 0) {
            Pair *pair = &pt->pairs[pos[p].pid];
            pair->occ[pair->occ_len++] = p;
        }
    }
    return;
no_memory:
    pt->status = RUN_NO_MEMORY;
}

/* The id of the pair of the bytes x, y in the partition after part_build, -1 if it does not occur there. */
static inline int32_t part_byte_pair(const Part *pt, int32_t x, int32_t y)
{
    int32_t i = pt->byte_index[x], k = pt->byte_index[y];
    return i < 0 || k < 0 ? -1 : pt->byte_id[i * pt->n_bytes + k];
}

/* Append position pos to the occurrence list of a pair. */
static int add_occ(Pair *p, int32_t pos)
{
    if (p->occ_len == p->occ_cap) {
        int32_t cap = p->occ_cap ? p->occ_cap * 2 : 2;
        int32_t *occ = realloc(p->occ, (size_t)cap * sizeof(int32_t));
        if (!occ)
            return -1;
        p->occ = occ;
        p->occ_cap = cap;
    }
    p->occ[p->occ_len++] = pos;
    return 0;
}

/* A new pair (a, b) made by the current step, listed in ``touched``; -1 when out of memory. */
static int32_t part_new_pair(Part *pt, int32_t a, int32_t b)
{
    if (pt->n_touched == pt->cap_touched) {
        int64_t cap = pt->cap_touched ? pt->cap_touched * 2 : 256;
        int32_t *t = realloc(pt->touched, (size_t)cap * sizeof(int32_t));
        if (!t)
            return -1;
        pt->touched = t;
        pt->cap_touched = cap;
    }
    int32_t id = part_add_pair(pt, a, b);
    if (id < 0)
        return -1;
    pt->touched[pt->n_touched++] = id;
    return id;
}

static int compare_positions(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/*
 * Step ``step`` of def-bpe in this partition: the rule (a, b -> c) applied to every position of the pair
 * ``pid`` (this partition's id of (a, b), -1 when it does not occur here).  The pairs it makes are listed in
 * ``touched`` with their counts here; (a, b) is left with none.  Sets status on failure.
 */
static void part_merge(Part *pt, int32_t pid, int32_t a, int32_t b, int32_t c, int32_t step)
{
    pt->n_touched = 0;
    if (pid < 0)
        return;
    Pair *best = &pt->pairs[pid];
    int32_t *occ = best->occ;
    int32_t occ_len = best->occ_len;
    best->occ = NULL;
    best->occ_len = best->occ_cap = 0;
    /* Lists are built in increasing order; sort in case one is not. */
    for (int32_t k = 1; k < occ_len; k++) {
        if (occ[k - 1] > occ[k]) {
            qsort(occ, (size_t)occ_len, sizeof(int32_t), compare_positions);
            break;
        }
    }
    Pos *pos = pt->pos;
    const int64_t *freq = pt->freq;
    int32_t *left_id = pt->left_id, *left_step = pt->left_step, *right_id = pt->right_id;
    int32_t *right_step = pt->right_step;
    int64_t *count = pt->count;
    /* A merge visits the positions of its pair in increasing order, the left-to-right order of M_r in each word. */
    for (int32_t k = 0; k < occ_len; k++) {
        int32_t p = occ[k];
        Pos *here = &pos[p];
        if (k + PREFETCH < occ_len) {
            /* the position and, usually, its neighbours l, q and r */
            Pos *ahead = &pos[occ[k + PREFETCH]];
            PREFETCH_POS(ahead);
            if (occ[k + PREFETCH] > 0)
                PREFETCH_POS(ahead - 1);
            if (occ[k + PREFETCH] + 2 < pt->symbols)
                PREFETCH_POS(ahead + 2);
        }
        if (k + PREFETCH / 2 < occ_len) {
            /* half as far ahead, the positions asked for above have come: what they point to (the word's
             * frequency, the counts of the pairs at l and at q) */
            const Pos *near = &pos[occ[k + PREFETCH / 2]];
            PREFETCH_READ(&freq[near->wid]);
            if (near->prv >= 0 && pos[near->prv].pid >= 0)
                PREFETCH_POS(&count[pos[near->prv].pid]);
            if (near->nxt >= 0 && pos[near->nxt].pid >= 0)
                PREFETCH_POS(&count[pos[near->nxt].pid]);
        }
        if (here->tok != a)
            continue; /* merged away, or changed by an earlier merge */
        int32_t q = here->nxt;
        if (q < 0 || pos[q].tok != b)
            continue;
        int64_t f = freq[here->wid];
        int32_t l = here->prv, r = pos[q].nxt;
        if (l >= 0) {
            /* left neighbour x: (x, a) becomes (x, c); x is read now, so it is c after a merge at l */
            int32_t x = pos[l].tok;
            count[pos[l].pid] -= f;
            if (left_step[x] != step) {
                int32_t id = part_new_pair(pt, x, c);
                if (id < 0)
                    goto no_memory;
                count = pt->count;
                left_id[x] = id;
                left_step[x] = step;
            }
            int32_t id = left_id[x];
            if (!add_count(&count[id], f))
                goto overflow;
            if (add_occ(&pt->pairs[id], l) < 0)
                goto no_memory;
            pos[l].pid = id;
        }
        if (r >= 0) {
            /* right neighbour y: (b, y) becomes (c, y) */
            int32_t y = pos[r].tok;
            count[pos[q].pid] -= f;
            if (right_step[y] != step) {
                int32_t id = part_new_pair(pt, c, y);
                if (id < 0)
                    goto no_memory;
                count = pt->count;
                right_id[y] = id;
                right_step[y] = step;
            }
            int32_t id = right_id[y];
            if (!add_count(&count[id], f))
                goto overflow;
            if (add_occ(&pt->pairs[id], p) < 0)
                goto no_memory;
            here->pid = id;
            pos[r].prv = p;
        } else {
            here->pid = -1;
        }
        here->tok = c;
        here->nxt = r;
        pos[q].tok = -1;
    }
    free(occ);
    pt->count[pid] = 0; /* M_r leaves no (a, b) behind */
    return;
overflow:
    pt->status = RUN_OVERFLOW;
    free(occ);
    return;
no_memory:
    pt->status = RUN_NO_MEMORY;
    free(occ);
}

#endif /* BPEPROOF_FASTBPE_PART_H */
