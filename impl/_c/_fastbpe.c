/*
 * _fastbpe: the merge loop of bpeproof.impl.trainer in C (def-bpe, rem-faster-training).
 *
 * train(words: list[bytes], freqs: list[int], merges: int) -> list[tuple[int, int, int]]
 *
 * ``words`` are the distinct words of a corpus (each non-empty), ``freqs`` their
 * frequencies (>= 1), ``merges`` the number of merges to make at most.  The
 * result is the rule list (a, b, 256 + j) of def-bpe: at each step the pair with
 * the largest count N_j(a, b) = sum_k f_k cnt_{x_k}(a, b), ties to the smallest
 * (a, b); the rule is applied to every word left to right without overlaps
 * (def-merge).  It stops early when no pair is left.
 *
 * The algorithm is the one of impl/trainer.py (_train_strings), one level finer:
 * the words are doubly linked lists of positions in one token array, and a pair
 * lists the positions where it starts rather than the words it occurs in.
 *
 *  - pairs: each has its count and its occurrence list, which may hold stale
 *    positions (checked when read); every position knows the id of the pair it
 *    starts, so an old pair is never looked up.  No hash table is needed: the
 *    initial pairs are pairs of bytes (a 256 x 256 table), every later pair
 *    contains the newest id c, and the pairs (x, c) and (c, y) of one step are
 *    found in arrays indexed by x and y;
 *  - a merge visits the positions of its pair in increasing order, which is the
 *    left-to-right order of M_r inside each word (def-merge): a position is merged
 *    when it still holds a, its successor still holds b and it was not consumed by
 *    the merge just left of it (a a a with (a, a) gives c a);
 *  - each merge at p (neighbours l, r) replaces (x, a) by (x, c) and (b, y) by
 *    (c, y), reading x and y from the current state, so that runs come out right:
 *    for a a a a the (c, a) added by the first merge is taken back by the second,
 *    which adds (c, c);
 *  - heap keyed (-count, a, b) with lazy invalidation: counts of old pairs only
 *    decrease and every new pair contains the new id, so a pair is pushed once,
 *    after the step that creates it, and an entry whose count is out of date is
 *    refreshed when it reaches the top.
 *
 * A merge costs O(occurrences · log), and every occurrence entry is made by the
 * initial count or by an earlier merge: O(N log N) in all.  Deterministic.
 *
 * Inputs are copied before anything is sized or used: the two lists are copied
 * (owned references), every frequency is converted to int64 (which may run
 * Python code: ``__index__``), and only then are the words checked and their
 * bytes copied into the token array.  Counts are int64 and every addition to
 * one is checked: a count beyond 2**63 - 1 is an OverflowError, never wrong
 * rules.  Only the initial count can overflow (a merge gives a new pair at most
 * the count of the old pair it replaces), but the merge loop checks its
 * additions too.  Subtractions need no check: a count is the sum of the
 * frequencies of the positions that start its pair, so it never drops below 0.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t *occ; /* positions where the pair starts or once started, increasing */
    int32_t occ_len, occ_cap;
    int32_t a, b;
} Pair;

/* One position of the token array: everything a merge reads there, in one cache line or two. */
typedef struct {
    int32_t tok; /* the token, -1 once merged away */
    int32_t prv, nxt; /* the neighbours in the word, -1 at its ends */
    int32_t pid; /* the pair (tok, tok of nxt), -1 at the end of the word */
    int32_t wid; /* the word */
} Pos;

typedef struct {
    int64_t count;
    int32_t id;
} HeapEntry;

/* Positions of one pair are scattered over the token array: ask for them a few visits ahead. */
#define PREFETCH 16
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH_POS(address) __builtin_prefetch((address), 1)
#else
#define PREFETCH_POS(address) ((void)0)
#endif

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

/* Results of run() other than a number of merges. */
#define RUN_NO_MEMORY (-1)
#define RUN_OVERFLOW (-2)

typedef struct {
    Pair *pairs;
    int64_t *count; /* N_j of each pair, apart from the pairs for locality */
    int32_t n_pairs, cap_pairs;
    HeapEntry *heap;
    int64_t heap_len, heap_cap;
} State;

/* A new pair (a, b) with count 0 and no occurrences; -1 when out of memory. */
static int32_t add_pair(State *s, int32_t a, int32_t b)
{
    if (s->n_pairs == s->cap_pairs) {
        int32_t cap = s->cap_pairs * 2;
        Pair *pairs = realloc(s->pairs, (size_t)cap * sizeof(Pair));
        if (!pairs)
            return -1;
        s->pairs = pairs;
        int64_t *count = realloc(s->count, (size_t)cap * sizeof(int64_t));
        if (!count)
            return -1;
        s->count = count;
        s->cap_pairs = cap;
    }
    int32_t id = s->n_pairs++;
    Pair *p = &s->pairs[id];
    p->a = a;
    p->b = b;
    p->occ = NULL;
    p->occ_len = p->occ_cap = 0;
    s->count[id] = 0;
    return id;
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

static int compare_positions(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* Heap order: larger count first, then the smaller pair (a, b) (def-bpe step 4). */
static inline int before(const State *s, HeapEntry x, HeapEntry y)
{
    if (x.count != y.count)
        return x.count > y.count;
    const Pair *p = &s->pairs[x.id], *q = &s->pairs[y.id];
    if (p->a != q->a)
        return p->a < q->a;
    return p->b < q->b;
}

static void sift_down(State *s, int64_t i)
{
    HeapEntry *h = s->heap;
    int64_t n = s->heap_len;
    HeapEntry e = h[i];
    for (;;) {
        int64_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && before(s, h[child + 1], h[child]))
            child++;
        if (!before(s, h[child], e))
            break;
        h[i] = h[child];
        i = child;
    }
    h[i] = e;
}

static int heap_push(State *s, HeapEntry e)
{
    if (s->heap_len == s->heap_cap) {
        int64_t cap = s->heap_cap ? s->heap_cap * 2 : 1024;
        HeapEntry *heap = realloc(s->heap, (size_t)cap * sizeof(HeapEntry));
        if (!heap)
            return -1;
        s->heap = heap;
        s->heap_cap = cap;
    }
    int64_t i = s->heap_len++;
    while (i > 0) {
        int64_t parent = (i - 1) / 2;
        if (!before(s, e, s->heap[parent]))
            break;
        s->heap[i] = s->heap[parent];
        i = parent;
    }
    s->heap[i] = e;
    return 0;
}

static void heap_pop(State *s)
{
    s->heap[0] = s->heap[--s->heap_len];
    if (s->heap_len)
        sift_down(s, 0);
}

/* A new pair (a, b) with count 0, listed in ``touched``; -1 when out of memory. */
static int32_t new_pair(State *s, int32_t a, int32_t b, int32_t **touched, int64_t *n_touched, int64_t *cap_touched)
{
    if (*n_touched == *cap_touched) {
        int64_t cap = *cap_touched ? *cap_touched * 2 : 256;
        int32_t *t = realloc(*touched, (size_t)cap * sizeof(int32_t));
        if (!t)
            return -1;
        *touched = t;
        *cap_touched = cap;
    }
    int32_t id = add_pair(s, a, b);
    if (id < 0)
        return -1;
    (*touched)[(*n_touched)++] = id;
    return id;
}

/*
 * The whole training run on C arrays: pos[p] for every position p of the distinct words, which
 * lie one after another; freq[w] for every word.  rules receives 3 * (number of merges) ids.
 * Returns the number of merges, RUN_NO_MEMORY, or RUN_OVERFLOW when a count does not fit in int64.
 */
static int64_t run(Pos *pos, const int64_t *freq, int32_t total, int64_t merges, int32_t *rules)
{
    State s;
    memset(&s, 0, sizeof s);
    int64_t done = RUN_NO_MEMORY;
    int32_t *touched = NULL;
    int64_t n_touched = 0, cap_touched = 0;
    size_t ids = (size_t)(256 + merges);
    /* The pairs (x, c) and (c, y) made by the current step, by x and by y: valid when *_step is the step. */
    int32_t *left_id = malloc(ids * sizeof(int32_t)), *left_step = malloc(ids * sizeof(int32_t));
    int32_t *right_id = malloc(ids * sizeof(int32_t)), *right_step = malloc(ids * sizeof(int32_t));
    int32_t *byte_id = NULL;

    s.cap_pairs = 1024;
    s.pairs = malloc((size_t)s.cap_pairs * sizeof(Pair));
    s.count = malloc((size_t)s.cap_pairs * sizeof(int64_t));
    byte_id = malloc(65536 * sizeof(int32_t));
    if (!s.pairs || !s.count || !byte_id || !left_id || !left_step || !right_id || !right_step)
        goto out;
    for (size_t x = 0; x < ids; x++)
        left_step[x] = right_step[x] = -1;

    /* Step 2 of def-bpe once: N_0(a, b) = sum_k f_k cnt_{w_k}(a, b), and where each pair starts.
     * All tokens are bytes here, so a pair's id is found in a table of 256 x 256; later pairs all
     * contain the newest id and are found through left_id and right_id.  Ids are given in order
     * of first occurrence; the lists are sized by a first pass. */
    for (int32_t x = 0; x < 65536; x++)
        byte_id[x] = -1;
    for (int32_t p = 0; p < total; p++) {
        if (pos[p].nxt < 0) {
            pos[p].pid = -1;
            continue;
        }
        int32_t key = pos[p].tok << 8 | pos[p + 1].tok;
        int32_t id = byte_id[key];
        if (id < 0) {
            id = byte_id[key] = add_pair(&s, pos[p].tok, pos[p + 1].tok);
            if (id < 0)
                goto out;
        }
        s.pairs[id].occ_cap++;
        if (!add_count(&s.count[id], freq[pos[p].wid])) {
            done = RUN_OVERFLOW;
            goto out;
        }
        pos[p].pid = id;
    }
    for (int32_t id = 0; id < s.n_pairs; id++) {
        s.pairs[id].occ = malloc((size_t)s.pairs[id].occ_cap * sizeof(int32_t));
        if (!s.pairs[id].occ)
            goto out;
    }
    for (int32_t p = 0; p < total; p++) {
        if (pos[p].pid >= 0) {
            Pair *pair = &s.pairs[pos[p].pid];
            pair->occ[pair->occ_len++] = p;
        }
    }
    for (int32_t id = 0; id < s.n_pairs; id++) {
        HeapEntry e = {s.count[id], id};
        if (heap_push(&s, e) < 0)
            goto out;
    }

    int64_t j = 0;
    while (j < merges && s.heap_len) {
        HeapEntry top = s.heap[0];
        int64_t current = s.count[top.id];
        if (current != top.count) {
            if (current > 0) {
                s.heap[0].count = current;
                sift_down(&s, 0);
            } else {
                /* an old pair never comes back: its list holds only stale positions */
                free(s.pairs[top.id].occ);
                s.pairs[top.id].occ = NULL;
                s.pairs[top.id].occ_len = s.pairs[top.id].occ_cap = 0;
                heap_pop(&s);
            }
            continue;
        }
        heap_pop(&s);
        int32_t P = top.id;
        Pair *best = &s.pairs[P];
        int32_t a = best->a, b = best->b, c = 256 + (int32_t)j, step = (int32_t)j;
        rules[3 * j] = a;
        rules[3 * j + 1] = b;
        rules[3 * j + 2] = c;
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
        n_touched = 0;
        int64_t *count = s.count;
        for (int32_t k = 0; k < occ_len; k++) {
            int32_t p = occ[k];
            Pos *here = &pos[p];
            if (k + PREFETCH < occ_len) {
                /* the position and, usually, its neighbours l, q and r */
                Pos *ahead = &pos[occ[k + PREFETCH]];
                PREFETCH_POS(ahead);
                if (occ[k + PREFETCH] > 0)
                    PREFETCH_POS(ahead - 1);
                if (occ[k + PREFETCH] + 2 < total)
                    PREFETCH_POS(ahead + 2);
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
                    int32_t id = new_pair(&s, x, c, &touched, &n_touched, &cap_touched);
                    if (id < 0)
                        goto fail;
                    count = s.count;
                    left_id[x] = id;
                    left_step[x] = step;
                }
                int32_t id = left_id[x];
                if (!add_count(&count[id], f))
                    goto overflow;
                if (add_occ(&s.pairs[id], l) < 0)
                    goto fail;
                pos[l].pid = id;
            }
            if (r >= 0) {
                /* right neighbour y: (b, y) becomes (c, y) */
                int32_t y = pos[r].tok;
                count[pos[q].pid] -= f;
                if (right_step[y] != step) {
                    int32_t id = new_pair(&s, c, y, &touched, &n_touched, &cap_touched);
                    if (id < 0)
                        goto fail;
                    count = s.count;
                    right_id[y] = id;
                    right_step[y] = step;
                }
                int32_t id = right_id[y];
                if (!add_count(&count[id], f))
                    goto overflow;
                if (add_occ(&s.pairs[id], p) < 0)
                    goto fail;
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
        s.count[P] = 0; /* M_r leaves no (a, b) behind */
        for (int64_t k = 0; k < n_touched; k++) {
            HeapEntry e = {s.count[touched[k]], touched[k]};
            if (e.count > 0 && heap_push(&s, e) < 0)
                goto out;
        }
        j++;
        continue;
    overflow:
        done = RUN_OVERFLOW;
    fail:
        free(occ);
        goto out;
    }
    done = j;
out:
    if (s.pairs)
        for (int32_t id = 0; id < s.n_pairs; id++)
            free(s.pairs[id].occ);
    free(s.pairs);
    free(s.count);
    free(s.heap);
    free(byte_id);
    free(touched);
    free(left_id);
    free(left_step);
    free(right_id);
    free(right_step);
    return done;
}

static PyObject *fastbpe_train(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *words_arg, *freqs_arg;
    long long merges;
    if (!PyArg_ParseTuple(args, "O!O!L", &PyList_Type, &words_arg, &PyList_Type, &freqs_arg, &merges))
        return NULL;
    if (merges < 0) {
        PyErr_SetString(PyExc_ValueError, "negative merges");
        return NULL;
    }
    /* Owned copies of both lists: Python code run below (a frequency's __index__) may change the caller's
     * lists, but not these, and the words stay alive until the end. */
    PyObject *words = PyList_GetSlice(words_arg, 0, PyList_GET_SIZE(words_arg));
    PyObject *freqs = PyList_GetSlice(freqs_arg, 0, PyList_GET_SIZE(freqs_arg));
    Pos *pos = NULL;
    int64_t *freq = NULL;
    int32_t *rules = NULL;
    PyObject *result = NULL;
    if (!words || !freqs)
        goto done;
    Py_ssize_t n_words = PyList_GET_SIZE(words);
    if (PyList_GET_SIZE(freqs) != n_words) {
        PyErr_SetString(PyExc_ValueError, "words and freqs differ in length");
        goto done;
    }
    if (n_words > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "too many words");
        goto done;
    }
    /* Every frequency to int64 first: this is the only step that may run Python code. */
    freq = malloc((size_t)(n_words ? n_words : 1) * sizeof(int64_t));
    if (!freq) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t w = 0; w < n_words; w++) {
        int overflow = 0;
        long long f = PyLong_AsLongLongAndOverflow(PyList_GET_ITEM(freqs, w), &overflow);
        if (f == -1 && PyErr_Occurred())
            goto done;
        if (overflow > 0) {
            PyErr_Format(PyExc_OverflowError, "the frequency of word %zd does not fit in 64 bits", w);
            goto done;
        }
        if (overflow < 0 || f < 1) {
            PyErr_SetString(PyExc_ValueError, "frequencies must be >= 1");
            goto done;
        }
        freq[w] = f;
    }
    /* The words: no Python code runs from here on. */
    Py_ssize_t total = 0;
    for (Py_ssize_t w = 0; w < n_words; w++) {
        PyObject *word = PyList_GET_ITEM(words, w);
        if (!PyBytes_Check(word) || PyBytes_GET_SIZE(word) == 0) {
            PyErr_SetString(PyExc_ValueError, "words must be non-empty bytes");
            goto done;
        }
        Py_ssize_t size = PyBytes_GET_SIZE(word);
        if (size > INT32_MAX - total) {
            PyErr_SetString(PyExc_ValueError, "the words hold more than 2**31 - 1 bytes");
            goto done;
        }
        total += size;
    }
    if (merges > total)
        merges = total;
    if (256 + merges > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "too many merges for 32-bit ids");
        goto done;
    }
    pos = malloc((size_t)(total ? total : 1) * sizeof(Pos));
    rules = malloc((size_t)(merges ? merges : 1) * 3 * sizeof(int32_t));
    if (!pos || !rules) {
        PyErr_NoMemory();
        goto done;
    }
    int32_t at = 0;
    for (Py_ssize_t w = 0; w < n_words; w++) {
        PyObject *word = PyList_GET_ITEM(words, w);
        const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(word);
        int32_t size = (int32_t)PyBytes_GET_SIZE(word);
        for (int32_t i = 0; i < size; i++) {
            Pos *here = &pos[at + i];
            here->tok = data[i];
            here->prv = i ? at + i - 1 : -1;
            here->nxt = i + 1 < size ? at + i + 1 : -1;
            here->pid = -1;
            here->wid = (int32_t)w;
        }
        at += size;
    }
    int64_t made;
    Py_BEGIN_ALLOW_THREADS
    made = run(pos, freq, (int32_t)total, merges, rules);
    Py_END_ALLOW_THREADS
    if (made == RUN_OVERFLOW) {
        PyErr_SetString(PyExc_OverflowError, "a pair count exceeds 2**63 - 1, the largest the C loop's 64-bit counts"
                        " hold");
        goto done;
    }
    if (made < 0) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyList_New((Py_ssize_t)made);
    if (!result)
        goto done;
    for (int64_t j = 0; j < made; j++) {
        PyObject *rule = Py_BuildValue("(iii)", rules[3 * j], rules[3 * j + 1], rules[3 * j + 2]);
        if (!rule) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, (Py_ssize_t)j, rule);
    }
done:
    free(pos);
    free(freq);
    free(rules);
    Py_XDECREF(words);
    Py_XDECREF(freqs);
    return result;
}

static PyMethodDef methods[] = {
    {"train", fastbpe_train, METH_VARARGS,
     "train(words, freqs, merges) -> list of (a, b, c): def-bpe on distinct words with frequencies."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastbpe", "The merge loop of bpeproof.impl.trainer in C (rem-faster-training).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fastbpe(void) { return PyModule_Create(&module); }
