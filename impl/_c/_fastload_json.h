/*
 * _fastload_json.h: a tokenizer.json's two large members read straight from its bytes (tokenizer_json_model):
 * the model's "vocab", an object of token strings to ids, and its "merges", an array of strings, found by a scan
 * of the document's structure and read into a dict and a list, with the places where they are; the rest of the
 * document is small, and the JSON reader reads it (bpeproof.impl.formats.hf_json).  And a document that is such a
 * vocabulary alone (json_ids: GPT-2's encoder.json).
 *
 * Only the usual form is read here, and anything else gives None (the JSON reader then reads the whole file,
 * naming any problem): ids that are plain non-negative integers below 2**31, strings whose escapes are the short
 * ones or \uXXXX outside the surrogates, "model", "vocab" and "merges" each once, a vocabulary without a
 * repeated string.
 *
 * Included by _fastload.c (one translation unit, as _fastenc's parts are).
 */

#ifndef BPEPROOF_FASTLOAD_JSON_H
#define BPEPROOF_FASTLOAD_JSON_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#include <stdint.h>
#include <string.h>

typedef struct {
    const unsigned char *data;
    Py_ssize_t size;
    Py_ssize_t pos;
} Json;

static inline void
json_space(Json *json)
{
    while (json->pos < json->size) {
        unsigned char c = json->data[json->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return;
        json->pos++;
    }
}

static int
hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The end of the string starting at json->pos (a quote), past its closing quote; -1 for a string that is not of
 * the usual form.  ``escapes`` is set when it holds one. */
static Py_ssize_t
string_end(const Json *json, int *escapes)
{
    Py_ssize_t i = json->pos + 1;
    *escapes = 0;
    while (i < json->size) {
        unsigned char c = json->data[i];
        if (c == '"')
            return i + 1;
        if (c < 0x20)
            return -1; /* a control character: not JSON */
        if (c == '\\') {
            *escapes = 1;
            if (i + 1 >= json->size)
                return -1;
            i += json->data[i + 1] == 'u' ? 6 : 2;
            continue;
        }
        i++;
    }
    return -1;
}

/* The string at json->pos as a str (json->pos moved past it), NULL (without an exception) for one this reader
 * leaves to the JSON reader. */
static PyObject *
json_string(Json *json)
{
    int escapes;
    Py_ssize_t end = string_end(json, &escapes);
    if (end < 0)
        return NULL;
    const unsigned char *start = json->data + json->pos + 1;
    Py_ssize_t length = end - 1 - (json->pos + 1);
    json->pos = end;
    PyObject *text;
    if (!escapes) {
        text = PyUnicode_DecodeUTF8((const char *)start, length, "strict");
        if (text == NULL)
            PyErr_Clear();
        return text;
    }
    /* Escapes: the text unescaped into UTF-8, then decoded. */
    char *buffer = PyMem_Malloc((size_t)length + 1);
    if (buffer == NULL)
        return NULL;
    Py_ssize_t out = 0;
    for (Py_ssize_t i = 0; i < length; i++) {
        unsigned char c = start[i];
        if (c != '\\') {
            buffer[out++] = (char)c;
            continue;
        }
        unsigned char e = start[++i];
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e != 0 && simple != NULL) {
            buffer[out++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            continue;
        }
        if (e != 'u' || i + 4 >= length + 1) {
            PyMem_Free(buffer);
            return NULL;
        }
        int code = 0;
        for (int k = 1; k <= 4; k++) {
            int digit = hex_digit(start[i + k]);
            if (digit < 0) {
                PyMem_Free(buffer);
                return NULL;
            }
            code = code * 16 + digit;
        }
        i += 4;
        if (code >= 0xD800 && code <= 0xDFFF) {
            PyMem_Free(buffer);
            return NULL; /* a surrogate: the JSON reader's */
        }
        /* UTF-8 of the code point (at most 3 bytes: it is in the BMP, and no longer than its escape). */
        if (code < 0x80)
            buffer[out++] = (char)code;
        else if (code < 0x800) {
            buffer[out++] = (char)(0xC0 | code >> 6);
            buffer[out++] = (char)(0x80 | (code & 0x3F));
        }
        else {
            buffer[out++] = (char)(0xE0 | code >> 12);
            buffer[out++] = (char)(0x80 | (code >> 6 & 0x3F));
            buffer[out++] = (char)(0x80 | (code & 0x3F));
        }
    }
    text = PyUnicode_DecodeUTF8(buffer, out, "strict");
    PyMem_Free(buffer);
    if (text == NULL)
        PyErr_Clear();
    return text;
}

/* Past the value at json->pos (any JSON value, not checked beyond its structure); -1 when it is not one. */
static int
json_skip(Json *json)
{
    int depth = 0;
    for (;;) {
        json_space(json);
        if (json->pos >= json->size)
            return -1;
        unsigned char c = json->data[json->pos];
        if (c == '"') {
            int escapes;
            Py_ssize_t end = string_end(json, &escapes);
            if (end < 0)
                return -1;
            json->pos = end;
        }
        else if (c == '{' || c == '[') {
            depth++;
            json->pos++;
            continue;
        }
        else if (c == '}' || c == ']') {
            if (depth == 0)
                return -1;
            depth--;
            json->pos++;
        }
        else {
            while (json->pos < json->size && strchr(",:}] \t\n\r", json->data[json->pos]) == NULL)
                json->pos++;
        }
        if (depth == 0)
            return 0;
        json_space(json);
        if (json->pos < json->size && (json->data[json->pos] == ',' || json->data[json->pos] == ':'))
            json->pos++;
    }
}

/* Which of ``names`` (plain ASCII) the key at json->pos is: its index, or ``count`` for none of them;
 * json->pos moves past the key and its colon.  -1 when the object does not go on with a key. */
static int
json_key(Json *json, const char *const *names, int count)
{
    json_space(json);
    if (json->pos >= json->size || json->data[json->pos] != '"')
        return -1;
    int escapes;
    Py_ssize_t end = string_end(json, &escapes);
    if (end < 0)
        return -1;
    size_t length = (size_t)(end - json->pos - 2);
    int found = count;
    for (int k = 0; k < count && !escapes; k++)
        if (length == strlen(names[k]) && memcmp(json->data + json->pos + 1, names[k], length) == 0)
            found = k;
    json->pos = end;
    json_space(json);
    if (json->pos >= json->size || json->data[json->pos] != ':')
        return -1;
    json->pos++;
    json_space(json);
    return json->pos < json->size ? found : -1;
}

/* After a member's value: past the comma before the next key (0), or the closing brace (1); -1 otherwise. */
static int
json_next(Json *json)
{
    json_space(json);
    if (json->pos >= json->size)
        return -1;
    unsigned char c = json->data[json->pos++];
    return c == ',' ? 0 : c == '}' ? 1 : -1;
}

/* The vocabulary object at json->pos: strings to ids, as a dict; NULL (no exception) for any other. */
static PyObject *
json_vocabulary(Json *json)
{
    if (json->data[json->pos] != '{')
        return NULL;
    json->pos++;
    PyObject *vocabulary = PyDict_New();
    if (vocabulary == NULL)
        return NULL;
    Py_ssize_t entries = 0;
    json_space(json);
    if (json->pos < json->size && json->data[json->pos] == '}') {
        json->pos++;
        return vocabulary;
    }
    for (;;) {
        json_space(json);
        if (json->pos >= json->size || json->data[json->pos] != '"')
            goto none;
        PyObject *key = json_string(json);
        if (key == NULL)
            goto none;
        json_space(json);
        if (json->pos >= json->size || json->data[json->pos] != ':') {
            Py_DECREF(key);
            goto none;
        }
        json->pos++;
        json_space(json);
        long value = 0;
        Py_ssize_t digits = 0;
        while (json->pos < json->size && json->data[json->pos] >= '0' && json->data[json->pos] <= '9' && digits < 10) {
            value = value * 10 + (json->data[json->pos++] - '0');
            digits++;
        }
        unsigned char after = json->pos < json->size ? json->data[json->pos] : 0;
        if (digits == 0 || value >= INT32_MAX || (digits > 1 && json->data[json->pos - digits] == '0') ||
            (after >= '0' && after <= '9') || after == '.' || after == 'e' || after == 'E') {
            Py_DECREF(key);
            goto none;
        }
        PyObject *id = PyLong_FromLong(value);
        int failed = id == NULL || PyDict_SetItem(vocabulary, key, id) < 0;
        Py_DECREF(key);
        Py_XDECREF(id);
        if (failed) {
            Py_DECREF(vocabulary);
            return NULL;
        }
        if (PyDict_GET_SIZE(vocabulary) != ++entries)
            goto none; /* a string given twice: the JSON reader names it */
        int next = json_next(json);
        if (next < 0)
            goto none;
        if (next == 1)
            return vocabulary;
    }
none:
    Py_DECREF(vocabulary);
    return NULL;
}

/* The merges array at json->pos: strings, as a list; NULL (no exception) for any other. */
static PyObject *
json_merges(Json *json)
{
    if (json->data[json->pos] != '[')
        return NULL;
    json->pos++;
    PyObject *merges = PyList_New(0);
    if (merges == NULL)
        return NULL;
    json_space(json);
    if (json->pos < json->size && json->data[json->pos] == ']') {
        json->pos++;
        return merges;
    }
    for (;;) {
        json_space(json);
        if (json->pos >= json->size || json->data[json->pos] != '"')
            goto none;
        PyObject *merge = json_string(json);
        if (merge == NULL)
            goto none;
        int failed = PyList_Append(merges, merge) < 0;
        Py_DECREF(merge);
        if (failed) {
            Py_DECREF(merges);
            return NULL;
        }
        json_space(json);
        if (json->pos >= json->size)
            goto none;
        unsigned char c = json->data[json->pos++];
        if (c == ']')
            return merges;
        if (c != ',')
            goto none;
    }
none:
    Py_DECREF(merges);
    return NULL;
}

static PyObject *
tokenizer_json_model(PyObject *Py_UNUSED(module), PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Json json = {view.buf, view.len, 0};
    PyObject *vocabulary = NULL, *merges = NULL, *result = NULL;
    Py_ssize_t places[4] = {-1, -1, -1, -1};
    int model_seen = 0;
    json_space(&json);
    if (json.pos >= json.size || json.data[json.pos] != '{')
        goto none;
    json.pos++;
    static const char *const top[] = {"model"}, *const members[] = {"vocab", "merges"};
    for (;;) { /* the top-level members: "model" once, every other one skipped */
        int key = json_key(&json, top, 1);
        if (key < 0)
            goto none;
        if (key == 1) {
            if (json_skip(&json) < 0)
                goto none;
        }
        else {
            if (model_seen++ || json.data[json.pos] != '{')
                goto none;
            json.pos++;
            for (;;) { /* the model's members: "vocab" and "merges" read, every other one skipped */
                int member = json_key(&json, members, 2);
                if (member < 0)
                    goto none;
                if (member == 0) {
                    if (vocabulary != NULL)
                        goto none;
                    places[0] = json.pos;
                    vocabulary = json_vocabulary(&json);
                    if (vocabulary == NULL)
                        goto fail_or_none;
                    places[1] = json.pos;
                }
                else if (member == 1) {
                    if (merges != NULL)
                        goto none;
                    places[2] = json.pos;
                    merges = json_merges(&json);
                    if (merges == NULL)
                        goto fail_or_none;
                    places[3] = json.pos;
                }
                else if (json_skip(&json) < 0)
                    goto none;
                int next = json_next(&json);
                if (next < 0)
                    goto none;
                if (next == 1)
                    break;
            }
        }
        int next = json_next(&json);
        if (next < 0)
            goto none;
        if (next == 1)
            break;
    }
    if (vocabulary == NULL || merges == NULL)
        goto none;
    PyBuffer_Release(&view);
    result = Py_BuildValue("(NN(nnnn))", vocabulary, merges, places[0], places[1], places[2], places[3]);
    return result;
fail_or_none:
    if (PyErr_Occurred()) {
        Py_XDECREF(vocabulary);
        Py_XDECREF(merges);
        PyBuffer_Release(&view);
        return NULL;
    }
none:
    Py_XDECREF(vocabulary);
    Py_XDECREF(merges);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

/* A document that is one object of strings to ids (GPT-2's encoder.json), as a dict; None for any other. */
static PyObject *
json_ids(PyObject *Py_UNUSED(module), PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Json json = {view.buf, view.len, 0};
    json_space(&json);
    PyObject *ids = json.pos < json.size ? json_vocabulary(&json) : NULL;
    if (ids != NULL) {
        json_space(&json);
        if (json.pos != json.size)
            Py_CLEAR(ids); /* something after the object */
    }
    PyBuffer_Release(&view);
    if (ids == NULL && !PyErr_Occurred())
        Py_RETURN_NONE;
    return ids;
}

#endif /* BPEPROOF_FASTLOAD_JSON_H */
