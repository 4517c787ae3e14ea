/*
 * _fastenc_scan.h: the pre-tokenizers of bpeproof.impl._c._fastenc, six pre-tokenizers written out by hand.
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
 *   which = 5, deepseek3: three split steps, written out below
 *
 * At each position the first alternative that matches wins, and within it the first way of matching
 * in the backtracking order of the regex engine (greedy quantifiers longest first, an optional part
 * taken first).  ``table`` classifies every code point 0..0x10FFFF as the regex module does (it is
 * built from the module itself in impl/pre_tokenizers/char_table.py), in two planes of 0x110000
 * bytes: the first has bit 0 \p{L}, bit 1 \p{N}, bit 2 \s, bits 3..6 the letter of "sdmtlver" (1..8)
 * the code point matches case-insensitively (0 for none); the second has bit 0 U, bit 1 W, bit 2 \p{P},
 * bit 3 \p{S} and bit 4 \p{M}.
 */

#define CL_L 1
#define CL_N 2
#define CL_WS 4
#define CL_LETTER(flags) ((flags) >> 3)
#define CL_PUNCT(flags) (((flags) & (CL_L | CL_N | CL_WS)) == 0)
#define O_U 1
#define O_W 2
#define TABLE_SIZE 0x110000
#define PATTERNS 6

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

/* ---- which = 5, deepseek3: DeepSeek-V3's three Split steps, each isolated, composed ----
 *
 *   \p{N}{1,3}, then [一-龥぀-ゟ゠-ヿ]+, then
 *   [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|
 *   \s*[\r\n]+|\s+(?!\S)|\s+
 *
 * The first two steps cut the text into segments: groups of at most three digits, runs of those kana and
 * ideographs, and runs of everything else.  Each segment is then cut by the third expression on its own (its end
 * is the end of the text for the look-ahead), its matches and the text between them (which no match covers: a
 * control character, a digit group) each a piece.  A digit group is one piece (the expression matches no digit
 * followed by a digit), so every piece starts where a segment starts or inside a segment of the other two kinds,
 * where the run from that position ends where the segment does. */

#define DS_P 4
#define DS_S 8
#define DS_M 16
#define DS_KANA_HAN(c) (((c) >= 0x3040 && (c) <= 0x30FF) || ((c) >= 0x4E00 && (c) <= 0x9FA5))
#define DS_ASCII_PUNCT(c) (((c) >= 0x21 && (c) <= 0x2F) || ((c) >= 0x3A && (c) <= 0x40) || \
                           ((c) >= 0x5B && (c) <= 0x60) || ((c) >= 0x7B && (c) <= 0x7E))
#define DS_ASCII_LETTER(c) (((c) >= 'A' && (c) <= 'Z') || ((c) >= 'a' && (c) <= 'z'))
#define DS_LM(k) ((CLS(k) & CL_L) || (HI(k) & DS_M))
#define DS_PS(k) (HI(k) & (DS_P | DS_S))

/* Whether position k is in the segment of kind ``han`` (1: kana and ideographs, 0: the rest but digits). */
#define DS_IN(k) ((k) < sc->n && (han ? DS_KANA_HAN(CH(k)) : (!(CLS(k) & CL_N) && !DS_KANA_HAN(CH(k)))))

/* The end of the third expression's match at j in a segment of kind ``han``, or -1 when it does not match there.
   The segment's end is found as the match reaches it, never computed ahead (it may be far). */
static Py_ssize_t
deepseek3_match_end(const Scan *sc, Py_ssize_t j, int han)
{
    Py_UCS4 c = CH(j);
    Py_ssize_t k;
    if (DS_ASCII_PUNCT(c) && DS_IN(j + 1) && DS_ASCII_LETTER(CH(j + 1))) { /* [!"#…~][A-Za-z]+ */
        for (k = j + 2; DS_IN(k) && DS_ASCII_LETTER(CH(k)); k++)
            ;
        return k;
    }
    /* [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+: the optional code point taken first, left out if the run cannot follow */
    int prefix = c != '\r' && c != '\n' && !(CLS(j) & CL_L) && !DS_PS(j);
    k = prefix && DS_IN(j + 1) && DS_LM(j + 1) ? j + 1 : (DS_LM(j) ? j : -1);
    if (k >= 0) {
        for (k++; DS_IN(k) && DS_LM(k); k++)
            ;
        return k;
    }
    Py_ssize_t start = (c == ' ' && DS_IN(j + 1) && DS_PS(j + 1)) ? j + 1 : j;
    if (DS_PS(start)) { /*  ?[\p{P}\p{S}]+[\r\n]* */
        for (k = start + 1; DS_IN(k) && DS_PS(k); k++)
            ;
        while (DS_IN(k) && (CH(k) == '\r' || CH(k) == '\n'))
            k++;
        return k;
    }
    if (!(CLS(j) & CL_WS))
        return -1;
    Py_ssize_t run = j + 1, last = -1; /* \s*[\r\n]+ | \s+(?!\S) | \s+ */
    while (DS_IN(run) && (CLS(run) & CL_WS))
        run++;
    for (k = j; k < run; k++)
        if (CH(k) == '\r' || CH(k) == '\n')
            last = k;
    if (last >= 0)
        return last + 1;
    if (!DS_IN(run) || run - j < 2) /* the segment ends there, or \s+ of one code point */
        return run;
    return run - 1;
}

static Py_ssize_t
deepseek3_end(const Scan *sc, Py_ssize_t i)
{
    if (CLS(i) & CL_N) /* a digit group is one piece: the expression matches at none of its code points */
        return digits_end(sc, i, 3);
    int han = DS_KANA_HAN(CH(i)) ? 1 : 0;
    Py_ssize_t m = deepseek3_match_end(sc, i, han);
    if (m >= 0)
        return m;
    Py_ssize_t j = i + 1; /* text no match covers, up to the next match or the end of the segment */
    while (DS_IN(j) && deepseek3_match_end(sc, j, han) < 0)
        j++;
    return j;
}

#undef DS_IN
#undef DS_LM
#undef DS_PS
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
    case 5:
        return deepseek3_end(sc, i);
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
        PyErr_SetString(PyExc_ValueError, "which must be 0 (cl100k), 1 (o200k), 2 (r50k), 3 (llama3), 4 (qwen2) or 5 (deepseek3)");
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
