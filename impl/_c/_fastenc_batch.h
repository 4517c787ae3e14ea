/*
 * _fastenc_batch.h: encode_texts, encode_text of many texts at once on several threads.
 *
 * Included by _fastenc.c after _fastenc_encode.h (encode_run, the word loop every thread runs).
 *
 *   encode_texts(texts, table, which, limit, threads, strict, as_uint32) -> list[list[int]] | list[bytes]
 *       [encode_text(t, table, which, limit) for t in texts], computed on up to ``threads`` threads (the calling
 *       one among them) with the GIL released: the texts are immutable str objects held by a tuple for the whole
 *       call, and the Merger's tables are only read.  Threads take the texts in order, one at a time, from a
 *       shared counter; each text's dense ids go to an array of its own.  Then the lists are made, empty, with the
 *       GIL held, and a second pass of the threads fills them (fill_worker: the references are counted per id and
 *       added to the ids' reference counts once the threads are done, with the GIL held again), so that making
 *       the lists is not left to one core.
 *
 *       The word cache: every thread looks a piece up in the calling thread's cache (encode_text's, only read
 *       during the batch), then in a cache of its own, which holds the words it merged in this batch; those words
 *       join the calling thread's cache when it is next used (lock_shared_cache), so that the next batch, or
 *       encode_text, finds them, and a batch that is the last call pays nothing for it.  The ids
 *       do not depend on which thread encoded a text or on what a cache held: a cache only remembers what merging
 *       gave.  When texts fail, the exception is that of the first failing one in the list, the one a loop of
 *       encode_text would raise.  ``strict``: every surrogate code point fails (a str that UTF-8 cannot encode),
 *       as Tokenizer.encode requires; else U+DC80..U+DCFF stand for bytes, as in encode_text.  ``as_uint32``:
 *       each text's ids as bytes of little-endian uint32 (what a .npy file of ids holds), made and filled the same
 *       way, without one int object per id; an id of 2**32 or more raises OverflowError.
 *
 * One batch runs at a time on a Merger, and encode_text and clear_cache, which change the calling thread's cache,
 * wait for it (lock_shared_cache; they wait with the GIL released).  Without POSIX threads every text is encoded on
 * the calling thread.
 */

#ifndef BPEPROOF_FASTENC_BATCH_H
#define BPEPROOF_FASTENC_BATCH_H

#include "_fastenc_encode.h"

#if !defined(_WIN32)
#include <pthread.h>
#define BATCH_THREADS 1
#else
#define BATCH_THREADS 0
#endif

typedef struct {
    const Merger *m;
    Work *work; /* the thread's own: its merge space, and the words it merged in this batch */
    const Work *shared; /* the calling thread's cache, read by every thread */
    SharedTable *table; /* the words this batch merged, read and added to by every thread; NULL for none */
    const Scan *scans;
    Py_ssize_t n_texts;
    int which, strict;
    Py_ssize_t limit;
    Py_ssize_t *next; /* the next text to take, shared by every thread */
    DenseIds *outs; /* one per text */
    Failure *failures; /* one per text; code 0 where the text was encoded */
    /* The second pass: the lists to fill (made, empty, with the GIL held) and how many references to each
     * reported id this thread put into them, which are added to the ids' reference counts afterwards. */
    PyObject *lists;
    Py_ssize_t *references; /* n_ids counts, or NULL in the first pass */
} BatchJob;

/* The first pass: encode texts into dense ids. */
static void *
encode_worker(void *arg)
{
    BatchJob *job = arg;
    for (;;) {
        Py_ssize_t t = __atomic_fetch_add(job->next, 1, __ATOMIC_RELAXED);
        if (t >= job->n_texts)
            break;
        /* Appended to here, not in job->outs, which neighbouring texts share cache lines of with other threads. */
        DenseIds ids = {NULL, 0, 0};
        encode_run(job->m, job->work, job->shared, job->table, &job->scans[t], job->which, job->limit,
                   job->strict, &ids, &job->failures[t]);
        job->outs[t] = ids;
    }
    return NULL;
}

/* The second pass: put the reported ids into the texts' lists, counting the references instead of taking them
 * (an object's reference count may only change with the GIL held; the counts are added then, before any of
 * these lists, which no other code can see yet, is returned). */
static void *
fill_worker(void *arg)
{
    BatchJob *job = arg;
    PyObject *const *outputs = job->m->outputs;
    for (;;) {
        Py_ssize_t t = __atomic_fetch_add(job->next, 1, __ATOMIC_RELAXED);
        if (t >= job->n_texts)
            break;
        PyObject **items = ((PyListObject *)PyList_GET_ITEM(job->lists, t))->ob_item;
        const int32_t *ids = job->outs[t].ids;
        for (Py_ssize_t i = 0; i < job->outs[t].len; i++) {
            items[i] = outputs[ids[i]];
            job->references[ids[i]]++;
        }
    }
    return NULL;
}

/* The second pass of a batch asked for uint32 ids: each text's ids into its bytes object, little-endian. */
static void *
fill_uint32_worker(void *arg)
{
    BatchJob *job = arg;
    const int64_t *values = job->m->output_values;
    for (;;) {
        Py_ssize_t t = __atomic_fetch_add(job->next, 1, __ATOMIC_RELAXED);
        if (t >= job->n_texts)
            break;
        unsigned char *out = (unsigned char *)PyBytes_AS_STRING(PyList_GET_ITEM(job->lists, t));
        const int32_t *ids = job->outs[t].ids;
        for (Py_ssize_t i = 0; i < job->outs[t].len; i++) {
            int64_t value = values[ids[i]];
            if (value < 0) {
                job->failures[t].code = FAIL_TOO_BIG;
                break;
            }
            out[4 * i] = (unsigned char)value;
            out[4 * i + 1] = (unsigned char)(value >> 8);
            out[4 * i + 2] = (unsigned char)(value >> 16);
            out[4 * i + 3] = (unsigned char)(value >> 24);
        }
    }
    return NULL;
}

/* Room for ``n`` Works of further threads on the Merger (new ones empty); -1 with MemoryError. */
static int
more_work_reserve(Merger *m, Py_ssize_t n)
{
    if (n <= m->n_more_work)
        return 0;
    Work *grown = PyMem_Realloc(m->more_work, (size_t)n * sizeof(Work));
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(grown + m->n_more_work, 0, (size_t)(n - m->n_more_work) * sizeof(Work));
    m->more_work = grown;
    m->n_more_work = n;
    return 0;
}

/* Run ``worker`` on ``n_jobs`` jobs, the first on the calling thread, with the GIL released. */
static void
run_jobs(void *(*worker)(void *), BatchJob *jobs, int n_jobs)
{
    Py_BEGIN_ALLOW_THREADS
#if BATCH_THREADS
    pthread_t threads[MAX_BATCH_THREADS];
    int started[MAX_BATCH_THREADS] = {0};
    for (int k = 1; k < n_jobs; k++)
        started[k] = pthread_create(&threads[k], NULL, worker, &jobs[k]) == 0;
    worker(&jobs[0]); /* a thread that could not start leaves its texts to the others */
    for (int k = 1; k < n_jobs; k++)
        if (started[k])
            pthread_join(threads[k], NULL);
#else
    worker(&jobs[0]);
#endif
    Py_END_ALLOW_THREADS
}

/* The lists of reported ids of every text, filled by the jobs' threads; NULL with an exception on failure. */
static PyObject *
reported_lists(const Merger *m, BatchJob *jobs, int n_jobs, Py_ssize_t n_texts, DenseIds *outs)
{
    PyObject *lists = PyList_New(n_texts);
    if (lists == NULL)
        return NULL;
    for (Py_ssize_t t = 0; t < n_texts; t++) {
        PyObject *ids = PyList_New(outs[t].len);
        if (ids == NULL) {
            Py_DECREF(lists);
            return NULL;
        }
        PyObject_GC_UnTrack(ids); /* its items are NULL until the threads are done: no collection may look */
        PyList_SET_ITEM(lists, t, ids);
    }
    Py_ssize_t next = 0;
    int failed = 0;
    for (int k = 0; k < n_jobs; k++) {
        jobs[k].next = &next;
        jobs[k].lists = lists;
        jobs[k].references = PyMem_Calloc((size_t)m->n_ids, sizeof(Py_ssize_t));
        failed |= jobs[k].references == NULL;
    }
    if (!failed)
        run_jobs(fill_worker, jobs, n_jobs);
    for (int k = 0; k < n_jobs; k++) {
        if (failed)
            break;
        for (Py_ssize_t d = 0; d < m->n_ids; d++)
            if (jobs[k].references[d] != 0)
                Py_SET_REFCNT(m->outputs[d], Py_REFCNT(m->outputs[d]) + jobs[k].references[d]);
    }
    for (int k = 0; k < n_jobs; k++)
        PyMem_Free(jobs[k].references);
    for (Py_ssize_t t = 0; t < n_texts; t++)
        PyObject_GC_Track(PyList_GET_ITEM(lists, t));
    if (failed) {
        /* Nothing was filled: every list is empty of items, and freed as such. */
        for (Py_ssize_t t = 0; t < n_texts; t++)
            Py_SET_SIZE((PyVarObject *)PyList_GET_ITEM(lists, t), 0);
        Py_DECREF(lists);
        PyErr_NoMemory();
        return NULL;
    }
    return lists;
}

/* The Merger's output_values, made on first use; -1 with an exception on failure. */
static int
make_output_values(Merger *m)
{
    if (m->output_values != NULL)
        return 0;
    int64_t *values = PyMem_Malloc((size_t)m->n_ids * sizeof(int64_t));
    if (values == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t d = 0; d < m->n_ids; d++) {
        int overflow = 0;
        long long value = m->outputs[d] == Py_None ? -1 : PyLong_AsLongLongAndOverflow(m->outputs[d], &overflow);
        if (value == -1 && PyErr_Occurred()) {
            PyMem_Free(values);
            return -1;
        }
        values[d] = overflow || value < 0 || value > (long long)UINT32_MAX ? -1 : (int64_t)value;
    }
    m->output_values = values;
    return 0;
}

/* Each text's ids as bytes of little-endian uint32, filled by the jobs' threads; NULL with an exception. */
static PyObject *
uint32_ids(Merger *m, BatchJob *jobs, int n_jobs, Py_ssize_t n_texts, DenseIds *outs, Failure *failures)
{
    if (make_output_values(m) < 0)
        return NULL;
    PyObject *lists = PyList_New(n_texts);
    if (lists == NULL)
        return NULL;
    for (Py_ssize_t t = 0; t < n_texts; t++) {
        PyObject *data = PyBytes_FromStringAndSize(NULL, 4 * outs[t].len);
        if (data == NULL) {
            Py_DECREF(lists);
            return NULL;
        }
        PyList_SET_ITEM(lists, t, data);
    }
    Py_ssize_t next = 0;
    for (int k = 0; k < n_jobs; k++) {
        jobs[k].next = &next;
        jobs[k].lists = lists;
    }
    run_jobs(fill_uint32_worker, jobs, n_jobs);
    for (Py_ssize_t t = 0; t < n_texts; t++) {
        if (failures[t].code == FAIL_TOO_BIG) {
            Py_DECREF(lists);
            PyErr_Format(PyExc_OverflowError, "texts[%zd]: a token id is 2**32 or more: it does not fit a uint32", t);
            return NULL;
        }
    }
    return lists;
}

static PyObject *
Merger_encode_texts(Merger *m, PyObject *args)
{
    PyObject *texts_arg, *table;
    int which, threads, strict, as_uint32;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "OSinipp:encode_texts", &texts_arg, &table, &which, &limit, &threads, &strict,
                          &as_uint32))
        return NULL;
    if (m->spelt) {
        PyErr_SetString(PyExc_TypeError, "encode_texts: this merger reports units as several ids (encode_pieces)");
        return NULL;
    }
    PyObject *texts = PySequence_Tuple(texts_arg); /* held, and unchangeable, while the threads read the texts */
    if (texts == NULL)
        return NULL;
    Py_ssize_t n_texts = PyTuple_GET_SIZE(texts);
    PyObject *result = NULL;
    Scan *scans = PyMem_Calloc((size_t)n_texts + 1, sizeof(Scan));
    DenseIds *outs = PyMem_Calloc((size_t)n_texts + 1, sizeof(DenseIds));
    Failure *failures = PyMem_Calloc((size_t)n_texts + 1, sizeof(Failure));
    if (scans == NULL || outs == NULL || failures == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t t = 0; t < n_texts; t++) {
        PyObject *text = PyTuple_GET_ITEM(texts, t);
        if (!PyUnicode_Check(text)) {
            PyErr_Format(PyExc_TypeError, "texts must be str, not %.100s", Py_TYPE(text)->tp_name);
            goto done;
        }
        if (scan_init(&scans[t], text, table, which) < 0)
            goto done;
    }
    int n_jobs = BATCH_THREADS ? threads : 1;
    if (n_jobs > MAX_BATCH_THREADS)
        n_jobs = MAX_BATCH_THREADS;
    if (n_jobs > n_texts)
        n_jobs = (int)n_texts;
    if (n_jobs < 1)
        n_jobs = 1;
    if (lock_shared_cache(m) < 0)
        goto done;
    if (more_work_reserve(m, n_jobs) < 0) {
        unlock_shared_cache(m);
        goto done;
    }
    Py_ssize_t chars = 0;
    for (Py_ssize_t t = 0; t < n_texts; t++)
        chars += scans[t].n;
    SharedTable *new_words = NULL;
    if (limit > 0 && n_jobs > 1) {
        if (shared_open(&m->shared, chars) < 0) {
            unlock_shared_cache(m);
            goto done;
        }
        new_words = &m->shared;
    }
    Py_ssize_t next = 0;
    BatchJob jobs[MAX_BATCH_THREADS];
    for (int k = 0; k < n_jobs; k++) /* lock_shared_cache emptied their caches into the calling thread's */
        jobs[k] = (BatchJob){m, &m->more_work[k], &m->work, new_words, scans, n_texts, which, strict, limit, &next,
                             outs, failures, NULL, NULL};
    run_jobs(encode_worker, jobs, n_jobs);
    PyMem_RawFree(m->shared.slots); /* its entries stay in the threads' chunks until they are taken */
    m->shared.slots = NULL;
    m->pending_work = limit > 0 ? n_jobs : 0;
    m->pending_limit = limit;
    unlock_shared_cache(m);
    for (Py_ssize_t t = 0; t < n_texts; t++) {
        if (failures[t].code < 0) {
            raise_failure(PyTuple_GET_ITEM(texts, t), &failures[t]);
            goto done;
        }
    }
    if (as_uint32) {
        result = uint32_ids(m, jobs, n_jobs, n_texts, outs, failures);
        goto done;
    }
    if (n_jobs > 1) {
        result = reported_lists(m, jobs, n_jobs, n_texts, outs);
        goto done;
    }
    result = PyList_New(n_texts);
    if (result == NULL)
        goto done;
    for (Py_ssize_t t = 0; t < n_texts; t++) {
        PyObject *ids = reported_list(m, outs[t].ids, outs[t].len);
        if (ids == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, t, ids);
    }
done:
    if (outs != NULL)
        for (Py_ssize_t t = 0; t < n_texts; t++)
            PyMem_RawFree(outs[t].ids);
    PyMem_Free(outs);
    PyMem_Free(scans);
    PyMem_Free(failures);
    Py_DECREF(texts);
    return result;
}

#endif /* BPEPROOF_FASTENC_BATCH_H */
