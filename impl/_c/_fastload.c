/*
 * _fastload: the bulk readers of the vocabulary loaders, each one pass over a file's bytes in C where the Python
 * reader takes a Python step per token.  Every function gives exactly what its Python reader gives, or None (or
 * an error) where the Python reader is to take over; the tests compare both on generated input.
 *
 * rank_file(data: bytes) -> dict[bytes, int] | None
 *
 *   A tiktoken rank file whose every line is ``base64 rank`` (or blank), as
 *   bpeproof.impl.formats.tiktoken_file._well_formed_ranks reads it: lines end at LF or CR LF, fields are cut at
 *   ASCII white space, the first is the canonical base64 of a non-empty token, the second at most 30 decimal
 *   digits; no token occurs twice.  None for any other file (the line reader then names its first bad line).
 *
 * length_prefixed(buffer, offset: int, count: int, keep: bool) -> (list[str] | None, end: int, failed: int)
 *
 *   ``count`` strings, each a little-endian uint64 length and that many bytes, from ``offset`` (a GGUF array of
 *   strings, bpeproof.impl.formats.gguf_container): decoded as UTF-8 with surrogateescape when ``keep``.
 *   ``end`` is where they end; when the buffer ends inside them ``end`` is past the buffer and ``failed`` the
 *   number of the string the Python loop stops at (-1 otherwise).
 *
 * spelt_bytes(texts: list[str], alphabet: str) -> list[bytes | None]
 *
 *   The bytes each text spells when every character of it is one of ``alphabet`` (its 256 characters spell the
 *   bytes 0..255: GPT-2's byte-to-character table, bpeproof.impl.formats.vocab), None for a text that holds any
 *   other character.
 *
 * merge_ids(texts: list[str], excluded: bytes, merges: list[str], hugging_face=False, ids=None)
 *     -> (lefts, rights, joins) | list[(left, right, join)] | None
 *
 *   The merges as positions in ``texts``: each merge cut at its first space after its first character, as
 *   llama.cpp cuts a GGUF file's (bpeproof.impl.formats.gguf_vocab.byte_level_tables), or with ``hugging_face``
 *   at its one space as a tokenizer.json's usual line (bpeproof.impl.formats.hf_json), its two sides and their
 *   join looked up among the texts not ``excluded`` (one flag byte per text), by their code points.  None unless
 *   every side and join is such a text and, for llama.cpp, no pair is listed twice (the Python path then reads
 *   the merges one by one).  With ``ids`` (one int per text), the merges are (left, right, join) tuples of those;
 *   with ``ids`` True, tuples of the positions.
 *
 * merge_columns(merges: list[tuple[int, int, int]], vocabulary: list[int]) -> (a, b, c, distinct) | None
 *
 *   A merge list of (a, b, c) id triples as three columns, and whether no pair (a, b) is listed twice, when
 *   every merge is a tuple of three ints that are ids of ``vocabulary`` (bpeproof.impl.models.hugging_face);
 *   None for any other list (the Python path then reads it merge by merge, naming the first problem).
 *
 * sentencepiece_pieces(data: bytes) -> (texts, scores, types, others) | None
 *
 *   The fields of a serialized ``ModelProto`` (bpeproof.impl.formats.sentencepiece_model): the pieces (field 1)
 *   as three lists, when every piece has the usual layout that ``_quick_piece`` reads (text, score, a one-byte
 *   type if any), and every other field as the ``(number, wire type, value)`` that ``_Wire.fields`` gives.  None
 *   for a message the Python reader must read (or refuse).
 *
 * int_array(items: list[int]) -> (array: bytes, width: int, counting: bool) | None
 *
 *   A list of ints as one native array of int32 (width 4) when they all fit, else int64, and whether they are
 *   0, 1, 2, … (bpeproof.impl.io.packed_state); None when an item is not an int (a bool neither) or needs more than
 *   64 bits.
 *
 * joined(items: list[bytes] | list[str]) -> (bytes | str, offsets: bytes, width: int)
 * cut(blob: bytes-like | str, offsets: bytes-like, width: int) -> list
 *
 *   A list of bytes or of strings as one blob and the offsets of its items' starts and of its end (native int32,
 *   width 4, when they fit, else int64), and the items back from them (bpeproof.impl.io.packed_state):
 *   ValueError for offsets that do not fit the blob.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

/* ---- tiktoken rank files ---------------------------------------------------------------------------------- */

/* The value of each base64 character, -1 for any other byte. */
static signed char base64_value[256];

static void
base64_init(void)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    memset(base64_value, -1, sizeof base64_value);
    for (int i = 0; i < 64; i++)
        base64_value[(unsigned char)alphabet[i]] = (signed char)i;
}

/* The token whose canonical base64 (binascii.b2a_base64 without its newline) is field[0:n], or NULL without an
 * exception when the field is not that of a non-empty token. */
static PyObject *
canonical_base64(const unsigned char *field, Py_ssize_t n)
{
    if (n == 0 || n % 4 != 0)
        return NULL;
    Py_ssize_t pad = field[n - 1] == '=' ? (field[n - 2] == '=' ? 2 : 1) : 0;
    for (Py_ssize_t i = 0; i < n - pad; i++)
        if (base64_value[field[i]] < 0)
            return NULL;
    /* The bits a padded group leaves over are zero in the canonical form. */
    if (pad == 2 && (base64_value[field[n - 3]] & 0x0F) != 0)
        return NULL;
    if (pad == 1 && (base64_value[field[n - 2]] & 0x03) != 0)
        return NULL;
    Py_ssize_t size = n / 4 * 3 - pad;
    PyObject *token = PyBytes_FromStringAndSize(NULL, size);
    if (token == NULL)
        return NULL;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(token);
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i += 4) {
        uint32_t a = (uint32_t)base64_value[field[i]], b = (uint32_t)base64_value[field[i + 1]];
        uint32_t c = field[i + 2] == '=' ? 0 : (uint32_t)base64_value[field[i + 2]];
        uint32_t d = field[i + 3] == '=' ? 0 : (uint32_t)base64_value[field[i + 3]];
        uint32_t group = a << 18 | b << 12 | c << 6 | d;
        out[k++] = (unsigned char)(group >> 16);
        if (k < size)
            out[k++] = (unsigned char)(group >> 8);
        if (k < size)
            out[k++] = (unsigned char)group;
    }
    return token;
}

/* A decimal field of at most 30 digits as an int; NULL without an exception for anything else. */
static PyObject *
decimal(const unsigned char *field, Py_ssize_t n)
{
    if (n == 0 || n > 30)
        return NULL;
    unsigned long long value = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (field[i] < '0' || field[i] > '9')
            return NULL;
        value = value * 10 + (unsigned long long)(field[i] - '0');
    }
    if (n <= 18)
        return PyLong_FromUnsignedLongLong(value);
    char text[32];
    memcpy(text, field, (size_t)n);
    text[n] = '\0';
    return PyLong_FromString(text, NULL, 10);
}

static int
is_blank(unsigned char c)
{
    /* bytes.split()'s white space (Py_ISSPACE); no line holds LF, and VT / FF are refused before. */
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\x0b' || c == '\x0c';
}

static PyObject *
rank_file(PyObject *Py_UNUSED(module), PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *data = view.buf;
    Py_ssize_t size = view.len;
    PyObject *ranks = NULL;
    for (Py_ssize_t i = 0; i < size; i++) {
        unsigned char c = data[i];
        if (c == '\x0b' || c == '\x0c' || (c == '\r' && (i + 1 >= size || data[i + 1] != '\n')))
            goto none;
    }
    ranks = PyDict_New();
    if (ranks == NULL)
        goto fail;
    Py_ssize_t pos = 0, lines = 0;
    while (pos < size) {
        const unsigned char *line_end = memchr(data + pos, '\n', (size_t)(size - pos));
        Py_ssize_t end = line_end == NULL ? size : line_end - data;
        const unsigned char *fields[3];
        Py_ssize_t lengths[3];
        int count = 0;
        Py_ssize_t i = pos;
        while (i < end) {
            while (i < end && is_blank(data[i]))
                i++;
            if (i >= end)
                break;
            Py_ssize_t start = i;
            while (i < end && !is_blank(data[i]))
                i++;
            if (count == 2)
                goto none; /* a third field */
            fields[count] = data + start;
            lengths[count++] = i - start;
        }
        pos = end + 1;
        if (count == 0)
            continue;
        if (count != 2)
            goto none;
        PyObject *rank = decimal(fields[1], lengths[1]);
        if (rank == NULL) {
            if (PyErr_Occurred())
                goto fail;
            goto none;
        }
        PyObject *token = canonical_base64(fields[0], lengths[0]);
        if (token == NULL) {
            Py_DECREF(rank);
            if (PyErr_Occurred())
                goto fail;
            goto none;
        }
        /* One look-up per line; a token given twice leaves the table smaller than the lines (found below). */
        PyObject *kept = PyDict_SetDefault(ranks, token, rank);
        Py_DECREF(token);
        Py_DECREF(rank);
        if (kept == NULL)
            goto fail;
        lines++;
    }
    if (lines == 0 || PyDict_GET_SIZE(ranks) != lines)
        goto none;
    PyBuffer_Release(&view);
    return ranks;
none:
    Py_XDECREF(ranks);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(ranks);
    PyBuffer_Release(&view);
    return NULL;
}

/* ---- GGUF arrays of strings ------------------------------------------------------------------------------- */

static uint64_t
read_u64(const unsigned char *p)
{
    uint64_t value = 0;
    for (int i = 7; i >= 0; i--)
        value = value << 8 | p[i];
    return value;
}

static PyObject *
length_prefixed(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer view;
    Py_ssize_t offset, count;
    int keep;
    if (!PyArg_ParseTuple(args, "y*nnp:length_prefixed", &view, &offset, &count, &keep))
        return NULL;
    const unsigned char *data = view.buf;
    Py_ssize_t size = view.len;
    PyObject *strings = NULL;
    if (offset < 0 || count < 0 || offset > size) {
        PyErr_SetString(PyExc_ValueError, "length_prefixed: an offset or count outside the buffer");
        goto fail;
    }
    if (keep) {
        strings = PyList_New(count);
        if (strings == NULL)
            goto fail;
    }
    /* As the Python loop: a length is read at every offset up to the buffer's end; a string reaching past it
     * is noticed when the next length cannot be read, or after the last string. */
    Py_ssize_t failed = -1;
    uint64_t at = (uint64_t)offset;
    for (Py_ssize_t number = 0; number < count; number++) {
        if (at > (uint64_t)size || (uint64_t)size - at < 8) {
            failed = number;
            break;
        }
        uint64_t length = read_u64(data + at);
        uint64_t start = at + 8;
        if (length > (uint64_t)size - start) {
            failed = number + 1 < count ? number + 1 : number;
            break;
        }
        if (keep) {
            PyObject *text = PyUnicode_DecodeUTF8((const char *)data + start, (Py_ssize_t)length, "surrogateescape");
            if (text == NULL)
                goto fail;
            PyList_SET_ITEM(strings, number, text);
        }
        at = start + length;
    }
    PyBuffer_Release(&view);
    if (failed >= 0) {
        Py_XDECREF(strings);
        return Py_BuildValue("(Onn)", Py_None, size + 1, failed);
    }
    if (!keep)
        return Py_BuildValue("(Onn)", Py_None, (Py_ssize_t)at, (Py_ssize_t)-1);
    return Py_BuildValue("(Nnn)", strings, (Py_ssize_t)at, (Py_ssize_t)-1);
fail:
    Py_XDECREF(strings);
    PyBuffer_Release(&view);
    return NULL;
}

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
} TextSlot;

typedef struct {
    TextSlot *slots;
    uint64_t mask;
    PyObject **texts; /* by id; NULL for a text left out */
} TextIndex;

static inline int
text_is(const TextIndex *index, int32_t id, Span a, Span b)
{
    PyObject *text = index->texts[id];
    if (text == NULL || PyUnicode_GET_LENGTH(text) != a.length + b.length)
        return 0;
    Span whole = span_of(text, 0, a.length + b.length);
    return span_at(whole, 0, a) && span_at(whole, a.length, b);
}

/* The id of the text made of ``a`` then ``b``, -1 when no text of the index is that. */
static int32_t
text_find(const TextIndex *index, Span a, Span b)
{
    uint64_t h = hash_end(hash_span(hash_span(HASH_START, a), b), a.length + b.length);
    uint32_t tag = (uint32_t)(h >> 32);
    for (uint64_t i = h & index->mask;; i = (i + 1) & index->mask) {
        const TextSlot *slot = &index->slots[i];
        if (slot->id < 0)
            return -1;
        if (slot->tag == tag && text_is(index, slot->id, a, b))
            return slot->id;
    }
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

/* Whether the text holds "#version" (a line of the legacy form, which the library skips). */
static int
has_version_mark(PyObject *text, Py_ssize_t n)
{
    static const char mark[] = "#version";
    for (Py_ssize_t at = 0; (at = PyUnicode_FindChar(text, '#', at, n, 1)) >= 0 && at + 8 <= n; at++) {
        int same = 1;
        for (int i = 1; i < 8 && same; i++)
            same = PyUnicode_READ_CHAR(text, at + i) == (Py_UCS4)mark[i];
        if (same)
            return 1;
    }
    return 0;
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
        index.slots[i] = (TextSlot){(uint32_t)(h >> 32), (int32_t)k};
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
    /* Most files give the merge of line i the id i + a constant: that id is tried before the index. */
    Py_ssize_t shift = 0;
    for (Py_ssize_t line = 0; line < lines; line++) {
        PyObject *merge = PyList_GET_ITEM(merges, line);
        if (!PyUnicode_Check(merge))
            goto none;
        Py_ssize_t n = PyUnicode_GET_LENGTH(merge), cut;
        if (hugging_face) {
            /* The library's usual line: one space, a side on each side of it, no line break, no "#version". */
            cut = PyUnicode_FindChar(merge, ' ', 0, n, 1);
            if (cut <= 0 || cut == n - 1 || PyUnicode_FindChar(merge, ' ', cut + 1, n, 1) != -1 ||
                PyUnicode_FindChar(merge, '\n', 0, n, 1) != -1 || has_version_mark(merge, n))
                goto none;
        }
        else {
            /* llama.cpp's cut: the first space after the first character. */
            cut = n > 1 ? PyUnicode_FindChar(merge, ' ', 1, n, 1) : -1;
            if (cut < 0)
                goto none;
        }
        Span left = span_of(merge, 0, cut), right = span_of(merge, cut + 1, n);
        int32_t a = text_find(&index, left, nothing);
        int32_t b = text_find(&index, right, nothing);
        Py_ssize_t guess = line + shift;
        int32_t c = guess >= 0 && guess < count && text_is(&index, (int32_t)guess, left, right)
                        ? (int32_t)guess : text_find(&index, left, right);
        if (a < 0 || b < 0 || c < 0)
            goto none; /* a side or the join is no token: the Python path sorts these out */
        shift = c - line;
        pairs[line] = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
        if (triples != NULL) {
            /* Fresh ints for the positions themselves (made in order, where the ids' own objects lie anywhere). */
            PyObject *triple = ids == Py_True ? Py_BuildValue("(iii)", a, b, c)
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

/* ---- sentencepiece models --------------------------------------------------------------------------------- */

/* A protobuf varint at *pos (below end), as _Wire.varint reads it; -1 when truncated or longer than 10 bytes. */
static int
varint(const unsigned char *data, Py_ssize_t *pos, Py_ssize_t end, uint64_t *out)
{
    uint64_t result = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*pos >= end)
            return -1;
        unsigned char byte = data[(*pos)++];
        if (shift < 64)
            result |= (uint64_t)(byte & 0x7F) << shift;
        if (byte < 0x80) {
            *out = result;
            return 0;
        }
    }
    return -1;
}

/* One piece in the usual layout (``_quick_piece``): 0 with its three values set, 1 for another layout. */
static int
quick_piece(const unsigned char *data, Py_ssize_t start, Py_ssize_t end, PyObject **text, double *score, long *kind)
{
    if (end - start < 2 || data[start] != 0x0A || data[start + 1] >= 0x80)
        return 1;
    Py_ssize_t text_end = start + 2 + data[start + 1];
    if (text_end + 5 > end || data[text_end] != 0x15)
        return 1;
    Py_ssize_t after = text_end + 5;
    if (after == end)
        *kind = 1;
    else if (after + 2 == end && data[after] == 0x18 && data[after + 1] >= 1 && data[after + 1] <= 6)
        *kind = data[after + 1];
    else
        return 1;
    if (text_end == start + 2)
        return 1; /* an empty text */
    *text = PyUnicode_DecodeUTF8((const char *)data + start + 2, text_end - start - 2, "strict");
    if (*text == NULL) {
        PyErr_Clear();
        return 1;
    }
    float value;
    memcpy(&value, data + text_end + 1, 4); /* a little-endian float32 (the machines CPython builds on) */
    *score = value;
    return 0;
}

static PyObject *
sentencepiece_pieces(PyObject *Py_UNUSED(module), PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *data = view.buf;
    Py_ssize_t end = view.len, pos = 0;
    PyObject *texts = PyList_New(0), *scores = PyList_New(0), *types = PyList_New(0), *others = PyList_New(0);
    if (texts == NULL || scores == NULL || types == NULL || others == NULL)
        goto fail;
    while (pos < end) {
        uint64_t key, value;
        if (varint(data, &pos, end, &key) < 0 || (key >> 3) == 0)
            goto none;
        uint64_t number = key >> 3;
        int wire = (int)(key & 7);
        PyObject *item = NULL;
        if (wire == 0) {
            if (varint(data, &pos, end, &value) < 0)
                goto none;
            item = Py_BuildValue("(KiK)", (unsigned long long)number, wire, (unsigned long long)value);
        }
        else if (wire == 1 || wire == 5) {
            Py_ssize_t width = wire == 1 ? 8 : 4;
            if (end - pos < width)
                goto none;
            item = Py_BuildValue("(Kiy#)", (unsigned long long)number, wire, (const char *)data + pos, width);
            pos += width;
        }
        else if (wire == 2) {
            if (varint(data, &pos, end, &value) < 0 || value > (uint64_t)(end - pos))
                goto none;
            Py_ssize_t start = pos;
            pos += (Py_ssize_t)value;
            if (number == 1) {
                PyObject *text;
                double score;
                long kind;
                if (quick_piece(data, start, pos, &text, &score, &kind))
                    goto none;
                PyObject *score_obj = PyFloat_FromDouble(score), *kind_obj = PyLong_FromLong(kind);
                int failed = score_obj == NULL || kind_obj == NULL || PyList_Append(texts, text) < 0 ||
                             PyList_Append(scores, score_obj) < 0 || PyList_Append(types, kind_obj) < 0;
                Py_DECREF(text);
                Py_XDECREF(score_obj);
                Py_XDECREF(kind_obj);
                if (failed)
                    goto fail;
                continue;
            }
            item = Py_BuildValue("(Ki(nn))", (unsigned long long)number, wire, start, pos);
        }
        else
            goto none;
        if (number <= 3 && wire != 2)
            goto none_item; /* a piece or spec that is not a sub-message: the Python reader refuses it */
        if (item == NULL || PyList_Append(others, item) < 0) {
            Py_XDECREF(item);
            goto fail;
        }
        Py_DECREF(item);
        continue;
    none_item:
        Py_XDECREF(item);
        goto none;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(NNNN)", texts, scores, types, others);
none:
    Py_DECREF(texts);
    Py_DECREF(scores);
    Py_DECREF(types);
    Py_DECREF(others);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(texts);
    Py_XDECREF(scores);
    Py_XDECREF(types);
    Py_XDECREF(others);
    PyBuffer_Release(&view);
    return NULL;
}

/* ---- lists as one blob ------------------------------------------------------------------------------------ */

/* The offset ``index`` of an array of int32 (width 4) or int64 (width 8) values. */
static int64_t
offset_at(const char *raw, int width, Py_ssize_t index)
{
    if (width == 4) {
        int32_t value;
        memcpy(&value, raw + index * 4, 4);
        return value;
    }
    int64_t value;
    memcpy(&value, raw + index * 8, 8);
    return value;
}

static PyObject *
joined(PyObject *Py_UNUSED(module), PyObject *arg)
{
    if (!PyList_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "joined takes a list of bytes or of str");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(arg);
    int text = count > 0 && PyUnicode_Check(PyList_GET_ITEM(arg, 0));
    int64_t total = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyList_GET_ITEM(arg, i);
        if (text ? !PyUnicode_Check(item) : !PyBytes_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "joined takes a list of bytes or of str, not of both");
            return NULL;
        }
        total += text ? PyUnicode_GET_LENGTH(item) : PyBytes_GET_SIZE(item);
    }
    int width = total <= INT32_MAX ? 4 : 8;
    PyObject *offsets = PyBytes_FromStringAndSize(NULL, (count + 1) * width);
    if (offsets == NULL)
        return NULL;
    char *out = PyBytes_AS_STRING(offsets);
    int64_t at = 0;
    for (Py_ssize_t i = 0; i <= count; i++) {
        if (width == 4) {
            int32_t value = (int32_t)at;
            memcpy(out + i * 4, &value, 4);
        }
        else
            memcpy(out + i * 8, &at, 8);
        if (i < count) {
            PyObject *item = PyList_GET_ITEM(arg, i);
            at += text ? PyUnicode_GET_LENGTH(item) : PyBytes_GET_SIZE(item);
        }
    }
    PyObject *blob;
    if (text) {
        PyObject *empty = PyUnicode_New(0, 0);
        blob = empty == NULL ? NULL : PyUnicode_Join(empty, arg);
        Py_XDECREF(empty);
    }
    else {
        blob = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
        if (blob != NULL) {
            char *to = PyBytes_AS_STRING(blob);
            for (Py_ssize_t i = 0; i < count; i++) {
                PyObject *item = PyList_GET_ITEM(arg, i);
                memcpy(to, PyBytes_AS_STRING(item), (size_t)PyBytes_GET_SIZE(item));
                to += PyBytes_GET_SIZE(item);
            }
        }
    }
    if (blob == NULL) {
        Py_DECREF(offsets);
        return NULL;
    }
    return Py_BuildValue("(NNi)", blob, offsets, width);
}

static PyObject *
int_array(PyObject *Py_UNUSED(module), PyObject *arg)
{
    if (!PyList_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "int_array takes a list");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(arg);
    int64_t *values = PyMem_Malloc((size_t)(count > 0 ? count : 1) * sizeof(int64_t));
    if (values == NULL)
        return PyErr_NoMemory();
    int narrow = 1, counting = 1;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyList_GET_ITEM(arg, i);
        int overflow = 0;
        long long value = PyLong_CheckExact(item) ? PyLong_AsLongLongAndOverflow(item, &overflow) : 0;
        if (!PyLong_CheckExact(item) || overflow || (value == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            PyMem_Free(values);
            Py_RETURN_NONE; /* not an int (a bool, None, ...) or beyond 64 bits: the Python path's */
        }
        values[i] = value;
        narrow &= value >= INT32_MIN && value <= INT32_MAX;
        counting &= value == i;
    }
    int width = narrow ? 4 : 8;
    PyObject *data = PyBytes_FromStringAndSize(NULL, count * width);
    if (data != NULL) {
        char *out = PyBytes_AS_STRING(data);
        for (Py_ssize_t i = 0; i < count; i++) {
            if (narrow) {
                int32_t value = (int32_t)values[i];
                memcpy(out + i * 4, &value, 4);
            }
            else
                memcpy(out + i * 8, &values[i], 8);
        }
    }
    PyMem_Free(values);
    if (data == NULL)
        return NULL;
    return Py_BuildValue("(NiO)", data, width, counting ? Py_True : Py_False);
}

static PyObject *
cut(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *blob;
    Py_buffer view, bytes = {0};
    int width;
    if (!PyArg_ParseTuple(args, "Oy*i:cut", &blob, &view, &width))
        return NULL;
    int text = PyUnicode_Check(blob);
    PyObject *items = NULL;
    if (!text && PyObject_GetBuffer(blob, &bytes, PyBUF_SIMPLE) < 0)
        goto fail;
    Py_ssize_t length = text ? PyUnicode_GET_LENGTH(blob) : bytes.len;
    if ((width != 4 && width != 8) || view.len % width != 0 || view.len == 0) {
        PyErr_SetString(PyExc_ValueError, "cut: offsets must be int32 or int64 values, the first 0 and the last the"
                        " length");
        goto fail;
    }
    Py_ssize_t count = view.len / width - 1;
    const char *raw = view.buf;
    int64_t previous = offset_at(raw, width, 0), last = offset_at(raw, width, count);
    if (previous != 0 || last != (int64_t)length) {
        PyErr_SetString(PyExc_ValueError, "cut: offsets must start at 0 and end at the blob's length");
        goto fail;
    }
    items = PyList_New(count);
    if (items == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t next = offset_at(raw, width, i + 1);
        if (next < previous || next > (int64_t)length) {
            PyErr_SetString(PyExc_ValueError, "cut: offsets out of order");
            goto fail;
        }
        PyObject *item = text ? PyUnicode_Substring(blob, (Py_ssize_t)previous, (Py_ssize_t)next)
                              : PyBytes_FromStringAndSize((const char *)bytes.buf + previous,
                                                          (Py_ssize_t)(next - previous));
        if (item == NULL)
            goto fail;
        PyList_SET_ITEM(items, i, item);
        previous = next;
    }
    PyBuffer_Release(&view);
    if (!text)
        PyBuffer_Release(&bytes);
    return items;
fail:
    Py_XDECREF(items);
    PyBuffer_Release(&view);
    if (!text && bytes.obj != NULL)
        PyBuffer_Release(&bytes);
    return NULL;
}

static PyMethodDef module_methods[] = {
    {"rank_file", rank_file, METH_O, "rank_file(data): a well-formed tiktoken rank file's table, or None."},
    {"length_prefixed", length_prefixed, METH_VARARGS,
     "length_prefixed(buffer, offset, count, keep): a GGUF array of strings, (strings, end, failed)."},
    {"spelt_bytes", spelt_bytes, METH_VARARGS,
     "spelt_bytes(texts, alphabet): the bytes each text spells, one character a byte, None where it cannot."},
    {"merge_ids", merge_ids, METH_VARARGS,
     "merge_ids(texts, excluded, merges): the (left, right, joined) ids of a GGUF file's merges, or None."},
    {"merge_columns", merge_columns, METH_VARARGS,
     "merge_columns(merges, vocabulary): (a, b, c, distinct) of (a, b, c) triples of ids in the vocabulary, or None."},
    {"sentencepiece_pieces", sentencepiece_pieces, METH_O,
     "sentencepiece_pieces(data): (texts, scores, types, other fields) of a ModelProto, or None."},
    {"joined", joined, METH_O, "joined(items): (blob, offsets, their width) of a list of bytes or of str."},
    {"int_array", int_array, METH_O,
     "int_array(items): (native int32 or int64 array, width, whether they count 0, 1, ...) of a list of ints, or None."},
    {"cut", cut, METH_VARARGS, "cut(blob, offsets, width): the items joined(items) made the blob and offsets of."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_fastload",
    .m_doc = "The bulk readers of bpeproof's vocabulary loaders in C.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__fastload(void)
{
    base64_init();
    return PyModule_Create(&module);
}
