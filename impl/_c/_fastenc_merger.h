/*
 * _fastenc_merger.h: the Merger type: making one (Merger(parts_a, parts_b, outputs), from_pairs, from_ranks,
 * from_tables), its tables for the compiled-vocabulary cache (tables), freeing one, and its method table and type
 * object.
 *
 * Included by _fastenc.c after every header whose methods the table lists (_fastenc_cache.h, _fastenc_encode.h).
 * The rule list compiled here is described in the module documentation of _fastenc.c.
 */

#ifndef BPEPROOF_FASTENC_MERGER_H
#define BPEPROOF_FASTENC_MERGER_H

#include "_fastenc_table.h"
#include "_fastenc_merge.h"
#include "_fastenc_cache.h"
#include "_fastenc_shared.h"
#include "_fastenc_encode.h"
#include "_fastenc_batch.h"

static void
Merger_dealloc(Merger *m)
{
    if (m->outputs != NULL) {
        for (Py_ssize_t i = 0; i < m->n_ids; i++)
            Py_XDECREF(m->outputs[i]);
        PyMem_Free(m->outputs);
    }
    PyMem_Free(m->whole_slots);
    PyMem_Free(m->whole_records);
    PyMem_Free(m->whole_filter.words);
    PyMem_Free(m->slots);
    PyMem_Free(m->pair_filter.words);
    PyMem_Free(m->byte_pairs);
    work_free(&m->work);
    for (Py_ssize_t t = 0; t < m->n_more_work; t++) {
        chunks_free(&m->more_work[t]);
        work_free(&m->more_work[t]);
    }
    PyMem_RawFree(m->shared.slots);
    PyMem_Free(m->more_work);
    if (m->batch_lock != NULL)
        PyThread_free_lock(m->batch_lock);
    PyMem_Free(m->output_values);
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
 * outputs taken from the sequence ``out_seq`` (n_ids ints, or None for a byte without an id, or tuples of ints: ``spelt``). */
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
    if (pairs_alloc(m, pairs) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    m->byte_pairs = PyMem_Malloc(65536 * sizeof(uint64_t));
    m->outputs = PyMem_Calloc((size_t)n_ids, sizeof(PyObject *));
    if (m->byte_pairs == NULL || m->outputs == NULL) {
        PyErr_NoMemory();
        Py_DECREF(m);
        return NULL;
    }
    m->n_ids = n_ids;
    for (int i = 0; i < 65536; i++)
        m->byte_pairs[i] = NO_VALUE;
    for (int i = 0; i < 256; i++)
        m->byte_units[i] = i;
    PyObject **out_items = PySequence_Fast_ITEMS(out_seq);
    for (Py_ssize_t d = 0; d < n_ids; d++) {
        int spelt = PyTuple_Check(out_items[d]);
        for (Py_ssize_t k = 0; spelt && k < PyTuple_GET_SIZE(out_items[d]); k++)
            spelt = PyLong_Check(PyTuple_GET_ITEM(out_items[d], k));
        if (!PyLong_Check(out_items[d]) && !(d < 256 && out_items[d] == Py_None) && !spelt) {
            PyErr_SetString(PyExc_TypeError,
                            "outputs must be ints or tuples of ints (None only for a byte without an id)");
            Py_DECREF(m);
            return NULL;
        }
        m->spelt |= spelt;
        Py_INCREF(out_items[d]);
        m->outputs[d] = out_items[d];
    }
    if (ensure_capacity(&m->work, 256) < 0) {
        PyErr_NoMemory();
        Py_DECREF(m);
        return NULL;
    }
    return m;
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
 * pair of rank k; and every token is a whole piece.  The pairs are found first and the table made for their
 * number: sized for every split instead (most are no pair), it was several times larger, and slower to fill. */
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
    int32_t *found = NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(tokens);
    PyObject **items = PySequence_Fast_ITEMS(tokens);
    Py_ssize_t splits = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        if (!PyBytes_Check(items[k]) || PyBytes_GET_SIZE(items[k]) < 2) {
            PyErr_SetString(PyExc_TypeError, "tokens must be bytes of two or more bytes");
            goto fail;
        }
        splits += PyBytes_GET_SIZE(items[k]) - 1;
    }
    m = merger_alloc(type, 256 + count, 0, out_seq);
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
    found = PyMem_Malloc((size_t)(splits > 0 ? splits : 1) * 3 * sizeof(int32_t));
    if (found == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_ssize_t pairs = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(items[k]);
        Py_ssize_t len = PyBytes_GET_SIZE(items[k]);
        for (Py_ssize_t i = 1; i < len; i++) {
            int32_t left = i == 1 ? (int32_t)data[0] : whole_find(m, data, i);
            if (left < 0)
                continue; /* most prefixes are no token: skip the suffix's look-up */
            int32_t right = i == len - 1 ? (int32_t)data[i] : whole_find(m, data + i, len - i);
            if (right >= 0) {
                found[3 * pairs] = left;
                found[3 * pairs + 1] = right;
                found[3 * pairs + 2] = (int32_t)k;
                pairs++;
            }
        }
    }
    if (pairs_alloc(m, pairs) < 0)
        goto fail;
    for (Py_ssize_t p = 0; p < pairs; p++) {
        int32_t k = found[3 * p + 2];
        insert_pair(m, found[3 * p], found[3 * p + 1], VALUE(k, 256 + k), 0); /* the first split found keeps it */
    }
    PyMem_Free(found);
    Py_DECREF(whole);
    Py_DECREF(tokens);
    Py_DECREF(out_seq);
    return (PyObject *)m;
fail:
    PyMem_Free(found);
    Py_XDECREF(whole);
    Py_DECREF(tokens);
    Py_DECREF(out_seq);
    Py_XDECREF(m);
    return NULL;
}

/* Merger.tables(): (byte_units, keys, values, outputs, whole), what from_tables needs to make the same Merger:
 * the 256 byte units as int32, every pair as its uint64 key and value (native byte order), the outputs list and
 * the whole-piece list (None when there is no table).  The compiled-vocabulary cache (impl/io/vocab_cache.py)
 * stores these instead of the rule list, so that a cached vocabulary skips compiling it. */
static PyObject *
Merger_tables(Merger *m, PyObject *Py_UNUSED(ignored))
{
    Py_ssize_t used = 0;
    for (uint64_t i = 0; i <= m->mask; i++)
        used += m->slots[i].key != EMPTY_KEY;
    PyObject *units = PyBytes_FromStringAndSize((const char *)m->byte_units, sizeof m->byte_units);
    PyObject *keys = PyBytes_FromStringAndSize(NULL, used * (Py_ssize_t)sizeof(uint64_t));
    PyObject *values = PyBytes_FromStringAndSize(NULL, used * (Py_ssize_t)sizeof(uint64_t));
    PyObject *outputs = PyList_New(m->n_ids);
    PyObject *whole = whole_list(m);
    if (units == NULL || keys == NULL || values == NULL || outputs == NULL || whole == NULL)
        goto fail;
    uint64_t *key_out = (uint64_t *)PyBytes_AS_STRING(keys), *value_out = (uint64_t *)PyBytes_AS_STRING(values);
    for (uint64_t i = 0; i <= m->mask; i++) {
        if (m->slots[i].key == EMPTY_KEY)
            continue;
        *key_out++ = m->slots[i].key;
        *value_out++ = m->slots[i].value;
    }
    for (Py_ssize_t d = 0; d < m->n_ids; d++)
        PyList_SET_ITEM(outputs, d, Py_NewRef(m->outputs[d]));
    return Py_BuildValue("(NNNNN)", units, keys, values, outputs, whole);
fail:
    Py_XDECREF(units);
    Py_XDECREF(keys);
    Py_XDECREF(values);
    Py_XDECREF(outputs);
    Py_XDECREF(whole);
    return NULL;
}

/* Merger.from_tables(byte_units, keys, values, outputs, whole): the Merger that tables() described.  Every dense
 * id in the tables is checked against len(outputs), so that tables read from a damaged file raise ValueError
 * instead of sending the merge loops outside their arrays. */
static PyObject *
Merger_from_tables(PyTypeObject *type, PyObject *args)
{
    Py_buffer units, keys, values;
    PyObject *out_obj, *whole_obj;
    if (!PyArg_ParseTuple(args, "y*y*y*OO:from_tables", &units, &keys, &values, &out_obj, &whole_obj))
        return NULL;
    PyObject *out_seq = NULL, *whole_seq = NULL;
    Merger *m = NULL;
    Py_ssize_t pairs = keys.len / (Py_ssize_t)sizeof(uint64_t);
    if (units.len != (Py_ssize_t)(256 * sizeof(int32_t)) || keys.len % (Py_ssize_t)sizeof(uint64_t) != 0 ||
        values.len != keys.len) {
        PyErr_SetString(PyExc_ValueError, "from_tables: 256 int32 byte units and one uint64 key and value per pair");
        goto fail;
    }
    out_seq = PySequence_Fast(out_obj, "outputs must be a sequence");
    if (out_seq == NULL)
        goto fail;
    m = merger_alloc(type, PySequence_Fast_GET_SIZE(out_seq), pairs, out_seq);
    if (m == NULL)
        goto fail;
    uint64_t n_ids = (uint64_t)m->n_ids;
    memcpy(m->byte_units, units.buf, sizeof m->byte_units);
    for (int i = 0; i < 256; i++) {
        if (m->byte_units[i] < 0 || (uint64_t)m->byte_units[i] >= n_ids) {
            PyErr_SetString(PyExc_ValueError, "from_tables: a byte unit is not a dense id");
            goto fail;
        }
    }
    for (Py_ssize_t k = 0; k < pairs; k++) {
        uint64_t key, value;
        memcpy(&key, (const char *)keys.buf + k * (Py_ssize_t)sizeof key, sizeof key);
        memcpy(&value, (const char *)values.buf + k * (Py_ssize_t)sizeof value, sizeof value);
        if ((key >> 32) >= n_ids || (key & 0xFFFFFFFFu) >= n_ids || (uint64_t)(uint32_t)RESULT_OF(value) >= n_ids ||
            RANK_OF(value) < 0) {
            PyErr_SetString(PyExc_ValueError, "from_tables: a pair or its result is not a dense id");
            goto fail;
        }
        insert_pair(m, (int32_t)(key >> 32), (int32_t)(key & 0xFFFFFFFFu), value, 1);
    }
    if (whole_obj != Py_None) {
        whole_seq = PySequence_Fast(whole_obj, "whole must be a sequence or None");
        if (whole_seq == NULL || whole_build(m, whole_seq) < 0)
            goto fail;
    }
    Py_XDECREF(whole_seq);
    Py_DECREF(out_seq);
    PyBuffer_Release(&units);
    PyBuffer_Release(&keys);
    PyBuffer_Release(&values);
    return (PyObject *)m;
fail:
    Py_XDECREF(whole_seq);
    Py_XDECREF(out_seq);
    Py_XDECREF(m);
    PyBuffer_Release(&units);
    PyBuffer_Release(&keys);
    PyBuffer_Release(&values);
    return NULL;
}

static PyMethodDef Merger_methods[] = {
    {"encode", (PyCFunction)Merger_encode, METH_O, "enc_R of one word (bytes-like) as a tuple of ids."},
    {"merge_each", (PyCFunction)Merger_merge_each, METH_VARARGS,
     "merge_each(words, loop): enc_R of each word (bytes) by the loop ``loop`` names, whatever its length (0 the"
     " flat array, 1 the heap), as bytes of native int32 dense ids, each word's followed by -1."},
    {"from_pairs", (PyCFunction)Merger_from_pairs, METH_VARARGS | METH_CLASS,
     "from_pairs(byte_units, pairs_a, pairs_b, ranks, results, outputs, whole): any pair table."},
    {"from_ranks", (PyCFunction)Merger_from_ranks, METH_VARARGS | METH_CLASS,
     "from_ranks(tokens, outputs): tiktoken's semantics for tokens of two or more bytes in rank order."},
    {"tables", (PyCFunction)Merger_tables, METH_NOARGS,
     "tables(): (byte_units, keys, values, outputs, whole), from which from_tables makes the same Merger."},
    {"from_tables", (PyCFunction)Merger_from_tables, METH_VARARGS | METH_CLASS,
     "from_tables(byte_units, keys, values, outputs, whole): the Merger whose tables() these are."},
    {"encode_pieces", (PyCFunction)Merger_encode_pieces, METH_VARARGS,
     "encode_pieces(pieces, cache, limit): the ids of every piece (str), through the word cache."},
    {"encode_text", (PyCFunction)Merger_encode_text, METH_VARARGS,
     "encode_text(text, table, which, limit, strict=False): the ids of split_pattern(text, table, which), through"
     " the own cache; ``strict``: a surrogate fails (UnicodeError), else only one that is no escaped byte."},
    {"encode_texts", (PyCFunction)Merger_encode_texts, METH_VARARGS,
     "encode_texts(texts, table, which, limit, threads, strict, as_uint32): encode_text of each text, on up to"
     " ``threads`` threads with the GIL released (as bytes of little-endian uint32 ids when ``as_uint32``)."},
    {"clear_cache", (PyCFunction)Merger_clear_cache, METH_NOARGS, "Forget every word of encode_text's caches."},
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

#endif /* BPEPROOF_FASTENC_MERGER_H */
