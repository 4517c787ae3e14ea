/*
 * _fastenc_scan.h: the pre-tokenizers of bpeproof.impl._c._fastenc, five patterns written out by hand.
 *
 * Included by _fastenc.c (one translation unit, so the scanners inline into its text loop as before); the
 * extension's ``depends`` in setup.py names this file, so a change rebuilds it and source distributions hold it.
 * It provides the Scan state, scan_init, piece_end (the end of the piece starting at a position) and the module
 * function split_pattern.
 */

#ifndef BPEPROOF_FASTENC_SCAN_H
#define BPEPROOF_FASTENC_SCAN_H

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

/* ---- pre-tokenization: tiktoken's patterns, and two written like cl100k, by hand ----
 *
 * split_pattern(text: str, table: bytes, which: int) -> list[str] is regex.findall(pattern, text) for
 *
 *   which = 0, cl100k:
 *     '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|
 *     \s*[\r\n]|\s+(?!\S)|\s
 *   which = 1, o200k:
 *     [^\r\n\p{L}\p{N}]?[U]*[W]+C?|[^\r\n\p{L}\p{N}]?[U]+[W]*C?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|
 *     \s*[\r\n]+|\s+(?!\S)|\s+
 *     with U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W = [\p{Ll}\p{Lm}\p{Lo}\p{M}], C = (?i:'s|'t|'re|'ve|'m|'ll|'d)
 *   which = 2, r50k:
 *     '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s
 *   which = 3, llama3 (cl100k as first published: its words, o200k's whitespace):
 *     (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
 *     \s*[\r\n]+|\s+(?!\S)|\s+
 *   which = 4, qwen2: llama3 with \p{N} for \p{N}{1,3} (one digit a word)
 *
 * At each position the first alternative that matches wins, and within it the first way of matching
 * in the backtracking order of the regex engine (greedy quantifiers longest first, an optional part
 * taken first).  ``table`` classifies every code point 0..0x10FFFF as the regex module does (it is
 * built from the module itself in impl/pre_tokenizers/char_table.py), in two planes of 0x110000
 * bytes: the first has bit 0 \p{L}, bit 1 \p{N}, bit 2 \s, bits 3..6 the letter of "sdmtlver" (1..8)
 * the code point matches case-insensitively (0 for none); the second has bit 0 U and bit 1 W.
 */

#define CL_L 1
#define CL_N 2
#define CL_WS 4
#define CL_LETTER(flags) ((flags) >> 3)
#define CL_PUNCT(flags) (((flags) & (CL_L | CL_N | CL_WS)) == 0)
#define O_U 1
#define O_W 2
#define TABLE_SIZE 0x110000
#define PATTERNS 5

typedef struct {
    const unsigned char *table; /* both planes */
    int kind;
    const void *data;
    Py_ssize_t n;
} Scan;

#define CH(k) PyUnicode_READ(sc->kind, sc->data, (k))
#define CLS(k) sc->table[CH(k)]
#define HI(k) sc->table[TABLE_SIZE + CH(k)]

/* The end of the run of code points from j whose class has one of ``bits`` (plane 0 or 1). */
static inline Py_ssize_t
run_end(const Scan *sc, Py_ssize_t j, int plane, unsigned char bits)
{
    const unsigned char *table = sc->table + (plane ? TABLE_SIZE : 0);
    while (j < sc->n && (table[CH(j)] & bits))
        j++;
    return j;
}

/* Whitespace from i (a \s code point): the end of the piece under \s*[\r\n] (when the run holds
   \r or \n), else under ``at_end`` (\s++$ or \s+(?!\S) at the end of the text), else \s+(?!\S), else \s. */
static Py_ssize_t
space_end(const Scan *sc, Py_ssize_t i, int newline_first)
{
    Py_ssize_t end = run_end(sc, i + 1, 0, CL_WS);
    if (end == sc->n && !newline_first)
        return end; /* cl100k: \s++$ comes before \s*[\r\n] */
    if (newline_first >= 0) {
        Py_ssize_t last = -1;
        for (Py_ssize_t k = i; k < end; k++) {
            Py_UCS4 ch = CH(k);
            if (ch == '\r' || ch == '\n')
                last = k;
        }
        if (last >= 0)
            return last + 1;
    }
    if (end == sc->n)
        return end;
    return end - i >= 2 ? end - 1 : i + 1;
}

/* The letter code (1..8 for s d m t l v e r) of the code point at k, case-insensitively. */
#define LETTER_AT(k) CL_LETTER(CLS(k))

/* j extended by (?i:'s|'t|'re|'ve|'m|'ll|'d) when one starts there (cl100k's '(?i:[sdmt]|ll|ve|re) is the same set). */
static Py_ssize_t
contraction_end(const Scan *sc, Py_ssize_t j)
{
    Py_ssize_t n = sc->n;
    if (j + 1 < n && CH(j) == '\'') {
        int first = LETTER_AT(j + 1);
        if (first >= 1 && first <= 4) /* 's 'd 'm 't */
            return j + 2;
        if (j + 2 < n) {
            int second = LETTER_AT(j + 2);
            if ((first == 5 && second == 5) || (first == 6 && second == 7) || (first == 8 && second == 7))
                return j + 3; /* 'll 've 're */
        }
    }
    return j;
}

/* \p{N}{1,most} from i (a \p{N} code point): at most ``most`` digits. */
static inline Py_ssize_t
digits_end(const Scan *sc, Py_ssize_t i, Py_ssize_t most)
{
    Py_ssize_t j = i + 1;
    while (j < sc->n && j < i + most && (CLS(j) & CL_N))
        j++;
    return j;
}

/* cl100k and the two patterns written like it (see the top): ``most_digits`` 3 or 1, ``newline_first`` 0 for
   cl100k's \s++$|\s*[\r\n]|\s+(?!\S)|\s, 1 for \s*[\r\n]+|\s+(?!\S)|\s+ (o200k's). */
static Py_ssize_t
cl100k_end(const Scan *sc, Py_ssize_t i, Py_ssize_t most_digits, int newline_first)
{
    Py_ssize_t n = sc->n;
    Py_UCS4 c = CH(i);
    unsigned char f = sc->table[c];
    Py_ssize_t contraction = contraction_end(sc, i);
    if (contraction != i)
        return contraction;
    if (f & CL_L) /* \p{L}++ */
        return run_end(sc, i + 1, 0, CL_L);
    if ((f & CL_N) == 0 && c != '\r' && c != '\n' && i + 1 < n && (CLS(i + 1) & CL_L))
        return run_end(sc, i + 2, 0, CL_L); /* [^\r\n\p{L}\p{N}]?+\p{L}++ */
    if (f & CL_N) /* \p{N}{1,3}+ or \p{N} */
        return digits_end(sc, i, most_digits);
    Py_ssize_t start = (c == ' ' && i + 1 < n && CL_PUNCT(CLS(i + 1))) ? i + 1 : i;
    if (CL_PUNCT(CLS(start))) { /*  ?[^\s\p{L}\p{N}]++[\r\n]*+ */
        Py_ssize_t j = start + 1;
        while (j < n && CL_PUNCT(CLS(j)))
            j++;
        while (j < n && (CH(j) == '\r' || CH(j) == '\n'))
            j++;
        return j;
    }
    if (f & CL_WS)
        return space_end(sc, i, newline_first);
    return i + 1; /* not reached: every code point is a letter, a digit, a space or neither */
}

/* o200k: the end of U*W+ (upper_first = 0) or U+W* (upper_first = 1) from s, or -1 when it does not match. */
static Py_ssize_t
o200k_letters(const Scan *sc, Py_ssize_t s, int upper_first)
{
    Py_ssize_t n = sc->n;
    Py_ssize_t e = run_end(sc, s, 1, O_U);
    if (upper_first)
        return e == s ? -1 : run_end(sc, e, 1, O_W);
    /* U* gives back code points until W+ can start: at the last k <= e that is in W. */
    Py_ssize_t k = e;
    while (k >= s && !(k < n && (HI(k) & O_W)))
        k--;
    if (k < s)
        return -1;
    return run_end(sc, k + 1, 1, O_W);
}

static Py_ssize_t
o200k_end(const Scan *sc, Py_ssize_t i)
{
    Py_ssize_t n = sc->n;
    Py_UCS4 c = CH(i);
    unsigned char f = sc->table[c];
    int prefix = (f & (CL_L | CL_N)) == 0 && c != '\r' && c != '\n'; /* [^\r\n\p{L}\p{N}] */
    for (int upper_first = 0; upper_first <= 1; upper_first++) {
        Py_ssize_t j = prefix ? o200k_letters(sc, i + 1, upper_first) : -1;
        if (j < 0)
            j = o200k_letters(sc, i, upper_first);
        if (j >= 0)
            return contraction_end(sc, j); /* C? */
    }
    if (f & CL_N) /* \p{N}{1,3} */
        return digits_end(sc, i, 3);
    Py_ssize_t start = (c == ' ' && i + 1 < n && CL_PUNCT(CLS(i + 1))) ? i + 1 : i;
    if (CL_PUNCT(CLS(start))) { /*  ?[^\s\p{L}\p{N}]+[\r\n/]* */
        Py_ssize_t j = start + 1;
        while (j < n && CL_PUNCT(CLS(j)))
            j++;
        while (j < n && (CH(j) == '\r' || CH(j) == '\n' || CH(j) == '/'))
            j++;
        return j;
    }
    if (f & CL_WS)
        return space_end(sc, i, 1);
    return i + 1; /* not reached */
}

static Py_ssize_t
r50k_end(const Scan *sc, Py_ssize_t i)
{
    Py_ssize_t n = sc->n;
    Py_UCS4 c = CH(i);
    if (c == '\'' && i + 1 < n) {
        Py_UCS4 first = CH(i + 1);
        if (first == 's' || first == 'd' || first == 'm' || first == 't')
            return i + 2;
        if (i + 2 < n) {
            Py_UCS4 second = CH(i + 2);
            if ((first == 'l' && second == 'l') || (first == 'v' && second == 'e') || (first == 'r' && second == 'e'))
                return i + 3;
        }
    }
    /*  ?\p{L}++ |  ?\p{N}++ |  ?[^\s\p{L}\p{N}]++ : the space is taken when the run can follow it */
    Py_ssize_t start = (c == ' ' && i + 1 < n) ? i + 1 : i;
    unsigned char f = CLS(start);
    if (start != i && (f & CL_WS))
        start = i, f = CLS(i);
    if (f & CL_L)
        return run_end(sc, start + 1, 0, CL_L);
    if (f & CL_N)
        return run_end(sc, start + 1, 0, CL_N);
    if (CL_PUNCT(f)) {
        Py_ssize_t j = start + 1;
        while (j < n && CL_PUNCT(CLS(j)))
            j++;
        return j;
    }
    return space_end(sc, i, -1); /* \s++$ | \s+(?!\S) | \s */
}

#undef CH
#undef CLS
#undef HI

static Py_ssize_t
piece_end(const Scan *sc, int which, Py_ssize_t i)
{
    switch (which) {
    case 0:
        return cl100k_end(sc, i, 3, 0);
    case 1:
        return o200k_end(sc, i);
    case 3:
        return cl100k_end(sc, i, 3, 1);
    case 4:
        return cl100k_end(sc, i, 1, 1);
    default:
        return r50k_end(sc, i);
    }
}

static int
scan_init(Scan *sc, PyObject *text, PyObject *table, int which)
{
    if (PyBytes_GET_SIZE(table) != 2 * TABLE_SIZE) {
        PyErr_SetString(PyExc_ValueError, "the class table must have 2 * 0x110000 entries");
        return -1;
    }
    if (which < 0 || which >= PATTERNS) {
        PyErr_SetString(PyExc_ValueError, "which must be 0 (cl100k), 1 (o200k), 2 (r50k), 3 (llama3) or 4 (qwen2)");
        return -1;
    }
    sc->table = (const unsigned char *)PyBytes_AS_STRING(table);
    sc->kind = PyUnicode_KIND(text);
    sc->data = PyUnicode_DATA(text);
    sc->n = PyUnicode_GET_LENGTH(text);
    return 0;
}

static PyObject *
split_pattern(PyObject *module, PyObject *args)
{
    PyObject *text, *table;
    int which;
    if (!PyArg_ParseTuple(args, "USi:split_pattern", &text, &table, &which))
        return NULL;
    Scan sc;
    if (scan_init(&sc, text, table, which) < 0)
        return NULL;
    PyObject *pieces = PyList_New(0);
    if (pieces == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < sc.n;) {
        Py_ssize_t j = piece_end(&sc, which, i);
        PyObject *piece = PyUnicode_Substring(text, i, j);
        if (piece == NULL || PyList_Append(pieces, piece) < 0) {
            Py_XDECREF(piece);
            Py_DECREF(pieces);
            return NULL;
        }
        Py_DECREF(piece);
        i = j;
    }
    return pieces;
}

#endif /* BPEPROOF_FASTENC_SCAN_H */
