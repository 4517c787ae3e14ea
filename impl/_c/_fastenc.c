/*
 * _fastenc: the merge loop of bpeproof.impl.encoder in C (def-bpe), and the word loop of bpeproof.impl.tokenizer.
 *
 * Merger(parts_a, parts_b, outputs)
 *
 *   A compiled rule list in *dense* ids: the bytes are 0..255 and the token made
 *   by the rule of rank k (k = 0, 1, ...) is 256 + k.  parts_a[k], parts_b[k] are
 *   the dense ids joined by rule k (each < 256 + k: rule k is over V_{k-1});
 *   outputs[d] is the id reported for dense id d (any int object, so ids of any
 *   size pass through untouched).  A pair keeps the first rule joining it: a
 *   later rule for the same pair never fires (see impl/encoder.py).
 *
 *   encode(word: bytes-like) -> tuple[int, ...]
 *       enc_R(word): repeatedly merge the adjacent pair of lowest rank, the
 *       leftmost one among equal ranks, exactly as Encoder._merge_short and
 *       Encoder._merge_long do.  Short words use a flat array scanned for the
 *       minimum; long ones a linked list of positions and a binary heap of
 *       (rank, position) keys with lazy invalidation: an entry is skipped when
 *       its position is gone or its pair no longer has that rank.  Applying rank
 *       k never creates a rank-k pair (every new pair holds the new id 256 + k,
 *       which only later rules join), so the entries of rank k come off the heap
 *       in increasing position order: the left-to-right pass M_{r_k} (def-merge).
 *
 *   encode_pieces(pieces: list[str], cache: dict, limit: int) -> list[int]
 *       For each piece: the cached tuple if ``cache`` has one, else the UTF-8
 *       bytes of the piece (surrogateescape: U+DC80..U+DCFF stand for the
 *       bytes 0x80..0xFF) encoded as above and stored in ``cache`` when
 *       ``limit`` > 0; a full cache first loses its older half (insertion
 *       order), as bpeproof.impl.word_cache.WordCache does.  The ids of all pieces are
 *       returned as one list.
 *
 *   encode_text(text: str, table: bytes, which: int, limit: int) -> list[int]
 *       The ids of the pieces of split_pattern(text, table, which), without making the list of
 *       pieces, through a word cache of the merger's own (at most ``limit`` words, the older half
 *       dropped when full) keyed by code points: a piece seen before costs no str object.
 *       clear_cache() empties it; cached_words() counts its words.
 *
 * split_pattern(text: str, table: bytes, which: int) -> list[str]
 *
 *   regex.findall with tiktoken's cl100k (0), o200k (1) or r50k (2) pattern, written out by hand
 *   (impl/_c/_fastenc_scan.h, included below).
 *
 * WordCounter(): add(text, table, which) counts the pieces of split_pattern(text, table, which) without making
 *   them, counts() gives the table as {UTF-8 bytes: count} (impl/_c/_fastenc_count.h, included below).
 *
 * Limits: fewer than 2**31 - 256 rules, words shorter than 2**31 bytes and pieces of text shorter than
 * 2**29 characters (OverflowError beyond; bpeproof.impl.encoder and bpeproof.impl.tokenizer use their Python loops there).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A pair's value: (rank << 32) | dense id of the result; NO_VALUE when the pair does not merge. */
#define NO_VALUE UINT64_MAX
#define VALUE(rank, result) (((uint64_t)(uint32_t)(rank) << 32) | (uint32_t)(result))
#define RANK_OF(value) ((int32_t)((value) >> 32))
#define RESULT_OF(value) ((int32_t)((value) & 0xFFFFFFFFu))
#define EMPTY_KEY UINT64_MAX
/* Words of at most this many bytes are merged in a flat array. */
#ifndef SHORT_WORD
#define SHORT_WORD 48
#endif

/* One slot of the pair table: key and rank side by side, so that a lookup touches one cache line. */
typedef struct {
    uint64_t key; /* (a << 32) | b, EMPTY_KEY for a free slot */
    uint64_t value; /* VALUE(rank, result) */
} Slot;

typedef struct {
    PyObject_HEAD
    uint64_t *byte_pairs; /* the value of each pair of dense ids below 256 (a << 8 | b) */
    int32_t byte_units[256]; /* the dense id a word's byte starts as */
    Slot *slots;
    uint64_t mask;
    int shift;
    Py_ssize_t n_ids; /* 256 + number of rules */
    PyObject **outputs; /* n_ids owned references; None for a byte that has no id (an error when reported) */
    /* The whole-piece table: a word whose bytes are one of these is that dense id, without merging. */
    PyObject **whole; /* n_ids owned bytes references or NULL; NULL when there is no table */
    int32_t *whole_index; /* dense ids, -1 for a free slot */
    uint32_t *whole_hash; /* the low bits of each slot's bytes_hash, compared before the bytes */
    uint64_t whole_mask;
    /* Work space, grown on demand; only used while the GIL is held and no Python code runs. */
    int32_t *tok, *nxt, *prv;
    uint64_t *aux;
    uint64_t *heap;
    Py_ssize_t cap;
    /* The word cache of encode_text: entries in insertion order, and an open-addressing index over them. */
    struct CacheEntry *entries;
    Py_ssize_t n_entries, cap_entries;
    int32_t *index; /* entry numbers, -1 for a free slot */
    uint64_t index_mask; /* index size - 1; the index is NULL until the first entry */
} Merger;

typedef struct CacheEntry {
    uint64_t hash; /* piece_hash of the key */
    PyObject *key; /* the piece (str), owned */
    PyObject *ids; /* its ids (tuple), owned */
} CacheEntry;

static inline uint64_t
slot_of(const Merger *m, uint64_t key)
{
    return (key * UINT64_C(0x9E3779B97F4A7C15)) >> m->shift;
}

static inline uint64_t
lookup(const Merger *m, int32_t a, int32_t b)
{
    if ((a | b) < 256)
        return m->byte_pairs[a << 8 | b];
    uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
    uint64_t i = slot_of(m, key);
    for (;;) {
        uint64_t found = m->slots[i].key;
        if (found == key)
            return m->slots[i].value;
        if (found == EMPTY_KEY)
            return NO_VALUE;
        i = (i + 1) & m->mask;
    }
}

/* Set the value of the pair (a, b), replacing an earlier one when ``replace``. */
static void
insert_pair(Merger *m, int32_t a, int32_t b, uint64_t value, int replace)
{
    uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
    uint64_t i = slot_of(m, key);
    while (m->slots[i].key != EMPTY_KEY && m->slots[i].key != key)
        i = (i + 1) & m->mask;
    if (m->slots[i].key == EMPTY_KEY || replace) {
        m->slots[i].key = key;
        m->slots[i].value = value;
        if ((a | b) < 256)
            m->byte_pairs[a << 8 | b] = value;
    }
}

static inline uint64_t
bytes_hash(const unsigned char *data, Py_ssize_t n)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (Py_ssize_t i = 0; i < n; i++)
        h = (h ^ data[i]) * UINT64_C(1099511628211);
    return h ^ (uint64_t)n;
}

/* The dense id whose whole-piece bytes are data[0..n), or -1. */
static int32_t
whole_find(const Merger *m, const unsigned char *data, Py_ssize_t n)
{
    if (m->whole_index == NULL)
        return -1;
    uint64_t h = bytes_hash(data, n);
    uint64_t i = h & m->whole_mask;
    for (;;) {
        int32_t d = m->whole_index[i];
        if (d < 0)
            return -1;
        PyObject *key = m->whole[d];
        if (m->whole_hash[i] == (uint32_t)(h >> 32) && PyBytes_GET_SIZE(key) == n &&
            memcmp(PyBytes_AS_STRING(key), data, (size_t)n) == 0)
            return d;
        i = (i + 1) & m->whole_mask;
    }
}

static int
ensure_capacity(Merger *m, Py_ssize_t n)
{
    if (n <= m->cap)
        return 0;
    Py_ssize_t cap = m->cap ? m->cap : 64;
    while (cap < n)
        cap *= 2;
    int32_t *tok = PyMem_Realloc(m->tok, (size_t)cap * sizeof(int32_t));
    if (tok == NULL)
        goto fail;
    m->tok = tok;
    uint64_t *aux = PyMem_Realloc(m->aux, (size_t)cap * sizeof(uint64_t));
    if (aux == NULL)
        goto fail;
    m->aux = aux;
    int32_t *nxt = PyMem_Realloc(m->nxt, (size_t)cap * sizeof(int32_t));
    if (nxt == NULL)
        goto fail;
    m->nxt = nxt;
    int32_t *prv = PyMem_Realloc(m->prv, (size_t)cap * sizeof(int32_t));
    if (prv == NULL)
        goto fail;
    m->prv = prv;
    /* At most n - 1 initial entries and two per merge: 3n bounds the heap. */
    uint64_t *heap = PyMem_Realloc(m->heap, (size_t)cap * 3 * sizeof(uint64_t));
    if (heap == NULL)
        goto fail;
    m->heap = heap;
    m->cap = cap;
    return 0;
fail:
    PyErr_NoMemory();
    return -1;
}

/* ---- merging: m->tok[0..n) holds the byte ids on entry; returns the length of the result there ---- */

static Py_ssize_t
merge_short(Merger *m, Py_ssize_t n)
{
    int32_t *tok = m->tok;
    uint64_t *rk = m->aux;
    if (n < 2)
        return n;
    for (Py_ssize_t i = 0; i + 1 < n; i++)
        rk[i] = lookup(m, tok[i], tok[i + 1]);
    Py_ssize_t len = n;
    while (len > 1) {
        uint64_t best = NO_VALUE;
        Py_ssize_t at = -1;
        for (Py_ssize_t i = 0; i + 1 < len; i++) {
            if (rk[i] < best) { /* values order by rank first: the leftmost pair of the lowest rank */
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
merge_long(Merger *m, Py_ssize_t n)
{
    int32_t *tok = m->tok, *nxt = m->nxt, *prv = m->prv;
    uint64_t *heap = m->heap;
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

/* m->tok[0..n) holds a word's bytes: the whole-piece id if the table has the word, else its units merged. */
static Py_ssize_t
merge(Merger *m, Py_ssize_t n)
{
    int32_t *tok = m->tok;
    if (m->whole_index != NULL && n > 1) {
        unsigned char stack[64];
        unsigned char *bytes = n <= 64 ? stack : PyMem_Malloc((size_t)n);
        if (bytes != NULL) {
            for (Py_ssize_t i = 0; i < n; i++)
                bytes[i] = (unsigned char)tok[i];
            int32_t d = whole_find(m, bytes, n);
            if (bytes != stack)
                PyMem_Free(bytes);
            if (d >= 0) {
                tok[0] = d;
                return 1;
            }
        } /* out of memory for the copy: merging gives the same ids for every table built here but slower */
    }
    for (Py_ssize_t i = 0; i < n; i++)
        tok[i] = m->byte_units[tok[i]];
    return n <= SHORT_WORD ? merge_short(m, n) : merge_long(m, n);
}

static PyObject *
result_tuple(Merger *m, Py_ssize_t len)
{
    PyObject *tuple = PyTuple_New(len);
    if (tuple == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *id = m->outputs[m->tok[i]];
        if (id == Py_None) {
            Py_DECREF(tuple);
            PyErr_Format(PyExc_ValueError,
                         "byte 0x%02x has no token in the vocabulary and no token covers it here", m->tok[i]);
            return NULL;
        }
        Py_INCREF(id);
        PyTuple_SET_ITEM(tuple, i, id);
    }
    return tuple;
}

/* ---- the word cache of encode_text ----
 *
 * Keyed by the code points of a piece, so that a piece of the text is looked up without making a str
 * of it; a str is made only for a new word.  At most ``limit`` words: a full cache first loses its
 * older half (insertion order), as bpeproof.impl.word_cache.WordCache does.
 */

static inline uint64_t
piece_hash(int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325) ^ (uint64_t)(end - start);
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *p = (const Py_UCS1 *)data;
        for (Py_ssize_t i = start; i < end; i++)
            h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    } else if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *p = (const Py_UCS2 *)data;
        for (Py_ssize_t i = start; i < end; i++)
            h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    } else {
        const Py_UCS4 *p = (const Py_UCS4 *)data;
        for (Py_ssize_t i = start; i < end; i++)
            h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    }
    return h ^ (h >> 32);
}

/* Whether the str ``key`` holds exactly the code points data[start:end]. */
static inline int
piece_equal(PyObject *key, int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    Py_ssize_t length = end - start;
    if (PyUnicode_GET_LENGTH(key) != length)
        return 0;
    int key_kind = PyUnicode_KIND(key);
    const void *key_data = PyUnicode_DATA(key);
    if (key_kind == kind)
        return memcmp(key_data, (const char *)data + start * kind, (size_t)(length * kind)) == 0;
    for (Py_ssize_t i = 0; i < length; i++)
        if (PyUnicode_READ(key_kind, key_data, i) != PyUnicode_READ(kind, data, start + i))
            return 0;
    return 1;
}

static void
cache_clear(Merger *m)
{
    for (Py_ssize_t e = 0; e < m->n_entries; e++) {
        Py_DECREF(m->entries[e].key);
        Py_DECREF(m->entries[e].ids);
    }
    m->n_entries = 0;
    if (m->index != NULL)
        memset(m->index, 0xFF, (size_t)(m->index_mask + 1) * sizeof(int32_t));
}

/* Rebuild the index over the entries, with ``size`` slots (a power of two above twice the entries). */
static int
cache_reindex(Merger *m, uint64_t size)
{
    if (m->index == NULL || size != m->index_mask + 1) {
        int32_t *index = PyMem_Realloc(m->index, (size_t)size * sizeof(int32_t));
        if (index == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        m->index = index;
        m->index_mask = size - 1;
    }
    memset(m->index, 0xFF, (size_t)size * sizeof(int32_t));
    for (Py_ssize_t e = 0; e < m->n_entries; e++) {
        uint64_t slot = m->entries[e].hash & m->index_mask;
        while (m->index[slot] >= 0)
            slot = (slot + 1) & m->index_mask;
        m->index[slot] = (int32_t)e;
    }
    return 0;
}

/* The cached ids of data[start:end] (borrowed), or NULL. */
static inline PyObject *
cache_find(const Merger *m, uint64_t hash, int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    if (m->index == NULL)
        return NULL;
    uint64_t slot = hash & m->index_mask;
    for (;;) {
        int32_t e = m->index[slot];
        if (e < 0)
            return NULL;
        const CacheEntry *entry = &m->entries[e];
        if (entry->hash == hash && piece_equal(entry->key, kind, data, start, end))
            return entry->ids;
        slot = (slot + 1) & m->index_mask;
    }
}

/* Store key -> ids (new references taken), first dropping the older half when ``limit`` words are cached. */
static int
cache_store(Merger *m, Py_ssize_t limit, uint64_t hash, PyObject *key, PyObject *ids)
{
    if (m->n_entries >= limit) {
        Py_ssize_t drop = m->n_entries / 2 > 0 ? m->n_entries / 2 : 1;
        for (Py_ssize_t e = 0; e < drop; e++) {
            Py_DECREF(m->entries[e].key);
            Py_DECREF(m->entries[e].ids);
        }
        m->n_entries -= drop;
        memmove(m->entries, m->entries + drop, (size_t)m->n_entries * sizeof(CacheEntry));
        if (cache_reindex(m, m->index_mask + 1) < 0)
            return -1;
    }
    if (m->n_entries >= (Py_ssize_t)INT32_MAX - 1)
        return 0; /* entry numbers are 32-bit: a cache this large stops growing */
    if (m->n_entries == m->cap_entries) {
        Py_ssize_t cap = m->cap_entries ? 2 * m->cap_entries : 1024;
        CacheEntry *entries = PyMem_Realloc(m->entries, (size_t)cap * sizeof(CacheEntry));
        if (entries == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        m->entries = entries;
        m->cap_entries = cap;
    }
    uint64_t size = m->index == NULL ? 2048 : m->index_mask + 1;
    while ((uint64_t)(m->n_entries + 1) * 2 > size)
        size *= 2;
    if ((m->index == NULL || size != m->index_mask + 1) && cache_reindex(m, size) < 0)
        return -1;
    Py_INCREF(key);
    Py_INCREF(ids);
    Py_ssize_t e = m->n_entries++;
    m->entries[e].hash = hash;
    m->entries[e].key = key;
    m->entries[e].ids = ids;
    uint64_t slot = hash & m->index_mask;
    while (m->index[slot] >= 0)
        slot = (slot + 1) & m->index_mask;
    m->index[slot] = (int32_t)e;
    return 0;
}

static PyObject *
Merger_clear_cache(Merger *m, PyObject *unused)
{
    cache_clear(m);
    Py_RETURN_NONE;
}

static PyObject *
Merger_cached_words(Merger *m, PyObject *unused)
{
    return PyLong_FromSsize_t(m->n_entries);
}

/* ---- the type ---- */

static void
Merger_dealloc(Merger *m)
{
    if (m->outputs != NULL) {
        for (Py_ssize_t i = 0; i < m->n_ids; i++)
            Py_XDECREF(m->outputs[i]);
        PyMem_Free(m->outputs);
    }
    if (m->whole != NULL) {
        for (Py_ssize_t i = 0; i < m->n_ids; i++)
            Py_XDECREF(m->whole[i]);
        PyMem_Free(m->whole);
    }
    PyMem_Free(m->whole_index);
    PyMem_Free(m->whole_hash);
    PyMem_Free(m->slots);
    PyMem_Free(m->byte_pairs);
    PyMem_Free(m->tok);
    PyMem_Free(m->aux);
    PyMem_Free(m->nxt);
    PyMem_Free(m->prv);
    PyMem_Free(m->heap);
    cache_clear(m);
    PyMem_Free(m->entries);
    PyMem_Free(m->index);
    Py_TYPE(m)->tp_free((PyObject *)m);
}

static int
dense_part(PyObject *item, Py_ssize_t limit, int32_t *out)
{
    if (!PyLong_Check(item)) {
        PyErr_SetString(PyExc_TypeError, "rule parts must be ints");
        return -1;
    }
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(item, &overflow);
    if (value == -1 && PyErr_Occurred())
        return -1;
    if (overflow || value < 0 || value >= limit) {
        PyErr_SetString(PyExc_ValueError, "a rule part must be a dense id made before the rule");
        return -1;
    }
    *out = (int32_t)value;
    return 0;
}

/* A Merger with room for ``pairs`` pairs over ``n_ids`` dense ids, the bytes starting as 0..255, and the
 * outputs taken from the sequence ``out_seq`` (n_ids ints, or None for a byte without an id). */
static Merger *
merger_alloc(PyTypeObject *type, Py_ssize_t n_ids, Py_ssize_t pairs, PyObject *out_seq)
{
    if (n_ids >= (Py_ssize_t)INT32_MAX || pairs >= (Py_ssize_t)INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "too many ids for the C merge loop");
        return NULL;
    }
    if (PySequence_Fast_GET_SIZE(out_seq) != n_ids) {
        PyErr_SetString(PyExc_ValueError, "outputs must have one entry per dense id");
        return NULL;
    }
    Merger *m = (Merger *)type->tp_alloc(type, 0);
    if (m == NULL)
        return NULL;
    uint64_t slots = 16;
    int bits = 4;
    while (slots < (uint64_t)pairs * 2 + 2) {
        slots *= 2;
        bits++;
    }
    m->mask = slots - 1;
    m->shift = 64 - bits;
    m->slots = PyMem_Malloc(slots * sizeof(Slot));
    m->byte_pairs = PyMem_Malloc(65536 * sizeof(uint64_t));
    m->outputs = PyMem_Calloc((size_t)n_ids, sizeof(PyObject *));
    if (m->slots == NULL || m->byte_pairs == NULL || m->outputs == NULL) {
        PyErr_NoMemory();
        Py_DECREF(m);
        return NULL;
    }
    m->n_ids = n_ids;
    for (uint64_t i = 0; i < slots; i++)
        m->slots[i].key = EMPTY_KEY;
    for (int i = 0; i < 65536; i++)
        m->byte_pairs[i] = NO_VALUE;
    for (int i = 0; i < 256; i++)
        m->byte_units[i] = i;
    PyObject **out_items = PySequence_Fast_ITEMS(out_seq);
    for (Py_ssize_t d = 0; d < n_ids; d++) {
        if (!PyLong_Check(out_items[d]) && !(d < 256 && out_items[d] == Py_None)) {
            PyErr_SetString(PyExc_TypeError, "outputs must be ints (None only for a byte without an id)");
            Py_DECREF(m);
            return NULL;
        }
        Py_INCREF(out_items[d]);
        m->outputs[d] = out_items[d];
    }
    if (ensure_capacity(m, 256) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

/* The whole-piece table from ``whole``: one bytes object (or None) per dense id. */
static int
whole_build(Merger *m, PyObject *whole_seq)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(whole_seq);
    if (n != m->n_ids) {
        PyErr_SetString(PyExc_ValueError, "whole must have one entry per dense id");
        return -1;
    }
    PyObject **items = PySequence_Fast_ITEMS(whole_seq);
    Py_ssize_t count = 0;
    for (Py_ssize_t d = 0; d < n; d++) {
        if (items[d] != Py_None && !PyBytes_Check(items[d])) {
            PyErr_SetString(PyExc_TypeError, "whole entries must be bytes or None");
            return -1;
        }
        count += items[d] != Py_None;
    }
    if (count == 0)
        return 0;
    uint64_t size = 16;
    while (size < (uint64_t)count * 2 + 2)
        size *= 2;
    m->whole = PyMem_Calloc((size_t)n, sizeof(PyObject *));
    m->whole_index = PyMem_Malloc(size * sizeof(int32_t));
    m->whole_hash = PyMem_Malloc(size * sizeof(uint32_t));
    if (m->whole == NULL || m->whole_index == NULL || m->whole_hash == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    m->whole_mask = size - 1;
    for (uint64_t i = 0; i < size; i++)
        m->whole_index[i] = -1;
    for (Py_ssize_t d = 0; d < n; d++) {
        if (items[d] == Py_None)
            continue;
        const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(items[d]);
        Py_ssize_t len = PyBytes_GET_SIZE(items[d]);
        if (whole_find(m, data, len) >= 0)
            continue; /* the first id with these bytes keeps them */
        Py_INCREF(items[d]);
        m->whole[d] = items[d];
        uint64_t h = bytes_hash(data, len);
        uint64_t i = h & m->whole_mask;
        while (m->whole_index[i] >= 0)
            i = (i + 1) & m->whole_mask;
        m->whole_index[i] = (int32_t)d;
        m->whole_hash[i] = (uint32_t)(h >> 32);
    }
    return 0;
}

static PyObject *
Merger_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"parts_a", "parts_b", "outputs", NULL};
    PyObject *a_obj, *b_obj, *out_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO:Merger", names, &a_obj, &b_obj, &out_obj))
        return NULL;
    PyObject *a_seq = NULL, *b_seq = NULL, *out_seq = NULL;
    Merger *m = NULL;
    a_seq = PySequence_Fast(a_obj, "parts_a must be a sequence");
    if (a_seq == NULL)
        goto fail;
    b_seq = PySequence_Fast(b_obj, "parts_b must be a sequence");
    if (b_seq == NULL)
        goto fail;
    out_seq = PySequence_Fast(out_obj, "outputs must be a sequence");
    if (out_seq == NULL)
        goto fail;
    Py_ssize_t rules = PySequence_Fast_GET_SIZE(a_seq);
    if (PySequence_Fast_GET_SIZE(b_seq) != rules || PySequence_Fast_GET_SIZE(out_seq) != 256 + rules) {
        PyErr_SetString(PyExc_ValueError, "parts_a, parts_b must have one entry per rule and outputs 256 more");
        goto fail;
    }
    if (rules >= (Py_ssize_t)INT32_MAX - 256) {
        PyErr_SetString(PyExc_OverflowError, "too many rules for the C merge loop");
        goto fail;
    }
    m = merger_alloc(type, 256 + rules, rules, out_seq);
    if (m == NULL)
        goto fail;
    PyObject **a_items = PySequence_Fast_ITEMS(a_seq);
    PyObject **b_items = PySequence_Fast_ITEMS(b_seq);
    for (Py_ssize_t k = 0; k < rules; k++) {
        int32_t a, b;
        if (dense_part(a_items[k], 256 + k, &a) < 0 || dense_part(b_items[k], 256 + k, &b) < 0)
            goto fail;
        /* The first rule for a pair is the one that fires: rule k makes the dense id 256 + k. */
        insert_pair(m, a, b, VALUE(k, 256 + k), 0);
    }
    Py_DECREF(a_seq);
    Py_DECREF(b_seq);
    Py_DECREF(out_seq);
    return (PyObject *)m;
fail:
    Py_XDECREF(a_seq);
    Py_XDECREF(b_seq);
    Py_XDECREF(out_seq);
    Py_XDECREF(m);
    return NULL;
}

/* Merger.from_pairs(byte_units, pairs_a, pairs_b, ranks, results, outputs, whole): any pair table. */
static PyObject *
Merger_from_pairs(PyTypeObject *type, PyObject *args)
{
    PyObject *objs[7];
    if (!PyArg_ParseTuple(args, "OOOOOOO:from_pairs", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5],
                          &objs[6]))
        return NULL;
    PyObject *seqs[7] = {NULL};
    Merger *m = NULL;
    for (int i = 0; i < 7; i++) {
        seqs[i] = PySequence_Fast(objs[i], "from_pairs takes sequences");
        if (seqs[i] == NULL)
            goto fail;
    }
    Py_ssize_t n_ids = PySequence_Fast_GET_SIZE(seqs[5]);
    Py_ssize_t pairs = PySequence_Fast_GET_SIZE(seqs[1]);
    if (PySequence_Fast_GET_SIZE(seqs[0]) != 256 || PySequence_Fast_GET_SIZE(seqs[2]) != pairs ||
        PySequence_Fast_GET_SIZE(seqs[3]) != pairs || PySequence_Fast_GET_SIZE(seqs[4]) != pairs) {
        PyErr_SetString(PyExc_ValueError, "from_pairs: 256 byte units and one a, b, rank, result per pair");
        goto fail;
    }
    m = merger_alloc(type, n_ids, pairs, seqs[5]);
    if (m == NULL)
        goto fail;
    for (int i = 0; i < 256; i++) {
        int32_t unit;
        if (dense_part(PySequence_Fast_GET_ITEM(seqs[0], i), n_ids, &unit) < 0)
            goto fail;
        m->byte_units[i] = unit;
    }
    for (Py_ssize_t k = 0; k < pairs; k++) {
        int32_t a, b, rank, result;
        if (dense_part(PySequence_Fast_GET_ITEM(seqs[1], k), n_ids, &a) < 0 ||
            dense_part(PySequence_Fast_GET_ITEM(seqs[2], k), n_ids, &b) < 0 ||
            dense_part(PySequence_Fast_GET_ITEM(seqs[3], k), INT32_MAX, &rank) < 0 ||
            dense_part(PySequence_Fast_GET_ITEM(seqs[4], k), n_ids, &result) < 0)
            goto fail;
        insert_pair(m, a, b, VALUE(rank, result), 1);
    }
    if (whole_build(m, seqs[6]) < 0)
        goto fail;
    for (int i = 0; i < 7; i++)
        Py_DECREF(seqs[i]);
    return (PyObject *)m;
fail:
    for (int i = 0; i < 7; i++)
        Py_XDECREF(seqs[i]);
    Py_XDECREF(m);
    return NULL;
}

/* Merger.from_ranks(tokens, outputs): tiktoken's semantics.  tokens[k] (bytes of two or more bytes, in rank
 * order, distinct) is the dense id 256 + k; every split of it into two parts that are bytes or tokens is a
 * pair of rank k; and every token is a whole piece. */
static PyObject *
Merger_from_ranks(PyTypeObject *type, PyObject *args)
{
    PyObject *tokens_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OO:from_ranks", &tokens_obj, &out_obj))
        return NULL;
    PyObject *tokens = PySequence_Fast(tokens_obj, "tokens must be a sequence");
    if (tokens == NULL)
        return NULL;
    PyObject *out_seq = PySequence_Fast(out_obj, "outputs must be a sequence");
    if (out_seq == NULL) {
        Py_DECREF(tokens);
        return NULL;
    }
    Merger *m = NULL;
    PyObject *whole = NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(tokens);
    PyObject **items = PySequence_Fast_ITEMS(tokens);
    Py_ssize_t pairs = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        if (!PyBytes_Check(items[k]) || PyBytes_GET_SIZE(items[k]) < 2) {
            PyErr_SetString(PyExc_TypeError, "tokens must be bytes of two or more bytes");
            goto fail;
        }
        pairs += PyBytes_GET_SIZE(items[k]) - 1;
    }
    m = merger_alloc(type, 256 + count, pairs, out_seq);
    if (m == NULL)
        goto fail;
    whole = PyList_New(256 + count);
    if (whole == NULL)
        goto fail;
    for (Py_ssize_t d = 0; d < 256 + count; d++) {
        PyObject *item = d < 256 ? Py_None : items[d - 256];
        Py_INCREF(item);
        PyList_SET_ITEM(whole, d, item);
    }
    if (whole_build(m, whole) < 0)
        goto fail;
    for (Py_ssize_t k = 0; k < count; k++) {
        const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(items[k]);
        Py_ssize_t len = PyBytes_GET_SIZE(items[k]);
        for (Py_ssize_t i = 1; i < len; i++) {
            int32_t left = i == 1 ? (int32_t)data[0] : whole_find(m, data, i);
            if (left < 0)
                continue; /* most prefixes are no token: skip the suffix's look-up */
            int32_t right = i == len - 1 ? (int32_t)data[i] : whole_find(m, data + i, len - i);
            if (right >= 0)
                insert_pair(m, left, right, VALUE(k, 256 + k), 0);
        }
    }
    Py_DECREF(whole);
    Py_DECREF(tokens);
    Py_DECREF(out_seq);
    return (PyObject *)m;
fail:
    Py_XDECREF(whole);
    Py_DECREF(tokens);
    Py_DECREF(out_seq);
    Py_XDECREF(m);
    return NULL;
}

static PyObject *
Merger_encode(Merger *m, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Py_ssize_t n = view.len;
    if (n >= INT32_MAX) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_OverflowError, "word too long for the C merge loop");
        return NULL;
    }
    if (ensure_capacity(m, n) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    const unsigned char *data = view.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        m->tok[i] = data[i];
    PyBuffer_Release(&view);
    return result_tuple(m, merge(m, n));
}

/* The UTF-8 bytes of ``piece`` (surrogateescape) into m->tok as byte ids; -1 with an exception on failure. */
static Py_ssize_t
load_utf8(Merger *m, PyObject *piece)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(piece);
    if (length > (INT32_MAX - 1) / 4) {
        PyErr_SetString(PyExc_OverflowError, "word too long for the C merge loop");
        return -1;
    }
    if (ensure_capacity(m, 4 * length) < 0)
        return -1;
    int kind = PyUnicode_KIND(piece);
    const void *data = PyUnicode_DATA(piece);
    int32_t *tok = m->tok;
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < length; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (ch < 0x80) {
            tok[n++] = (int32_t)ch;
        } else if (ch < 0x800) {
            tok[n++] = (int32_t)(0xC0 | (ch >> 6));
            tok[n++] = (int32_t)(0x80 | (ch & 0x3F));
        } else if (ch < 0x10000) {
            if (ch >= 0xD800 && ch <= 0xDFFF) {
                if (ch >= 0xDC80 && ch <= 0xDCFF) {
                    tok[n++] = (int32_t)(ch - 0xDC00);
                    continue;
                }
                /* Not an escaped byte: let the codec raise its own error. */
                PyObject *encoded = PyUnicode_AsEncodedString(piece, "utf-8", "surrogateescape");
                if (encoded != NULL) {
                    Py_DECREF(encoded);
                    PyErr_SetString(PyExc_UnicodeError, "unexpected surrogate");
                }
                return -1;
            }
            tok[n++] = (int32_t)(0xE0 | (ch >> 12));
            tok[n++] = (int32_t)(0x80 | ((ch >> 6) & 0x3F));
            tok[n++] = (int32_t)(0x80 | (ch & 0x3F));
        } else {
            tok[n++] = (int32_t)(0xF0 | (ch >> 18));
            tok[n++] = (int32_t)(0x80 | ((ch >> 12) & 0x3F));
            tok[n++] = (int32_t)(0x80 | ((ch >> 6) & 0x3F));
            tok[n++] = (int32_t)(0x80 | (ch & 0x3F));
        }
    }
    return n;
}

/* Drop the older half of ``cache`` (at least one entry), in insertion order. */
static int
evict_half(PyObject *cache)
{
    Py_ssize_t size = PyDict_GET_SIZE(cache);
    Py_ssize_t drop = size / 2 > 0 ? size / 2 : 1;
    PyObject *keys = PyList_New(0);
    if (keys == NULL)
        return -1;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyList_GET_SIZE(keys) < drop && PyDict_Next(cache, &pos, &key, &value)) {
        if (PyList_Append(keys, key) < 0) {
            Py_DECREF(keys);
            return -1;
        }
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); i++) {
        if (PyDict_DelItem(cache, PyList_GET_ITEM(keys, i)) < 0) {
            Py_DECREF(keys);
            return -1;
        }
    }
    Py_DECREF(keys);
    return 0;
}

typedef struct {
    PyObject **items; /* owned references */
    Py_ssize_t len, cap;
} IdBuffer;

static int
buffer_extend(IdBuffer *buffer, PyObject *tuple)
{
    Py_ssize_t add = PyTuple_GET_SIZE(tuple);
    if (buffer->len + add > buffer->cap) {
        Py_ssize_t cap = buffer->cap ? buffer->cap : 1024;
        while (cap < buffer->len + add)
            cap *= 2;
        PyObject **items = PyMem_Realloc(buffer->items, (size_t)cap * sizeof(PyObject *));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        buffer->items = items;
        buffer->cap = cap;
    }
    for (Py_ssize_t i = 0; i < add; i++) {
        PyObject *id = PyTuple_GET_ITEM(tuple, i);
        Py_INCREF(id);
        buffer->items[buffer->len++] = id;
    }
    return 0;
}

static void
buffer_clear(IdBuffer *buffer)
{
    for (Py_ssize_t i = 0; i < buffer->len; i++)
        Py_DECREF(buffer->items[i]);
    PyMem_Free(buffer->items);
    buffer->items = NULL;
    buffer->len = buffer->cap = 0;
}

/* ---- pre-tokenization: tiktoken's patterns written out by hand (Scan, scan_init, piece_end, split_pattern) ---- */

#include "_fastenc_scan.h"

/* ---- word counting for training (WordCounter), over the scanners and the word cache's piece_hash ---- */

#include "_fastenc_count.h"

/* Append the ids of one piece (str) to ``buffer``, through ``cache``; -1 with an exception on failure. */
static int
add_piece(Merger *m, PyObject *piece, PyObject *cache, Py_ssize_t limit, IdBuffer *buffer)
{
    PyObject *ids = PyDict_GetItemWithError(cache, piece);
    if (ids != NULL) {
        Py_INCREF(ids);
    } else if (PyErr_Occurred()) {
        return -1;
    } else {
        Py_ssize_t n = load_utf8(m, piece);
        if (n < 0)
            return -1;
        ids = result_tuple(m, merge(m, n));
        if (ids == NULL)
            return -1;
        if (limit > 0) {
            if ((PyDict_GET_SIZE(cache) >= limit && evict_half(cache) < 0) || PyDict_SetItem(cache, piece, ids) < 0) {
                Py_DECREF(ids);
                return -1;
            }
        }
    }
    if (!PyTuple_Check(ids)) {
        Py_DECREF(ids);
        PyErr_SetString(PyExc_TypeError, "cache values must be tuples");
        return -1;
    }
    int failed = buffer_extend(buffer, ids);
    Py_DECREF(ids);
    return failed;
}

/* The buffer's ids as a list (the buffer is emptied either way). */
static PyObject *
buffer_to_list(IdBuffer *buffer)
{
    PyObject *result = PyList_New(buffer->len);
    if (result == NULL) {
        buffer_clear(buffer);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < buffer->len; i++)
        PyList_SET_ITEM(result, i, buffer->items[i]);
    PyMem_Free(buffer->items);
    buffer->items = NULL;
    buffer->len = buffer->cap = 0;
    return result;
}

static PyObject *
Merger_encode_pieces(Merger *m, PyObject *args)
{
    PyObject *pieces, *cache;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "O!O!n:encode_pieces", &PyList_Type, &pieces, &PyDict_Type, &cache, &limit))
        return NULL;
    IdBuffer buffer = {NULL, 0, 0};
    for (Py_ssize_t p = 0; p < PyList_GET_SIZE(pieces); p++) {
        PyObject *piece = PyList_GET_ITEM(pieces, p);
        if (!PyUnicode_Check(piece)) {
            PyErr_Format(PyExc_TypeError, "pieces must be str, not %.100s", Py_TYPE(piece)->tp_name);
            goto fail;
        }
        Py_INCREF(piece);
        int failed = add_piece(m, piece, cache, limit, &buffer);
        Py_DECREF(piece);
        if (failed)
            goto fail;
    }
    return buffer_to_list(&buffer);
fail:
    buffer_clear(&buffer);
    return NULL;
}

static PyObject *
Merger_encode_text(Merger *m, PyObject *args)
{
    PyObject *text, *table;
    int which;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "USin:encode_text", &text, &table, &which, &limit))
        return NULL;
    Scan sc;
    if (scan_init(&sc, text, table, which) < 0)
        return NULL;
    Py_INCREF(text);
    IdBuffer buffer = {NULL, 0, 0};
    for (Py_ssize_t i = 0; i < sc.n;) {
        Py_ssize_t j = piece_end(&sc, which, i);
        uint64_t hash = piece_hash(sc.kind, sc.data, i, j);
        PyObject *ids = cache_find(m, hash, sc.kind, sc.data, i, j);
        if (ids != NULL) {
            Py_INCREF(ids);
        } else {
            PyObject *piece = PyUnicode_Substring(text, i, j);
            if (piece == NULL)
                goto fail;
            Py_ssize_t n = load_utf8(m, piece);
            ids = n < 0 ? NULL : result_tuple(m, merge(m, n));
            if (ids != NULL && limit > 0 && cache_store(m, limit, hash, piece, ids) < 0)
                Py_CLEAR(ids);
            Py_DECREF(piece);
            if (ids == NULL)
                goto fail;
        }
        int failed = buffer_extend(&buffer, ids);
        Py_DECREF(ids);
        if (failed)
            goto fail;
        i = j;
    }
    Py_DECREF(text);
    return buffer_to_list(&buffer);
fail:
    Py_DECREF(text);
    buffer_clear(&buffer);
    return NULL;
}

static PyMethodDef Merger_methods[] = {
    {"encode", (PyCFunction)Merger_encode, METH_O, "enc_R of one word (bytes-like) as a tuple of ids."},
    {"from_pairs", (PyCFunction)Merger_from_pairs, METH_VARARGS | METH_CLASS,
     "from_pairs(byte_units, pairs_a, pairs_b, ranks, results, outputs, whole): any pair table."},
    {"from_ranks", (PyCFunction)Merger_from_ranks, METH_VARARGS | METH_CLASS,
     "from_ranks(tokens, outputs): tiktoken's semantics for tokens of two or more bytes in rank order."},
    {"encode_pieces", (PyCFunction)Merger_encode_pieces, METH_VARARGS,
     "encode_pieces(pieces, cache, limit): the ids of every piece (str), through the word cache."},
    {"encode_text", (PyCFunction)Merger_encode_text, METH_VARARGS,
     "encode_text(text, table, which, limit): the ids of split_pattern(text, table, which), through the own cache."},
    {"clear_cache", (PyCFunction)Merger_clear_cache, METH_NOARGS, "Forget every word of encode_text's cache."},
    {"cached_words", (PyCFunction)Merger_cached_words, METH_NOARGS, "The number of words in encode_text's cache."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MergerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bpeproof.impl._c._fastenc.Merger",
    .tp_basicsize = sizeof(Merger),
    .tp_dealloc = (destructor)Merger_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A rule list compiled for the C merge loop (dense ids; see the module documentation).",
    .tp_methods = Merger_methods,
    .tp_new = Merger_new,
};

static PyMethodDef module_methods[] = {
    {"split_pattern", split_pattern, METH_VARARGS,
     "split_pattern(text, table, which): regex.findall with tiktoken's pattern ``which``, written out by hand."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_fastenc",
    .m_doc = "The BPE merge loop of bpeproof.impl.encoder and the word loop of bpeproof.impl.tokenizer in C.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__fastenc(void)
{
    if (PyType_Ready(&MergerType) < 0 || PyType_Ready(&WordCounterType) < 0)
        return NULL;
    PyObject *mod = PyModule_Create(&module);
    if (mod == NULL)
        return NULL;
    Py_INCREF(&MergerType);
    if (PyModule_AddObject(mod, "Merger", (PyObject *)&MergerType) < 0) {
        Py_DECREF(&MergerType);
        Py_DECREF(mod);
        return NULL;
    }
    Py_INCREF(&WordCounterType);
    if (PyModule_AddObject(mod, "WordCounter", (PyObject *)&WordCounterType) < 0) {
        Py_DECREF(&WordCounterType);
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
