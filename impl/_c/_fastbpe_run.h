/*
 * _fastbpe_run.h: a whole training run over partitions of the distinct words (def-bpe, rem-faster-training).
 *
 * 1. collect (each partition, in parallel): the words of the tables whose hash falls in it, counts added;
 * 2. build (in parallel): positions, and the pairs of bytes with their counts in each partition;
 * 3. join: a pair of the whole corpus for each pair of bytes that occurs anywhere, with the sum of the partitions'
 *    counts, on the heap (_fastbpe_heap.h);
 * 4. each step: the top of the heap is the rule r_j (its count is checked against the sum of the partitions'
 *    counts: lazy invalidation); every partition applies it to its own positions (part_merge), in parallel when
 *    the pair has at least ``parallel_min`` positions in all, else one after the other on this thread; then the
 *    pairs the partitions made are joined: the same (x, c) or (c, y) made in two partitions is one pair of the
 *    corpus (found by x or y, as in one partition), whose count is the sum of theirs, pushed on the heap.
 *
 * Exact for any number of partitions: a merge changes each word on its own (def-merge), so a partition's counts
 * are those of its words whatever the others hold; the sum over the partitions is N_j of all the words, and the
 * choice depends only on N_j and (a, b).  Partitions, threads and ids change the work's order, never a count.
 */

#ifndef BPEPROOF_FASTBPE_RUN_H
#define BPEPROOF_FASTBPE_RUN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_fastbpe_heap.h"
#include "_fastbpe_part.h"
#include "_fastbpe_tables.h"
#include "_fastbpe_threads.h"

/* A thread could not be started (its errno is in RunStats.error). */
#define RUN_NO_THREAD (-5)

/* Check for Ctrl-C every this many merges (the callback takes the GIL). */
#define CHECK_EVERY 256

/* When the helpers ran late on a step (their cores busy with other work), the next steps run on this thread: at
 * first BACKOFF_MIN of them, twice as many after each late step in a row, at most BACKOFF_MAX.  Steps of at least
 * BIG_STEP positions run in parallel even then: they pay for any wait. */
#define BACKOFF_MIN 16
#define BACKOFF_MAX 4096
#define BIG_STEP 65536

/* What a job of the team reads: the partitions and the inputs, and the current step. */
typedef struct {
    Part *part;
    int parts;
    const Table *tables;
    int n_tables;
    int64_t ids;
    int32_t *pid; /* each partition's id of the pair being merged */
    int32_t a, b, c, step;
} Work;

typedef struct {
    int64_t distinct;              /* distinct words, once collected */
    uint64_t words_low, words_high; /* all the words: words_high * 2**64 + words_low */
    int error;                     /* the errno of RUN_NO_THREAD */
} RunStats;

/* Returns nonzero when the run must stop (Ctrl-C: the callback has set the Python error). */
typedef int (*Interrupted)(void *context);

static void job_collect(void *arg, int t)
{
    Work *w = arg;
    part_collect(&w->part[t], w->tables, w->n_tables, t, w->parts);
}

static void job_build(void *arg, int t)
{
    Work *w = arg;
    part_build(&w->part[t], w->ids);
}

static void job_merge(void *arg, int t)
{
    Work *w = arg;
    part_merge(&w->part[t], w->pid[t], w->a, w->b, w->c, w->step);
}

/* The partitions (hundreds of thousands of lists, and the positions), freed once the rules are known: on a thread
 * of their own, while the caller goes on with the rules (team_later). */
typedef struct {
    Part *part;
    int parts;
} Leftovers;

/* Runs of fewer positions than this free their partitions at once, without a thread (which costs tens of
 * microseconds to start, more than freeing a small run's lists). */
#define FREE_LATER_MIN 65536

static void free_leftovers(void *raw)
{
    Leftovers *left = raw;
    for (int t = 0; t < left->parts; t++)
        part_free(&left->part[t]);
    free(left->part);
    free(left);
}

/* The first partition's failure, or 0. */
static int parts_status(const Part *part, int parts)
{
    for (int t = 0; t < parts; t++)
        if (part[t].status)
            return part[t].status;
    return 0;
}

/* Step 3: a pair of the corpus for each pair of bytes that occurs in some partition, on the heap, in the order of
 * the pairs (x << 8 | y).  The pairs are those the partitions listed (after part_build, a partition's pairs are its
 * pairs of bytes), sorted: not a scan of all 65,536, which would cost a small corpus more than its training. */
static int join_byte_pairs(Global *g)
{
    int64_t listed = 0;
    for (int t = 0; t < g->parts; t++)
        listed += g->part[t].n_pairs;
    int32_t *keys = malloc((size_t)(listed ? listed : 1) * sizeof(int32_t));
    if (!keys)
        return RUN_NO_MEMORY;
    int64_t n_keys = 0;
    for (int t = 0; t < g->parts; t++)
        for (int32_t local = 0; local < g->part[t].n_pairs; local++)
            keys[n_keys++] = g->part[t].pairs[local].a << 8 | g->part[t].pairs[local].b;
    qsort(keys, (size_t)n_keys, sizeof(int32_t), compare_positions); /* int32 order */
    for (int64_t k = 0; k < n_keys; k++) {
        int32_t key = keys[k];
        if (k > 0 && keys[k - 1] == key)
            continue;
        int32_t id = global_add_pair(g, key >> 8, key & 255);
        if (id < 0) {
            free(keys);
            return RUN_NO_MEMORY;
        }
        for (int t = 0; t < g->parts; t++)
            g->lid[(int64_t)id * g->parts + t] = part_byte_pair(&g->part[t], key >> 8, key & 255);
        HeapEntry e = {0, id};
        if (!global_count(g, id, &e.count)) {
            free(keys);
            return RUN_OVERFLOW;
        }
        if (heap_push(g, e) < 0) {
            free(keys);
            return RUN_NO_MEMORY;
        }
    }
    free(keys);
    for (int t = 0; t < g->parts; t++) {
        free(g->part[t].byte_id);
        g->part[t].byte_id = NULL;
    }
    return 0;
}

/* Growable list of the corpus's pairs made by one step, with their counts (the partitions' added up). */
typedef struct {
    int32_t *id;
    int64_t *count;
    int64_t len, cap;
} IdList;

static int id_list_add(IdList *list, int32_t id)
{
    if (list->len == list->cap) {
        int64_t cap = list->cap ? list->cap * 2 : 256;
        int32_t *ids = realloc(list->id, (size_t)cap * sizeof(int32_t));
        if (ids)
            list->id = ids;
        int64_t *counts = realloc(list->count, (size_t)cap * sizeof(int64_t));
        if (counts)
            list->count = counts;
        if (!ids || !counts)
            return -1;
        list->cap = cap;
    }
    list->count[list->len] = 0;
    list->id[list->len++] = id;
    return 0;
}

/*
 * The whole run on ``n_tables`` checked tables in ``parts`` partitions: at most ``merges`` merges (-1: as many as
 * there can be, N - K), their rules (a, b, c) in *rules (malloc'd, 3 ids each).  Returns the number of merges or
 * a RUN_ value; ``interrupted`` is called every CHECK_EVERY merges and between the phases.
 */
static int64_t run(const Table *tables, int n_tables, int parts, int64_t merges, int64_t parallel_min,
                   int32_t **rules, RunStats *stats, Interrupted interrupted, void *context)
{
    int64_t done = RUN_NO_MEMORY;
    Global g;
    memset(&g, 0, sizeof g);
    Team team;
    int32_t *left_id = NULL, *left_step = NULL, *right_id = NULL, *right_step = NULL;
    IdList made = {NULL, NULL, 0, 0};
    Part *part = calloc((size_t)parts, sizeof(Part));
    int32_t *pid = calloc((size_t)parts, sizeof(int32_t));
    Work w = {part, parts, tables, n_tables, 0, pid, 0, 0, 0, 0};
    *rules = NULL;
    int error = team_start(&team, parts);
    if (error) {
        stats->error = error;
        free(part);
        free(pid);
        return RUN_NO_THREAD;
    }
    if (!part || !pid)
        goto out;
    g.parts = parts;
    g.part = part;

    team_run(&team, job_collect, &w, 1);
    if ((done = parts_status(part, parts)) != 0)
        goto out;
    int64_t symbols = 0, distinct = 0;
    for (int t = 0; t < parts; t++) {
        symbols += part[t].symbols;
        distinct += part[t].n_words;
        uint64_t before = stats->words_low;
        stats->words_low += part[t].words_low;
        stats->words_high += part[t].words_high + (stats->words_low < before);
    }
    stats->distinct = distinct;
    /* prop-bpe-training-termination: every merge shortens some distinct word by one token, down to one. */
    if (merges < 0 || merges > symbols - distinct)
        merges = symbols - distinct;
    done = RUN_TOO_LARGE;
    if (symbols > INT32_MAX || 256 + merges > INT32_MAX)
        goto out;
    done = RUN_INTERRUPTED;
    if (interrupted(context))
        goto out;
    w.ids = 256 + merges;
    team_run(&team, job_build, &w, 1);
    if ((done = parts_status(part, parts)) != 0)
        goto out;
    done = RUN_INTERRUPTED;
    if (interrupted(context))
        goto out;
    done = RUN_NO_MEMORY;
    size_t ids = (size_t)w.ids;
    *rules = malloc((size_t)(merges ? merges : 1) * 3 * sizeof(int32_t));
    left_id = malloc(ids * sizeof(int32_t));
    left_step = malloc(ids * sizeof(int32_t));
    right_id = malloc(ids * sizeof(int32_t));
    right_step = malloc(ids * sizeof(int32_t));
    if (!*rules || !left_id || !left_step || !right_id || !right_step)
        goto out;
    for (size_t x = 0; x < ids; x++)
        left_step[x] = right_step[x] = -1;
    if ((done = join_byte_pairs(&g)) != 0)
        goto out;

    int64_t j = 0, serial_until = 0, backoff = BACKOFF_MIN;
    while (j < merges && g.heap_len) {
        HeapEntry top = g.heap[0];
        int64_t current;
        if (!global_count(&g, top.id, &current)) {
            done = RUN_OVERFLOW;
            goto out;
        }
        if (current != top.count) {
            if (current > 0) {
                g.heap[0].count = current;
                sift_down(&g, 0);
            } else {
                global_forget(&g, top.id);
                heap_pop(&g);
            }
            continue;
        }
        heap_pop(&g);
        const GPair best = g.pairs[top.id];
        int32_t c = 256 + (int32_t)j, step = (int32_t)j;
        (*rules)[3 * j] = best.a;
        (*rules)[3 * j + 1] = best.b;
        (*rules)[3 * j + 2] = c;
        int64_t occurrences = 0;
        for (int t = 0; t < parts; t++) {
            pid[t] = g.lid[(int64_t)top.id * parts + t];
            if (pid[t] >= 0)
                occurrences += part[t].pairs[pid[t]].occ_len;
        }
        w.a = best.a;
        w.b = best.b;
        w.c = c;
        w.step = step;
        int parallel = occurrences >= parallel_min && (j >= serial_until || occurrences >= BIG_STEP);
        int late = team_run(&team, job_merge, &w, parallel);
        if (parallel && occurrences < BIG_STEP) {
            if (late) {
                serial_until = j + backoff;
                backoff = backoff < BACKOFF_MAX ? 2 * backoff : BACKOFF_MAX;
            } else {
                backoff = BACKOFF_MIN;
            }
        }
        if ((done = parts_status(part, parts)) != 0)
            goto out;
        /* Join the pairs the partitions made: (x, c) by x, (c, y) by y (y is never c: see part_merge).  The ids
         * given now are first, first + 1, ...: a pair's count is added up at its place in ``made``. */
        made.len = 0;
        int32_t first = g.n_pairs;
        for (int t = 0; t < parts; t++) {
            const Part *pt = &part[t];
            for (int64_t k = 0; k < pt->n_touched; k++) {
                int32_t local = pt->touched[k];
                const Pair *pair = &pt->pairs[local];
                int left = pair->b == c;
                int32_t side = left ? pair->a : pair->b;
                int32_t *side_id = left ? left_id : right_id, *side_step = left ? left_step : right_step;
                if (side_step[side] != step) {
                    int32_t id = global_add_pair(&g, pair->a, pair->b);
                    if (id < 0 || id_list_add(&made, id) < 0) {
                        done = RUN_NO_MEMORY;
                        goto out;
                    }
                    side_id[side] = id;
                    side_step[side] = step;
                }
                g.lid[(int64_t)side_id[side] * parts + t] = local;
                if (!add_count(&made.count[side_id[side] - first], pt->count[local])) {
                    done = RUN_OVERFLOW;
                    goto out;
                }
            }
        }
        for (int64_t k = 0; k < made.len; k++) {
            HeapEntry e = {made.count[k], made.id[k]};
            if (e.count > 0 && heap_push(&g, e) < 0) {
                done = RUN_NO_MEMORY;
                goto out;
            }
        }
        j++;
        if (j % CHECK_EVERY == 0 && interrupted(context)) {
            done = RUN_INTERRUPTED;
            goto out;
        }
    }
    done = j;
out:
    team_stop(&team);
    if (part) {
        /* A small run's partitions are freed here: starting a thread would cost more than freeing them. */
        int64_t positions = 0;
        for (int t = 0; t < parts; t++)
            positions += part[t].symbols;
        Leftovers *left = positions >= FREE_LATER_MIN ? malloc(sizeof *left) : NULL;
        if (left) {
            left->part = part;
            left->parts = parts;
            team_later(free_leftovers, left);
        } else {
            for (int t = 0; t < parts; t++)
                part_free(&part[t]);
            free(part);
        }
    }
    free(pid);
    global_free(&g);
    free(made.id);
    free(made.count);
    free(left_id);
    free(left_step);
    free(right_id);
    free(right_step);
    if (done < 0) {
        free(*rules);
        *rules = NULL;
    }
    return done;
}

#endif /* BPEPROOF_FASTBPE_RUN_H */
