/*
 * _fastenc_shared.h: the word cache shared between threads: the calling thread's cache, read by every thread of a
 * batch, and a table of the words the batch merges, which every thread of it reads and adds to at once.
 *
 * Included by _fastenc.c after _fastenc_cache.h.  A thread of encode_texts looks a piece up in the calling
 * thread's cache (only read during a batch), then in the batch's SharedTable, then in its own Work's cache; a word
 * it merges goes into the table (or into its own cache once the table is half full), so that the other threads
 * find it and do not merge it again.  The table is insert-only: a slot holds NULL or a pointer to an entry that is
 * complete before the pointer is published (compare-and-swap with release order; readers load with acquire), and
 * an entry never moves (each thread allocates its entries in chunks of its own that are only freed with the
 * table).  Two threads that merge the same word at once both merge it; one entry wins the slot, and the ids are
 * the same.
 *
 * After a batch its words are pending: lock_shared_cache, which whoever uses the calling thread's cache next takes
 * (encode_text, the next batch, clear_cache, cached_words), first adds them to that cache and frees the table.
 */

#ifndef BPEPROOF_FASTENC_SHARED_H
#define BPEPROOF_FASTENC_SHARED_H

#include "_fastenc_cache.h"

#include "pythread.h"

#define MAX_BATCH_THREADS 64
#define SHARED_COUNT_STEP 16

typedef struct Chunk {
    struct Chunk *next;
    size_t used, size;
    _Alignas(8) unsigned char data[];
} Chunk;

/* Room for one entry of ``bytes`` bytes (a multiple of eight) in w's chunks, never moved; NULL when out of memory. */
static WordRecord *
chunk_entry(Work *w, size_t bytes)
{
    Chunk *chunk = w->chunks;
    if (chunk == NULL || chunk->size - chunk->used < bytes) {
        size_t size = bytes > (1 << 16) ? bytes : (1 << 16);
        chunk = PyMem_RawMalloc(sizeof(Chunk) + size);
        if (chunk == NULL)
            return NULL;
        chunk->next = w->chunks;
        chunk->used = 0;
        chunk->size = size;
        w->chunks = chunk;
    }
    WordRecord *entry = (WordRecord *)(chunk->data + chunk->used);
    chunk->used += bytes;
    return entry;
}

static void
chunks_free(Work *w)
{
    while (w->chunks != NULL) {
        Chunk *next = w->chunks->next;
        PyMem_RawFree(w->chunks);
        w->chunks = next;
    }
}

/* A table for a batch of ``chars`` characters (room for a new word per 16 to 32 characters, from 4,096 to 2**22
 * slots: a larger table, mostly empty, is slower to read); -1 with MemoryError. */
static int
shared_open(SharedTable *table, Py_ssize_t chars)
{
    uint64_t size = 4096;
    while (size < (uint64_t)(chars / 16) && size < ((uint64_t)1 << 22))
        size *= 2;
    table->slots = PyMem_RawCalloc(size, sizeof(WordRecord *));
    if (table->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    table->mask = size - 1;
    /* The count lags by under SHARED_COUNT_STEP per thread: the room leaves that much of the half free. */
    table->room = (Py_ssize_t)(size / 2) - SHARED_COUNT_STEP * MAX_BATCH_THREADS;
    table->count = 0;
    return 0;
}

/* Start fetching the slot where shared_find(table, hash, ...) will look first. */
static inline void
shared_prefetch(const SharedTable *table, uint64_t hash)
{
    __builtin_prefetch(&table->slots[hash & table->mask]);
}

/* The table's entry for data[start:end], or NULL. */
static inline const WordRecord *
shared_find(const SharedTable *table, uint64_t hash, int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    uint64_t slot = hash & table->mask;
    for (;;) {
        const WordRecord *entry = __atomic_load_n(&table->slots[slot], __ATOMIC_ACQUIRE);
        if (entry == NULL)
            return NULL;
        if (entry->hash == hash && entry->key_len == end - start &&
            key_equal(RECORD_KEY(entry), kind, data, start, end - start))
            return entry;
        slot = (slot + 1) & table->mask;
    }
}

/* Put data[start:end] -> ids[0..n_ids) in the table: 1 when it is there (put by this thread or another), 0 when the
 * table is full, -1 when out of memory. */
static int
shared_put(SharedTable *table, Work *w, uint64_t hash, int kind, const void *data, Py_ssize_t start,
           Py_ssize_t end, const int32_t *ids, Py_ssize_t n_ids)
{
    if (__atomic_load_n(&table->count, __ATOMIC_RELAXED) >= table->room)
        return 0;
    Py_ssize_t length = end - start;
    WordRecord *entry = chunk_entry(w, RECORD_SIZE(length, n_ids));
    if (entry == NULL)
        return -1;
    record_fill(entry, hash, kind, data, start, end, ids, n_ids);
    const Py_UCS4 *key = RECORD_KEY(entry);
    uint64_t slot = hash & table->mask;
    for (;;) {
        WordRecord *seen = NULL;
        if (__atomic_compare_exchange_n(&table->slots[slot], &seen, entry, 0, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
            if (++w->uncounted == SHARED_COUNT_STEP) {
                __atomic_fetch_add(&table->count, SHARED_COUNT_STEP, __ATOMIC_RELAXED);
                w->uncounted = 0;
            }
            return 1;
        }
        if (seen->hash == hash && seen->key_len == length && memcmp(RECORD_KEY(seen), key, (size_t)length * 4) == 0)
            return 1; /* another thread put the same word first: this entry stays unused in the chunk */
        slot = (slot + 1) & table->mask;
    }
}

/* Add the records records[0..len) (each a word of a batch) that the calling thread's cache lacks to it, while it has
 * room; -1 when out of memory. */
static int
take_records(Merger *m, const unsigned char *records, size_t len)
{
    for (size_t at = 0; at < len && m->work.n_entries < m->pending_limit;) {
        const WordRecord *r = (const WordRecord *)(records + at);
        if (cache_find(&m->work, r->hash, PyUnicode_4BYTE_KIND, RECORD_KEY(r), 0, r->key_len) == NULL &&
            cache_store(&m->work, m->pending_limit, r->hash, PyUnicode_4BYTE_KIND, RECORD_KEY(r), 0, r->key_len,
                        RECORD_IDS(r), r->ids_len) < 0)
            return -1;
        at += RECORD_SIZE(r->key_len, r->ids_len);
    }
    return 0;
}

/* Add the words the last batch merged (its table's, then its threads' own caches') to the calling thread's
 * cache, each once, while it has room, and free them; -1 when out of memory.  A full cache takes none: making room
 * would drop half of it for every half a cache's worth of new words, one thread's work while the others wait,
 * which took longer than the batches themselves on text of many words (a file in many batches). */
static int
take_pending_words(Merger *m)
{
    int error = 0;
    for (Py_ssize_t k = 0; k < m->pending_work && !error; k++) {
        const Work *w = &m->more_work[k];
        for (const Chunk *chunk = w->chunks; chunk != NULL && !error; chunk = chunk->next)
            error = take_records(m, chunk->data, chunk->used) < 0;
        error = error || take_records(m, w->records, w->records_len) < 0;
    }
    for (Py_ssize_t k = 0; k < m->n_more_work; k++) {
        chunks_free(&m->more_work[k]);
        cache_clear(&m->more_work[k]);
    }
    PyMem_RawFree(m->shared.slots);
    m->shared.slots = NULL;
    m->pending_work = 0;
    return error ? -1 : 0;
}

/* Take the Merger's batch lock (made here when first needed), waiting with the GIL released while a batch runs:
 * encode_texts reads the calling thread's cache from several threads, and whoever changes it must wait.  Then the
 * words the last batch left pending join that cache.  0, or -1 with MemoryError (the lock not held). */
static int
lock_shared_cache(Merger *m)
{
    if (m->batch_lock == NULL && (m->batch_lock = PyThread_allocate_lock()) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (!PyThread_acquire_lock(m->batch_lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(m->batch_lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
    if (take_pending_words(m) < 0) {
        PyThread_release_lock(m->batch_lock);
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void
unlock_shared_cache(Merger *m)
{
    PyThread_release_lock(m->batch_lock);
}

static PyObject *
Merger_clear_cache(Merger *m, PyObject *unused)
{
    if (lock_shared_cache(m) < 0)
        return NULL;
    cache_clear(&m->work);
    unlock_shared_cache(m);
    Py_RETURN_NONE;
}

static PyObject *
Merger_cached_words(Merger *m, PyObject *unused)
{
    if (lock_shared_cache(m) < 0)
        return NULL;
    Py_ssize_t words = m->work.n_entries;
    unlock_shared_cache(m);
    return PyLong_FromSsize_t(words);
}

#endif /* BPEPROOF_FASTENC_SHARED_H */
