/*
 * _fastenc_merge.h: the merge loop of the Merger, enc_R of one word over the pair table (def-bpe).
 *
 * Included by _fastenc.c after _fastenc_table.h.  It provides the work space (ensure_capacity), the two loops
 * (merge_short: a flat array scanned for the minimum; merge_long: a linked list and a heap of (rank, position)
 * keys; see the module documentation in _fastenc.c), merge (the whole-piece table first, then the loop the
 * word's length picks), first_unreported (a merged id without an id to report) and result_tuple (the reported
 * ids of a merged word).
 *
 * Merging: merge reads the word's bytes from w->bytes[0..n) of a thread's Work and leaves its dense ids in w->tok;
 * the loops work on w->tok[0..n) and return the length of the result there.  None of them calls the interpreter,
 * so that threads run them with the GIL released.
 */

#ifndef BPEPROOF_FASTENC_MERGE_H
#define BPEPROOF_FASTENC_MERGE_H

#include "_fastenc_table.h"

/* Words of at most this many bytes are merged in a flat array. */
#ifndef SHORT_WORD
#define SHORT_WORD 48
#endif

/* Room in w for a word of n bytes; -1 when out of memory (no exception: the caller raises, holding the GIL). */
static int
ensure_capacity(Work *w, Py_ssize_t n)
{
    if (n <= w->cap)
        return 0;
    Py_ssize_t cap = w->cap ? w->cap : 64;
    while (cap < n)
        cap *= 2;
    int32_t *tok = PyMem_RawRealloc(w->tok, (size_t)cap * sizeof(int32_t));
    if (tok == NULL)
        return -1;
    w->tok = tok;
    uint64_t *aux = PyMem_RawRealloc(w->aux, (size_t)cap * sizeof(uint64_t));
    if (aux == NULL)
        return -1;
    w->aux = aux;
    int32_t *nxt = PyMem_RawRealloc(w->nxt, (size_t)cap * sizeof(int32_t));
    if (nxt == NULL)
        return -1;
    w->nxt = nxt;
    int32_t *prv = PyMem_RawRealloc(w->prv, (size_t)cap * sizeof(int32_t));
    if (prv == NULL)
        return -1;
    w->prv = prv;
    /* At most n - 1 initial entries and two per merge: 3n bounds the heap. */
    uint64_t *heap = PyMem_RawRealloc(w->heap, (size_t)cap * 3 * sizeof(uint64_t));
    if (heap == NULL)
        return -1;
    w->heap = heap;
    unsigned char *bytes = PyMem_RawRealloc(w->bytes, (size_t)cap);
    if (bytes == NULL)
        return -1;
    w->bytes = bytes;
    w->cap = cap;
    return 0;
}

static Py_ssize_t
merge_short(const Merger *m, Work *w, Py_ssize_t n)
{
    int32_t *tok = w->tok;
    uint64_t *rk = w->aux;
    if (n < 2)
        return n;
    for (Py_ssize_t i = 0; i + 1 < n; i++)
        rk[i] = lookup(m, tok[i], tok[i + 1]);
    Py_ssize_t len = n;
    while (len > 1) {
        uint64_t best = NO_VALUE;
        Py_ssize_t at = -1;
        for (Py_ssize_t i = 0; i + 1 < len; i++) {
            /* the leftmost pair of the lowest rank, by rank alone: pairs of one rank may join into different
               units (sentencepiece's pieces of equal score), and the leftmost of them joins first */
            if ((rk[i] >> 32) < (best >> 32)) {
                best = rk[i];
                at = i;
            }
        }
        if (at < 0)
            break;
        tok[at] = RESULT_OF(best);
        memmove(tok + at + 1, tok + at + 2, (size_t)(len - at - 2) * sizeof(int32_t));
        memmove(rk + at, rk + at + 1, (size_t)(len - at - 2) * sizeof(uint64_t));
        len--;
        if (at > 0)
            rk[at - 1] = lookup(m, tok[at - 1], tok[at]);
        if (at + 1 < len)
            rk[at] = lookup(m, tok[at], tok[at + 1]);
    }
    return len;
}

static inline void
heap_push(uint64_t *heap, Py_ssize_t *size, uint64_t key)
{
    Py_ssize_t i = (*size)++;
    while (i > 0) {
        Py_ssize_t parent = (i - 1) / 2;
        if (heap[parent] <= key)
            break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = key;
}

static inline uint64_t
heap_pop(uint64_t *heap, Py_ssize_t *size)
{
    uint64_t top = heap[0];
    uint64_t last = heap[--(*size)];
    Py_ssize_t n = *size, i = 0;
    for (;;) {
        Py_ssize_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && heap[child + 1] < heap[child])
            child++;
        if (heap[child] >= last)
            break;
        heap[i] = heap[child];
        i = child;
    }
    if (n > 0)
        heap[i] = last;
    return top;
}

#define HEAP_KEY(rank, pos) (((uint64_t)(uint32_t)(rank) << 32) | (uint32_t)(pos))

static Py_ssize_t
merge_long(const Merger *m, Work *w, Py_ssize_t n)
{
    int32_t *tok = w->tok, *nxt = w->nxt, *prv = w->prv;
    uint64_t *heap = w->heap;
    Py_ssize_t size = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        nxt[i] = (int32_t)(i + 1);
        prv[i] = (int32_t)(i - 1);
    }
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        uint64_t v = lookup(m, tok[i], tok[i + 1]);
        if (v != NO_VALUE)
            heap[size++] = HEAP_KEY(RANK_OF(v), i);
    }
    /* Initial keys are made in increasing position order; a heap needs them sifted. */
    for (Py_ssize_t start = size / 2 - 1; start >= 0; start--) {
        uint64_t key = heap[start];
        Py_ssize_t i = start;
        for (;;) {
            Py_ssize_t child = 2 * i + 1;
            if (child >= size)
                break;
            if (child + 1 < size && heap[child + 1] < heap[child])
                child++;
            if (heap[child] >= key)
                break;
            heap[i] = heap[child];
            i = child;
        }
        heap[i] = key;
    }
    while (size > 0) {
        uint64_t key = heap_pop(heap, &size);
        int32_t r = (int32_t)(key >> 32);
        int32_t i = (int32_t)(key & 0xFFFFFFFFu);
        if (tok[i] < 0)
            continue;
        int32_t j = nxt[i];
        if (j >= n)
            continue;
        uint64_t v = lookup(m, tok[i], tok[j]);
        if (v == NO_VALUE || RANK_OF(v) != r)
            continue;
        int32_t c = RESULT_OF(v);
        tok[i] = c;
        tok[j] = -1;
        int32_t k = nxt[j];
        nxt[i] = k;
        if (k < n) {
            prv[k] = i;
            uint64_t after = lookup(m, c, tok[k]);
            if (after != NO_VALUE)
                heap_push(heap, &size, HEAP_KEY(RANK_OF(after), i));
        }
        int32_t p = prv[i];
        if (p >= 0) {
            uint64_t before = lookup(m, tok[p], c);
            if (before != NO_VALUE)
                heap_push(heap, &size, HEAP_KEY(RANK_OF(before), p));
        }
    }
    Py_ssize_t len = 0;
    for (Py_ssize_t i = 0; i < n; i = nxt[i])
        tok[len++] = tok[i];
    return len;
}

/* w->bytes[0..n) holds a word's bytes: w->tok gets the whole-piece id if the table has the word, else its units
 * merged; the number of ids is returned. */
static Py_ssize_t
merge(const Merger *m, Work *w, Py_ssize_t n)
{
    int32_t *tok = w->tok;
    const unsigned char *bytes = w->bytes;
    if (n > 1) {
        int32_t d = whole_find(m, bytes, n);
        if (d >= 0) {
            tok[0] = d;
            return 1;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++)
        tok[i] = m->byte_units[bytes[i]];
    return n <= SHORT_WORD ? merge_short(m, w, n) : merge_long(m, w, n);
}

/* The position of the first of ids[0..len) that has no id to report (a byte the vocabulary lacks), or -1. */
static inline Py_ssize_t
first_unreported(const Merger *m, const int32_t *ids, Py_ssize_t len)
{
    for (Py_ssize_t i = 0; i < len; i++)
        if (m->outputs[ids[i]] == Py_None)
            return i;
    return -1;
}

/* The error for a merged word holding the byte ``byte``, which has no id to report. */
static void
raise_unreported(int32_t byte)
{
    PyErr_Format(PyExc_ValueError, "byte 0x%02x has no token in the vocabulary and no token covers it here", byte);
}

/* The ids of ids[0..len) as a tuple, each output that is a tuple spelt out in its place. */
static PyObject *
spelt_tuple(const Merger *m, const int32_t *ids, Py_ssize_t len)
{
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *out = m->outputs[ids[i]];
        total += PyTuple_Check(out) ? PyTuple_GET_SIZE(out) : 1;
    }
    PyObject *tuple = PyTuple_New(total);
    if (tuple == NULL)
        return NULL;
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *out = m->outputs[ids[i]];
        Py_ssize_t n = PyTuple_Check(out) ? PyTuple_GET_SIZE(out) : 1;
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *id = PyTuple_Check(out) ? PyTuple_GET_ITEM(out, k) : out;
            Py_INCREF(id);
            PyTuple_SET_ITEM(tuple, at++, id);
        }
    }
    return tuple;
}

/* The reported ids of a merged word as a tuple (``spelt`` outputs spelt out); NULL with an exception. */
static PyObject *
result_tuple(const Merger *m, const Work *w, Py_ssize_t len)
{
    Py_ssize_t bad = first_unreported(m, w->tok, len);
    if (bad >= 0) {
        raise_unreported(w->tok[bad]);
        return NULL;
    }
    if (m->spelt)
        return spelt_tuple(m, w->tok, len);
    PyObject *tuple = PyTuple_New(len);
    if (tuple == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *id = m->outputs[w->tok[i]];
        Py_INCREF(id);
        PyTuple_SET_ITEM(tuple, i, id);
    }
    return tuple;
}

#endif /* BPEPROOF_FASTENC_MERGE_H */
