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

typedef struct SharedEntry {
    uint64_t hash;
    int32_t key_len, ids_len;
    /* followed by key_len code points (Py_UCS4), then ids_len dense ids (int32_t) */
} SharedEntry;

#define ENTRY_KEY(e) ((const Py_UCS4 *)((const SharedEntry *)(e) + 1))
#define ENTRY_IDS(e) ((const int32_t *)(ENTRY_KEY(e) + (e)->key_len))

typedef struct Chunk {
    struct Chunk *next;
    size_t used, size;
    _Alignas(8) unsigned char data[];
} Chunk;

/* Room for one entry of ``bytes`` bytes in w's chunks, never moved; NULL when out of memory. */
static SharedEntry *
chunk_entry(Work *w, size_t bytes)
{
    bytes = (bytes + 7) & ~(size_t)7;
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
    SharedEntry *entry = (SharedEntry *)(chunk->data + chunk->used);
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

/* A table for a batch of ``chars`` characters (about one new word per 32 characters, from 4,096 to 2**22 slots);
 * -1 with MemoryError. */
static int
shared_open(SharedTable *table, Py_ssize_t chars)
{
    uint64_t size = 4096;
    while (size < (uint64_t)(chars / 16) && size < ((uint64_t)1 << 22))
        size *= 2;
    table->slots = PyMem_RawCalloc(size, sizeof(SharedEntry *));
    if (table->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    table->mask = size - 1;
    table->room = (Py_ssize_t)(size / 2);
    table->count = 0;
    return 0;
}

/* The table's entry for data[start:end], or NULL. */
static inline const SharedEntry *
shared_find(const SharedTable *table, uint64_t hash, int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    uint64_t slot = hash & table->mask;
    for (;;) {
        const SharedEntry *entry = __atomic_load_n(&table->slots[slot], __ATOMIC_ACQUIRE);
        if (entry == NULL)
            return NULL;
        if (entry->hash == hash && entry->key_len == end - start &&
            key_equal(ENTRY_KEY(entry), kind, data, start, end - start))
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
    SharedEntry *entry = chunk_entry(w, sizeof(SharedEntry) + (size_t)length * sizeof(Py_UCS4) +
                                            (size_t)n_ids * sizeof(int32_t));
    if (entry == NULL)
        return -1;
    entry->hash = hash;
    entry->key_len = (int32_t)length;
    entry->ids_len = (int32_t)n_ids;
    Py_UCS4 *key = (Py_UCS4 *)(entry + 1);
    for (Py_ssize_t i = 0; i < length; i++)
        key[i] = PyUnicode_READ(kind, data, start + i);
    memcpy(key + length, ids, (size_t)n_ids * sizeof(int32_t));
    uint64_t slot = hash & table->mask;
    for (;;) {
        SharedEntry *seen = NULL;
        if (__atomic_compare_exchange_n(&table->slots[slot], &seen, entry, 0, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
            __atomic_fetch_add(&table->count, 1, __ATOMIC_RELAXED);
            return 1;
        }
        if (seen->hash == hash && seen->key_len == length && memcmp(ENTRY_KEY(seen), key, (size_t)length * 4) == 0)
            return 1; /* another thread put the same word first: this entry stays unused in the chunk */
        slot = (slot + 1) & table->mask;
    }
}

/* Add the words the last batch merged (its table's, then its threads' own caches') to the calling thread's
 * cache, each once, while it has room, and free them; -1 when out of memory.  A full cache takes none: making room
 * would drop half of it for every half a cache's worth of new words, one thread's work while the others wait,
 * which took longer than the batches themselves on text of many words (a file in many batches). */
static int
take_pending_words(Merger *m)
{
    int error = 0;
    for (Py_ssize_t k = 0; k < m->pending_work; k++) {
        const Work *w = &m->more_work[k];
        for (const Chunk *chunk = w->chunks; chunk != NULL; chunk = chunk->next) {
            for (size_t at = 0; at < chunk->used && !error && m->work.n_entries < m->pending_limit;) {
                const SharedEntry *entry = (const SharedEntry *)(chunk->data + at);
                Py_ssize_t length = entry->key_len;
                if (cache_find(&m->work, entry->hash, PyUnicode_4BYTE_KIND, ENTRY_KEY(entry), 0, length) == NULL)
                    error = cache_store(&m->work, m->pending_limit, entry->hash, PyUnicode_4BYTE_KIND,
                                        ENTRY_KEY(entry), 0, length, ENTRY_IDS(entry), entry->ids_len) < 0;
                at += (sizeof(SharedEntry) + (size_t)length * 4 + (size_t)entry->ids_len * 4 + 7) & ~(size_t)7;
            }
        }
        for (Py_ssize_t e = 0; e < w->n_entries && !error && m->work.n_entries < m->pending_limit; e++) {
            const CacheEntry *entry = &w->entries[e];
            Py_ssize_t start = entry->key_at, end = entry->key_at + entry->key_len;
            if (cache_find(&m->work, entry->hash, PyUnicode_4BYTE_KIND, w->cache_keys, start, end) == NULL)
                error = cache_store(&m->work, m->pending_limit, entry->hash, PyUnicode_4BYTE_KIND, w->cache_keys,
                                    start, end, w->cache_ids + entry->ids_at, entry->ids_len) < 0;
        }
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
