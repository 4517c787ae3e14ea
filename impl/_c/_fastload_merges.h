/*
 * _fastload_merges.h: the merge lists: GPT-2's byte spelling undone (spelt_bytes), the merges of GGUF and
 * tokenizer.json files looked up among their tokens (merge_ids), and a merge list of id triples as columns
 * (merge_columns).
 *
 * Included by _fastload.c (one translation unit, as _fastenc's parts are).
 */

#ifndef BPEPROOF_FASTLOAD_MERGES_H
#define BPEPROOF_FASTLOAD_MERGES_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <stdint.h>
#include <string.h>

/* Asking for memory before it is read: a hint only, nothing where the compiler has no such builtin. */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch(address)
#else
#define PREFETCH(address) ((void)(address))
#endif

/* ---- byte-level spellings ---------------------------------------------------------------------------------- */

static PyObject *
spelt_bytes(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *texts, *alphabet;
    if (!PyArg_ParseTuple(args, "O!U:spelt_bytes", &PyList_Type, &texts, &alphabet))
        return NULL;
    if (PyUnicode_GET_LENGTH(alphabet) != 256) {
        PyErr_SetString(PyExc_ValueError, "spelt_bytes: the alphabet spells the 256 bytes");
        return NULL;
    }
    /* byte_of[code point] = byte + 1, 0 for a character outside the alphabet. */
    Py_UCS4 top = 0;
    for (Py_ssize_t i = 0; i < 256; i++) {
        Py_UCS4 c = PyUnicode_READ_CHAR(alphabet, i);
        top = c > top ? c : top;
    }
    uint16_t *byte_of = PyMem_Calloc((size_t)top + 1, sizeof(uint16_t));
    if (byte_of == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < 256; i++)
        byte_of[PyUnicode_READ_CHAR(alphabet, i)] = (uint16_t)(i + 1);
    Py_ssize_t count = PyList_GET_SIZE(texts);
    PyObject *found = PyList_New(count);
    if (found == NULL)
        goto fail;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *text = PyList_GET_ITEM(texts, k);
        if (!PyUnicode_Check(text)) {
            PyErr_SetString(PyExc_TypeError, "spelt_bytes takes a list of str");
            goto fail;
        }
        int kind = PyUnicode_KIND(text);
        const void *data = PyUnicode_DATA(text);
        Py_ssize_t n = PyUnicode_GET_LENGTH(text);
        PyObject *item = PyBytes_FromStringAndSize(NULL, n);
        if (item == NULL)
            goto fail;
        char *out = PyBytes_AS_STRING(item);
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            uint16_t byte = c <= top ? byte_of[c] : 0;
            if (byte == 0) {
                Py_SETREF(item, Py_NewRef(Py_None));
                break;
            }
            out[i] = (char)(byte - 1);
        }
        PyList_SET_ITEM(found, k, item);
    }
    PyMem_Free(byte_of);
    return found;
fail:
    PyMem_Free(byte_of);
    Py_XDECREF(found);
    return NULL;
}


/* ---- merges of GGUF files and tokenizer.json files ------------------------------------------------------- */

/* A piece of a string: its code points (``kind`` bytes each, as CPython stores them) without a copy. */
typedef struct {
    int kind;
    const void *data;
    Py_ssize_t length;
} Span;

static inline Span
span_of(PyObject *text, Py_ssize_t start, Py_ssize_t end)
{
    int kind = PyUnicode_KIND(text);
    return (Span){kind, (const char *)PyUnicode_DATA(text) + start * kind, end - start};
}

/* A streaming hash of code points (FNV-1a over each, then mixed with the length), the same whatever width the
 * string stores them in, so that a join hashes without being made. */
static inline uint64_t
hash_span(uint64_t state, Span span)
{
    for (Py_ssize_t i = 0; i < span.length; i++)
        state = (state ^ PyUnicode_READ(span.kind, span.data, i)) * UINT64_C(1099511628211);
    return state;
}

static inline uint64_t
hash_end(uint64_t state, Py_ssize_t length)
{
    uint64_t h = state ^ (uint64_t)length;
    h ^= h >> 29;
    h *= UINT64_C(0xbf58476d1ce4e5b9);
    return h ^ (h >> 32);
}

#define HASH_START UINT64_C(1469598103934665603)

/* Whether ``a`` holds at ``offset`` the code points of ``b``. */
static inline int
span_at(Span a, Py_ssize_t offset, Span b)
{
    if (a.kind == b.kind)
        return memcmp((const char *)a.data + offset * a.kind, b.data, (size_t)(b.length * b.kind)) == 0;
    for (Py_ssize_t i = 0; i < b.length; i++)
        if (PyUnicode_READ(a.kind, a.data, offset + i) != PyUnicode_READ(b.kind, b.data, i))
            return 0;
    return 1;
}

/* The texts by id, and an open-addressing index over them: each slot a text's id (-1: free) and the high half of
 * its hash, so that a probe reads 8 bytes and a text only when the halves agree. */
typedef struct {
    uint32_t tag;
    int32_t id;
    PyObject *text; /* (beside the id: one line of memory read per probe) */
} TextSlot;

typedef struct {
    TextSlot *slots;
    uint64_t mask;
    PyObject **texts; /* by id; NULL for a text left out */
} TextIndex;

/* Whether ``text`` is ``a`` then ``b``. */
static inline int
text_equals(PyObject *text, Span a, Span b)
{
    if (text == NULL || PyUnicode_GET_LENGTH(text) != a.length + b.length)
        return 0;
    Span whole = span_of(text, 0, a.length + b.length);
    return span_at(whole, 0, a) && span_at(whole, a.length, b);
}

static inline int
text_is(const TextIndex *index, int32_t id, Span a, Span b)
{
    return text_equals(index->texts[id], a, b);
}

static inline uint64_t
join_hash(Span a, Span b)
{
    return hash_end(hash_span(hash_span(HASH_START, a), b), a.length + b.length);
}

/* The id of the text made of ``a`` then ``b`` (whose ``join_hash`` is ``h``), -1 when no text of the index is
 * that. */
static int32_t
text_find_hashed(const TextIndex *index, Span a, Span b, uint64_t h)
{
    uint32_t tag = (uint32_t)(h >> 32);
    for (uint64_t i = h & index->mask;; i = (i + 1) & index->mask) {
        const TextSlot *slot = &index->slots[i];
        if (slot->id < 0)
            return -1;
        if (slot->tag == tag && text_equals(slot->text, a, b))
            return slot->id;
    }
}

static int32_t
text_find(const TextIndex *index, Span a, Span b)
{
    return text_find_hashed(index, a, b, join_hash(a, b));
}

/* Ask for the memory a look-up of hash ``h`` reads: its slot now, and (``deep``) the text the slot names. */
static inline void
prefetch_slot(const TextIndex *index, uint64_t h, int deep)
{
    const TextSlot *slot = &index->slots[h & index->mask];
    if (!deep)
        PREFETCH(slot);
    else if (slot->id >= 0 && slot->tag == (uint32_t)(h >> 32))
        PREFETCH(slot->text);
}

/* Whether two of keys[0:n] are equal, found by sorting them (a radix sort over their 16-bit digits, in the
 * room of n more keys after them, counting in ``counts``: 65537 of them): in order, where a table of them would
 * be read at random. */
static int
sorted_has_repeat(uint64_t *keys, Py_ssize_t n, Py_ssize_t *counts)
{
    uint64_t *from = keys, *to = keys + n;
    for (int shift = 0; shift < 64; shift += 16) {
        memset(counts, 0, 65537 * sizeof(Py_ssize_t));
        for (Py_ssize_t i = 0; i < n; i++)
            counts[((from[i] >> shift) & 0xFFFF) + 1]++;
        for (int d = 0; d < 65536; d++)
            counts[d + 1] += counts[d];
        for (Py_ssize_t i = 0; i < n; i++)
            to[counts[(from[i] >> shift) & 0xFFFF]++] = from[i];
        uint64_t *swap = from;
        from = to;
        to = swap;
    }
    for (Py_ssize_t i = 1; i < n; i++)
        if (from[i] == from[i - 1])
            return 1;
    return 0;
}

/* Where the one space of a merge line of the library's usual form is: a side on each side of it, no line break,
 * no "#version" (a line of the legacy form, which the library skips); -1 for any other line.  One pass over the
 * code points. */
static Py_ssize_t
usual_merge_cut(PyObject *text, Py_ssize_t n)
{
    static const char mark[] = "#version";
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t cut = -1;
    for (Py_ssize_t at = 0; at < n; at++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, at);
        if (c == ' ') {
            if (cut >= 0)
                return -1;
            cut = at;
        }
        else if (c == '\n')
            return -1;
        else if (c == '#' && at + 8 <= n) {
            int same = 1;
            for (int i = 1; i < 8 && same; i++)
                same = PyUnicode_READ(kind, data, at + i) == (Py_UCS4)mark[i];
            if (same)
                return -1;
        }
    }
    return cut > 0 && cut < n - 1 ? cut : -1;
}

/* The tuple (a, b, c) of new ints, made directly (Py_BuildValue parses its format for every merge). */
static PyObject *
int_triple(int32_t a, int32_t b, int32_t c)
{
    PyObject *tuple = PyTuple_New(3);
    if (tuple == NULL)
        return NULL;
    int32_t values[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        PyObject *value = PyLong_FromLong(values[i]);
        if (value == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, i, value);
    }
    return tuple;
}

static PyObject *
merge_ids(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *texts, *merges, *ids = Py_None;
    Py_buffer excluded;
    int hugging_face = 0;
    if (!PyArg_ParseTuple(args, "O!y*O!|pO:merge_ids", &PyList_Type, &texts, &excluded, &PyList_Type, &merges,
                          &hugging_face, &ids))
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(texts), lines = PyList_GET_SIZE(merges);
    TextIndex index = {NULL, 0, NULL};
    uint64_t *pairs = NULL;
    PyObject *columns[3] = {NULL, NULL, NULL}, *triples = NULL, *result = NULL;
    if (excluded.len != count || count >= INT32_MAX ||
        (ids != Py_None && ids != Py_True && (!PyList_Check(ids) || PyList_GET_SIZE(ids) != count))) {
        PyErr_SetString(PyExc_ValueError, "merge_ids: one excluded flag per text, and one id if ids are given");
        goto done;
    }
    uint64_t size = 16;
    while (size < (uint64_t)count * 2 + 2)
        size *= 2;
    index.mask = size - 1;
    index.slots = PyMem_Malloc(size * sizeof(TextSlot));
    index.texts = PyMem_Calloc((size_t)(count > 0 ? count : 1), sizeof(PyObject *));
    if (index.slots == NULL || index.texts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (uint64_t i = 0; i < size; i++)
        index.slots[i].id = -1;
    Span nothing = {1, "", 0};
    for (Py_ssize_t k = 0; k < count; k++) {
        if (((const char *)excluded.buf)[k])
            continue;
        PyObject *text = PyList_GET_ITEM(texts, k);
        if (!PyUnicode_Check(text))
            goto none; /* not text: the Python path's */
        Span whole = span_of(text, 0, PyUnicode_GET_LENGTH(text));
        if (text_find(&index, whole, nothing) >= 0)
            goto none; /* a text given twice: the Python path's */
        uint64_t h = hash_end(hash_span(HASH_START, whole), whole.length);
        uint64_t i = h & index.mask;
        while (index.slots[i].id >= 0)
            i = (i + 1) & index.mask;
        index.slots[i] = (TextSlot){(uint32_t)(h >> 32), (int32_t)k, text};
        index.texts[k] = text;
    }
    if (ids != Py_None) {
        triples = PyList_New(lines);
        if (triples == NULL)
            goto done;
    }
    for (int c = 0; c < 3 && ids == Py_None; c++) {
        columns[c] = PyList_New(lines);
        if (columns[c] == NULL)
            goto done;
    }
    pairs = PyMem_Malloc((size_t)(lines > 0 ? lines : 1) * 2 * sizeof(uint64_t)); /* the keys, and room to sort */
    if (pairs == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    /* Most files give the merge of line i the id i + a constant: that id is tried before the index.  The
     * merges go in windows: each merge of a window cut and its sides hashed, the slots they read asked for,
     * then the texts those slots name, then the look-ups, so that the memory of one is on its way during the
     * others (the tables are far larger than the caches). */
    Py_ssize_t shift = 0;
    enum { WINDOW = 16 };
    Span lefts[WINDOW], rights[WINDOW];
    uint64_t left_hash[WINDOW], right_hash[WINDOW];
    for (Py_ssize_t base = 0; base < lines; base += WINDOW) {
        Py_ssize_t end = base + WINDOW < lines ? base + WINDOW : lines;
        for (Py_ssize_t line = base; line < end; line++) {
            PyObject *merge = PyList_GET_ITEM(merges, line);
            if (!PyUnicode_Check(merge))
                goto none;
            Py_ssize_t n = PyUnicode_GET_LENGTH(merge), cut;
            if (hugging_face) {
                cut = usual_merge_cut(merge, n);
                if (cut < 0)
                    goto none;
            }
            else {
                /* llama.cpp's cut: the first space after the first character. */
                cut = n > 1 ? PyUnicode_FindChar(merge, ' ', 1, n, 1) : -1;
                if (cut < 0)
                    goto none;
            }
            lefts[line - base] = span_of(merge, 0, cut);
            rights[line - base] = span_of(merge, cut + 1, n);
            left_hash[line - base] = join_hash(lefts[line - base], nothing);
            right_hash[line - base] = join_hash(rights[line - base], nothing);
            prefetch_slot(&index, left_hash[line - base], 0);
            prefetch_slot(&index, right_hash[line - base], 0);
        }
        for (Py_ssize_t j = 0; j < end - base; j++) {
            prefetch_slot(&index, left_hash[j], 1);
            prefetch_slot(&index, right_hash[j], 1);
        }
        for (Py_ssize_t line = base; line < end; line++) {
            Span left = lefts[line - base], right = rights[line - base];
            int32_t a = text_find_hashed(&index, left, nothing, left_hash[line - base]);
            int32_t b = text_find_hashed(&index, right, nothing, right_hash[line - base]);
            Py_ssize_t guess = line + shift;
            int32_t c = guess >= 0 && guess < count && text_is(&index, (int32_t)guess, left, right)
                            ? (int32_t)guess : text_find(&index, left, right);
            if (a < 0 || b < 0 || c < 0)
                goto none; /* a side or the join is no token: the Python path sorts these out */
            shift = c - line;
            pairs[line] = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
            if (triples != NULL) {
                /* Fresh ints for the positions themselves (made in order, where the ids' own objects lie anywhere). */
                PyObject *triple = ids == Py_True ? int_triple(a, b, c)
                    : PyTuple_Pack(3, PyList_GET_ITEM(ids, a), PyList_GET_ITEM(ids, b), PyList_GET_ITEM(ids, c));
                if (triple == NULL)
                    goto done;
                PyList_SET_ITEM(triples, line, triple);
                continue;
            }
            int32_t found[3] = {a, b, c};
            for (int col = 0; col < 3; col++) {
                PyObject *id = PyLong_FromLong(found[col]);
                if (id == NULL)
                    goto done;
                PyList_SET_ITEM(columns[col], line, id);
            }
        }
    }
    if (!hugging_face) { /* (the library keeps a pair's last line: its model sorts repeats out itself) */
        Py_ssize_t *counts = PyMem_Malloc(65537 * sizeof(Py_ssize_t));
        if (counts == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        int repeat = sorted_has_repeat(pairs, lines, counts);
        PyMem_Free(counts);
        if (repeat)
            goto none; /* a pair listed twice: the Python path keeps its first line */
    }
    result = triples != NULL ? Py_NewRef(triples) : Py_BuildValue("(OOO)", columns[0], columns[1], columns[2]);
    goto done;
none:
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(index.slots);
    PyMem_Free(index.texts);
    PyMem_Free(pairs);
    for (int c = 0; c < 3; c++)
        Py_XDECREF(columns[c]);
    Py_XDECREF(triples);
    PyBuffer_Release(&excluded);
    return result;
}

/* ---- merge lists as columns ------------------------------------------------------------------------------ */

/* An int object below 2**31 as such, -1 for anything else (without an exception). */
static long
small_id(PyObject *item)
{
    if (!PyLong_CheckExact(item))
        return -1;
    int overflow;
    long value = PyLong_AsLongAndOverflow(item, &overflow);
    if (overflow || value < 0 || value >= INT32_MAX) {
        PyErr_Clear();
        return -1;
    }
    return value;
}

static PyObject *
merge_columns(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *merges, *vocabulary;
    if (!PyArg_ParseTuple(args, "O!O!:merge_columns", &PyList_Type, &merges, &PyList_Type, &vocabulary))
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(merges), ids = PyList_GET_SIZE(vocabulary);
    long stride = 0;
    for (Py_ssize_t i = 0; i < ids; i++) {
        long id = small_id(PyList_GET_ITEM(vocabulary, i));
        if (id < 0)
            Py_RETURN_NONE;
        stride = id + 1 > stride ? id + 1 : stride;
    }
    if (stride > 4 * ids + 1024)
        Py_RETURN_NONE; /* ids far apart: a table of them all would be mostly empty */
    unsigned char *present = PyMem_Calloc((size_t)(stride > 0 ? stride : 1), 1);
    uint64_t *keys = PyMem_Malloc((size_t)(count > 0 ? count : 1) * 2 * sizeof(uint64_t));
    Py_ssize_t *counts = PyMem_Malloc(65537 * sizeof(Py_ssize_t));
    PyObject *columns[3] = {NULL, NULL, NULL}, *result = NULL;
    if (present == NULL || keys == NULL || counts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < ids; i++)
        present[small_id(PyList_GET_ITEM(vocabulary, i))] = 1;
    for (int c = 0; c < 3; c++) {
        columns[c] = PyList_New(count);
        if (columns[c] == NULL)
            goto done;
    }
    for (Py_ssize_t line = 0; line < count; line++) {
        PyObject *merge = PyList_GET_ITEM(merges, line);
        if (!PyTuple_CheckExact(merge) || PyTuple_GET_SIZE(merge) != 3)
            goto none;
        long part[3];
        for (int c = 0; c < 3; c++) {
            PyObject *item = PyTuple_GET_ITEM(merge, c);
            part[c] = small_id(item);
            if (part[c] < 0 || part[c] >= stride || !present[part[c]])
                goto none;
            PyList_SET_ITEM(columns[c], line, Py_NewRef(item));
        }
        keys[line] = (uint64_t)part[0] << 32 | (uint64_t)part[1];
    }
    result = Py_BuildValue("(OOOO)", columns[0], columns[1], columns[2],
                           sorted_has_repeat(keys, count, counts) ? Py_False : Py_True);
    goto done;
none:
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(present);
    PyMem_Free(keys);
    PyMem_Free(counts);
    for (int c = 0; c < 3; c++)
        Py_XDECREF(columns[c]);
    return result;
}

#endif /* BPEPROOF_FASTLOAD_MERGES_H */
