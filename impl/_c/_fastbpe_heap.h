/*
 * _fastbpe_heap.h: the pairs of the whole corpus and the heap that chooses the next merge.
 *
 * A pair of the whole corpus (Global) knows its tokens (a, b) and, for each partition, that partition's id of it
 * (-1 where it does not occur).  Its count N_j(a, b) is the sum of the partitions' counts: the sum over all the
 * words, however they are partitioned.  The heap is keyed (-count, a, b) (def-bpe step 4: the largest count,
 * ties to the smallest pair), with lazy invalidation: counts of old pairs only decrease and every new pair
 * contains the new id, so a pair is pushed once, after the step that creates it, and an entry whose count is out
 * of date is refreshed when it reaches the top.  Neither a pair's id nor the order of the partitions enters the
 * key: the choice is the same for any number of partitions.
 */

#ifndef BPEPROOF_FASTBPE_HEAP_H
#define BPEPROOF_FASTBPE_HEAP_H

#include <stdint.h>
#include <stdlib.h>

#include "_fastbpe_part.h"

typedef struct {
    int64_t count;
    int32_t id;
} HeapEntry;

typedef struct {
    int32_t a, b;
} GPair;

typedef struct {
    int parts;
    Part *part;
    GPair *pairs;
    int32_t *lid; /* lid[id * parts + t]: partition t's id of the pair, -1 where it does not occur */
    int32_t n_pairs, cap_pairs;
    HeapEntry *heap;
    int64_t heap_len, heap_cap;
} Global;

/* A new pair (a, b) that occurs in no partition yet; -1 when out of memory. */
static int32_t global_add_pair(Global *g, int32_t a, int32_t b)
{
    if (g->n_pairs == g->cap_pairs) {
        int32_t cap = g->cap_pairs ? g->cap_pairs * 2 : 1024;
        GPair *pairs = realloc(g->pairs, (size_t)cap * sizeof(GPair));
        if (!pairs)
            return -1;
        g->pairs = pairs;
        int32_t *lid = realloc(g->lid, (size_t)cap * (size_t)g->parts * sizeof(int32_t));
        if (!lid)
            return -1;
        g->lid = lid;
        g->cap_pairs = cap;
    }
    int32_t id = g->n_pairs++;
    g->pairs[id].a = a;
    g->pairs[id].b = b;
    for (int t = 0; t < g->parts; t++)
        g->lid[(int64_t)id * g->parts + t] = -1;
    return id;
}

/* N_j of a pair: the sum of the partitions' counts; 0 (and *total unchanged) when it does not fit in int64. */
static int global_count(const Global *g, int32_t id, int64_t *total)
{
    int64_t sum = 0;
    const int32_t *lid = &g->lid[(int64_t)id * g->parts];
    for (int t = 0; t < g->parts; t++)
        if (lid[t] >= 0 && !add_count(&sum, g->part[t].count[lid[t]]))
            return 0;
    *total = sum;
    return 1;
}

/* The positions of a pair that is gone for good (its count is 0): an old pair never comes back. */
static void global_forget(Global *g, int32_t id)
{
    for (int t = 0; t < g->parts; t++) {
        int32_t l = g->lid[(int64_t)id * g->parts + t];
        if (l >= 0) {
            Pair *pair = &g->part[t].pairs[l];
            free(pair->occ);
            pair->occ = NULL;
            pair->occ_len = pair->occ_cap = 0;
        }
    }
}

/* Heap order: larger count first, then the smaller pair (a, b) (def-bpe step 4). */
static inline int before(const Global *g, HeapEntry x, HeapEntry y)
{
    if (x.count != y.count)
        return x.count > y.count;
    const GPair *p = &g->pairs[x.id], *q = &g->pairs[y.id];
    if (p->a != q->a)
        return p->a < q->a;
    return p->b < q->b;
}

static void sift_down(Global *g, int64_t i)
{
    HeapEntry *h = g->heap;
    int64_t n = g->heap_len;
    HeapEntry e = h[i];
    for (;;) {
        int64_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && before(g, h[child + 1], h[child]))
            child++;
        if (!before(g, h[child], e))
            break;
        h[i] = h[child];
        i = child;
    }
    h[i] = e;
}

static int heap_push(Global *g, HeapEntry e)
{
    if (g->heap_len == g->heap_cap) {
        int64_t cap = g->heap_cap ? g->heap_cap * 2 : 1024;
        HeapEntry *heap = realloc(g->heap, (size_t)cap * sizeof(HeapEntry));
        if (!heap)
            return -1;
        g->heap = heap;
        g->heap_cap = cap;
    }
    int64_t i = g->heap_len++;
    while (i > 0) {
        int64_t parent = (i - 1) / 2;
        if (!before(g, e, g->heap[parent]))
            break;
        g->heap[i] = g->heap[parent];
        i = parent;
    }
    g->heap[i] = e;
    return 0;
}

static void heap_pop(Global *g)
{
    g->heap[0] = g->heap[--g->heap_len];
    if (g->heap_len)
        sift_down(g, 0);
}

static void global_free(Global *g)
{
    free(g->pairs);
    free(g->lid);
    free(g->heap);
}

#endif /* BPEPROOF_FASTBPE_HEAP_H */
