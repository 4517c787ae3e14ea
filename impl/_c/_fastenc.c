/*
 * _fastenc: the merge loop of bpeproof.impl.encoder in C (def-bpe), and the word loop of bpeproof.impl.tokenizer.
 *
 * Merger(parts_a, parts_b, outputs)
 *
 *   A compiled rule list in *dense* ids: the bytes are 0..255 and the token made
 *   by the rule of rank k (k = 0, 1, ...) is 256 + k.  parts_a[k], parts_b[k] are
 *   the dense ids joined by rule k (each < 256 + k: rule k is over V_{k-1});
 *   outputs[d] is the id reported for dense id d (any int object, so ids of any
 *   size pass through untouched; or a tuple of them, reported in its place by
 *   encode and encode_pieces, which encode_text and encode_texts refuse).  A pair keeps the first rule joining it: a
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
 *   merge_each(words: list[bytes], loop: int) -> bytes
 *       enc_R of each word by the loop ``loop`` names, whatever the word's
 *       length (0 the flat array, 1 the heap), as dense ids in native int32,
 *       each word's followed by -1.  It lets a check drive both loops on every
 *       short word, in one call.
 *
 *   encode_pieces(pieces: list[str], cache: dict, limit: int) -> list[int]
 *       For each piece: the cached tuple if ``cache`` has one, else the UTF-8
 *       bytes of the piece (surrogateescape: U+DC80..U+DCFF stand for the
 *       bytes 0x80..0xFF) encoded as above and stored in ``cache`` when
 *       ``limit`` > 0; a full cache first loses its older half (insertion
 *       order), as bpeproof.impl.word_cache.WordCache does.  The ids of all pieces are
 *       returned as one list.
 *
 *   encode_text(text: str, table: bytes, which: int, limit: int, strict: bool = False) -> list[int]
 *       The ids of the pieces of split_pattern(text, table, which), without making the list of
 *       pieces, through a word cache of the merger's own (at most ``limit`` words, the older half
 *       dropped when full) keyed by code points: a piece seen before costs no str object.
 *       clear_cache() empties it; cached_words() counts its words.  ``strict``: a text holding a
 *       surrogate fails (UnicodeError) before any look-up; else the escaped bytes U+DC80..U+DCFF
 *       are those bytes (the text of bytes that are not UTF-8) and any other surrogate fails.
 *
 * split_pattern(text: str, table: bytes, which: int) -> list[str]
 *
 *   regex.findall with tiktoken's cl100k (0), o200k (1) or r50k (2) pattern, written out by hand
 *   (impl/_c/_fastenc_scan.h, included below).
 *
 * WordCounter(): add(text, table, which) counts the pieces of split_pattern(text, table, which) without making
 *   them, counts() gives the table as {UTF-8 bytes: count}, pack() as the trainer's packed table
 *   (impl/_c/_fastenc_count.h, included below).
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

/* One translation unit: each header below holds one part of the extension, and its static functions inline
 * across them as in a single file.  Each includes the headers it builds on; the order here is theirs. */
#include "_fastenc_table.h"  /* the Merger's state, the pair table and the whole-piece table */
#include "_fastenc_merge.h"  /* the merge loops: enc_R of one word */
#include "_fastenc_cache.h"  /* the word cache of encode_text */
#include "_fastenc_shared.h" /* the word cache shared between the threads of encode_texts */
#include "_fastenc_scan.h"   /* the pre-tokenizers: Scan, scan_init, piece_end, split_pattern */
#include "_fastenc_count.h"  /* the word counter of training: WordCounter */
#include "_fastenc_encode.h" /* the encoding methods: encode, encode_pieces, encode_text */
#include "_fastenc_batch.h"  /* encode_texts: encode_text of many texts on several threads */
#include "_fastenc_merger.h" /* the Merger type: its constructors, method table and type object */

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
