/*
 * _fastbpe: the merge loop of bpeproof.impl.trainer in C (def-bpe, rem-faster-training), on one thread or several.
 *
 * train(words: list[bytes], freqs: list[int], merges: int, threads=1, parallel_min=PARALLEL_MIN)
 *     -> list[tuple[int, int, int]]
 * train_tables(tables: list[bytes], merges: int | None, threads=1, parallel_min=PARALLEL_MIN)
 *     -> (list[tuple[int, int, int]], distinct words, words)
 *
 * ``words`` are the distinct words of a corpus (each non-empty), ``freqs`` their
 * frequencies (>= 1), ``merges`` the number of merges to make at most.  ``tables``
 * are word-count tables packed as _fastbpe_tables.h describes (impl/io/packed_counts.py);
 * a word in several of them counts the sum of its counts.  The result is the rule
 * list (a, b, 256 + j) of def-bpe: at each step the pair with the largest count
 * N_j(a, b) = sum_k f_k cnt_{x_k}(a, b), ties to the smallest (a, b); the rule is
 * applied to every word left to right without overlaps (def-merge).  It stops early
 * when no pair is left.  ``threads`` partitions the words (_fastbpe_run.h): the
 * same rules for any number; a step whose pair has fewer than ``parallel_min``
 * positions runs on one thread.  Beyond the C loop's limits (a count beyond 2**63 - 1,
 * more than 2**31 - 1 bytes of distinct words) both raise OverflowError: the
 * Python loops (impl/trainer_loops.py) train on such corpora.
 *
 * The algorithm is the one of impl/trainer_loops.py (train_strings), one level finer:
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
 * The parts: _fastbpe_tables.h (the packed tables), _fastbpe_part.h (a partition
 * of the words: positions, pairs, one merge), _fastbpe_heap.h (the corpus's pairs
 * and the heap), _fastbpe_threads.h (the team of threads), _fastbpe_run.h (a run).
 *
 * Inputs are copied before anything is sized or used: the lists are copied
 * (owned references), every frequency is converted to int64 (which may run
 * Python code: ``__index__``), and only then are the words checked and their
 * bytes copied into a packed table; packed tables are bytes, which no Python
 * code can change, held by a copied list.  Counts are int64 and every addition to
 * one is checked: a count beyond 2**63 - 1 is an OverflowError, never wrong
 * rules.  Only the initial count can overflow (a merge gives a new pair at most
 * the count of the old pair it replaces), but the merge loop checks its
 * additions too.  Subtractions need no check: a count is the sum of the
 * frequencies of the positions that start its pair, so it never drops below 0.
 * The run holds no GIL; it takes it back every few hundred merges to see Ctrl-C.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_fastbpe_run.h"

/* A step whose pair has fewer positions than this (in all partitions) is not worth waking the threads for. */
#define PARALLEL_MIN 16

/* The largest number of threads a run takes. */
#define MAX_THREADS 256

typedef struct {
    PyThreadState *state;
} Released;

/* Run with the GIL released: take it back, and say whether a signal handler raised (Ctrl-C). */
static int check_signals(void *context)
{
    Released *released = context;
    PyEval_RestoreThread(released->state);
    int stop = PyErr_CheckSignals() < 0;
    released->state = PyEval_SaveThread();
    return stop;
}

/* Train on checked tables; the rules as a list of (a, b, c), and the run's stats. */
static PyObject *train_on(const Table *tables, int n_tables, int threads, int64_t merges, int64_t parallel_min,
                          RunStats *out)
{
    int32_t *rules = NULL;
    RunStats stats = {0, 0, 0, 0};
    Released released;
    released.state = PyEval_SaveThread();
    int64_t made = run(tables, n_tables, threads, merges, parallel_min, &rules, &stats, check_signals, &released);
    PyEval_RestoreThread(released.state);
    *out = stats;
    if (made < 0) {
        if (made == RUN_OVERFLOW)
            PyErr_SetString(PyExc_OverflowError, "a pair count exceeds 2**63 - 1, the largest the C loop's 64-bit"
                            " counts hold");
        else if (made == RUN_TOO_LARGE)
            PyErr_SetString(PyExc_OverflowError, "the distinct words hold more than 2**31 - 1 bytes, or need more"
                            " ids than 32 bits hold");
        else if (made == RUN_NO_THREAD)
            PyErr_Format(PyExc_OSError, "cannot start a training thread: %s", strerror(stats.error));
        else if (made == RUN_NO_MEMORY)
            PyErr_NoMemory();
        /* RUN_INTERRUPTED: the signal handler's error is set */
        return NULL;
    }
    PyObject *result = PyList_New((Py_ssize_t)made);
    for (int64_t j = 0; result && j < made; j++) {
        PyObject *rule = Py_BuildValue("(iii)", rules[3 * j], rules[3 * j + 1], rules[3 * j + 2]);
        if (!rule)
            Py_CLEAR(result);
        else
            PyList_SET_ITEM(result, (Py_ssize_t)j, rule);
    }
    free(rules);
    return result;
}

static int check_threads(int threads)
{
    if (threads < 1 || threads > MAX_THREADS) {
        PyErr_Format(PyExc_ValueError, "threads must be between 1 and %d", MAX_THREADS);
        return -1;
    }
    return 0;
}

static PyObject *fastbpe_train(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"words", "freqs", "merges", "threads", "parallel_min", NULL};
    PyObject *words_arg, *freqs_arg;
    long long merges, parallel_min = PARALLEL_MIN;
    int threads = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!L|iL", keywords, &PyList_Type, &words_arg, &PyList_Type,
                                     &freqs_arg, &merges, &threads, &parallel_min))
        return NULL;
    if (merges < 0) {
        PyErr_SetString(PyExc_ValueError, "negative merges");
        return NULL;
    }
    if (check_threads(threads) < 0)
        return NULL;
    /* Owned copies of both lists: Python code run below (a frequency's __index__) may change the caller's
     * lists, but not these, and the words stay alive until the end. */
    PyObject *words = PyList_GetSlice(words_arg, 0, PyList_GET_SIZE(words_arg));
    PyObject *freqs = PyList_GetSlice(freqs_arg, 0, PyList_GET_SIZE(freqs_arg));
    unsigned char *packed = NULL;
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
    /* Every frequency to int64 first, into the table's counts: this is the only step that may run Python code.
     * The table is sized once the words are checked; until then the counts wait in their own array. */
    int64_t *freq = malloc((size_t)(n_words ? n_words : 1) * sizeof(int64_t));
    if (!freq) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t w = 0; w < n_words; w++) {
        int overflow = 0;
        long long f = PyLong_AsLongLongAndOverflow(PyList_GET_ITEM(freqs, w), &overflow);
        if (f == -1 && PyErr_Occurred()) {
            free(freq);
            goto done;
        }
        if (overflow > 0) {
            PyErr_Format(PyExc_OverflowError, "the frequency of word %zd does not fit in 64 bits", w);
            free(freq);
            goto done;
        }
        if (overflow < 0 || f < 1) {
            PyErr_SetString(PyExc_ValueError, "frequencies must be >= 1");
            free(freq);
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
            free(freq);
            goto done;
        }
        Py_ssize_t size = PyBytes_GET_SIZE(word);
        if (size > INT32_MAX - total) {
            PyErr_SetString(PyExc_ValueError, "the words hold more than 2**31 - 1 bytes");
            free(freq);
            goto done;
        }
        total += size;
    }
    int64_t size = table_size(n_words, total);
    packed = malloc((size_t)size);
    if (!packed) {
        PyErr_NoMemory();
        free(freq);
        goto done;
    }
    memcpy(packed, TABLE_MAGIC, 8);
    int64_t header[2] = {n_words, total};
    memcpy(packed + 8, header, 16);
    memcpy(packed + TABLE_HEADER, freq, (size_t)n_words * 8);
    free(freq);
    Table table;
    table.n = n_words;
    table.n_bytes = total;
    table.counts = packed + TABLE_HEADER;
    table.lengths = table.counts + 8 * n_words;
    table.data = packed + TABLE_HEADER + 8 * n_words + ((4 * n_words + 7) & ~(int64_t)7);
    memset((unsigned char *)table.data - 4, 0, 4); /* the padding, if any */
    unsigned char *at = (unsigned char *)table.data;
    for (Py_ssize_t w = 0; w < n_words; w++) {
        PyObject *word = PyList_GET_ITEM(words, w);
        uint32_t length = (uint32_t)PyBytes_GET_SIZE(word);
        memcpy((unsigned char *)table.lengths + 4 * w, &length, 4);
        memcpy(at, PyBytes_AS_STRING(word), length);
        at += length;
    }
    RunStats stats;
    result = train_on(&table, 1, threads, merges, parallel_min, &stats);
done:
    free(packed);
    Py_XDECREF(words);
    Py_XDECREF(freqs);
    return result;
}

static PyObject *fastbpe_train_tables(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"tables", "merges", "threads", "parallel_min", NULL};
    PyObject *tables_arg, *merges_arg;
    long long parallel_min = PARALLEL_MIN;
    int threads = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O|iL", keywords, &PyList_Type, &tables_arg, &merges_arg,
                                     &threads, &parallel_min))
        return NULL;
    long long merges = -1;
    if (merges_arg != Py_None) {
        merges = PyLong_AsLongLong(merges_arg);
        if (merges == -1 && PyErr_Occurred())
            return NULL;
        if (merges < 0) {
            PyErr_SetString(PyExc_ValueError, "negative merges");
            return NULL;
        }
    }
    if (check_threads(threads) < 0)
        return NULL;
    PyObject *tables = PyList_GetSlice(tables_arg, 0, PyList_GET_SIZE(tables_arg)); /* holds the bytes */
    if (!tables)
        return NULL;
    Py_ssize_t n_tables = PyList_GET_SIZE(tables);
    Table *table = malloc((size_t)(n_tables ? n_tables : 1) * sizeof(Table));
    PyObject *result = NULL, *rules = NULL;
    if (!table) {
        PyErr_NoMemory();
        goto done;
    }
    if (n_tables > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "too many tables");
        goto done;
    }
    for (Py_ssize_t k = 0; k < n_tables; k++) {
        PyObject *item = PyList_GET_ITEM(tables, k);
        if (!PyBytes_Check(item)) {
            PyErr_Format(PyExc_TypeError, "table %zd must be bytes, not %.100s", k, Py_TYPE(item)->tp_name);
            goto done;
        }
        const char *problem = table_open(&table[k], (const unsigned char *)PyBytes_AS_STRING(item),
                                         PyBytes_GET_SIZE(item));
        if (problem) {
            PyErr_Format(PyExc_ValueError, "table %zd: %s", k, problem);
            goto done;
        }
    }
    RunStats stats;
    rules = train_on(table, (int)n_tables, threads, merges, parallel_min, &stats);
    if (rules) {
        /* words_high * 2**64 + words_low, as a Python int */
        PyObject *high = PyLong_FromUnsignedLongLong(stats.words_high), *low = PyLong_FromUnsignedLongLong(
            stats.words_low), *shift = PyLong_FromLong(64), *shifted = NULL, *words = NULL;
        if (high && low && shift && (shifted = PyNumber_Lshift(high, shift)) != NULL)
            words = PyNumber_Add(shifted, low);
        if (words)
            result = Py_BuildValue("(OLO)", rules, (long long)stats.distinct, words);
        Py_XDECREF(high);
        Py_XDECREF(low);
        Py_XDECREF(shift);
        Py_XDECREF(shifted);
        Py_XDECREF(words);
    }
done:
    Py_XDECREF(rules);
    free(table);
    Py_DECREF(tables);
    return result;
}

static PyMethodDef methods[] = {
    {"train", (PyCFunction)(void (*)(void))fastbpe_train, METH_VARARGS | METH_KEYWORDS,
     "train(words, freqs, merges, threads=1, parallel_min=16) -> list of (a, b, c): def-bpe on distinct words"
     " with frequencies."},
    {"train_tables", (PyCFunction)(void (*)(void))fastbpe_train_tables, METH_VARARGS | METH_KEYWORDS,
     "train_tables(tables, merges, threads=1, parallel_min=16) -> (list of (a, b, c), distinct words, words):"
     " def-bpe on packed word-count tables (merges None: no bound)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastbpe", "The merge loop of bpeproof.impl.trainer in C (rem-faster-training).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fastbpe(void)
{
    PyObject *mod = PyModule_Create(&module);
    if (mod && (PyModule_AddIntConstant(mod, "PARALLEL_MIN", PARALLEL_MIN) < 0
                || PyModule_AddIntConstant(mod, "HAVE_THREADS", team_threads_available()) < 0)) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
