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
 * tokenizer_json_model(data: bytes) -> (vocab: dict, merges: list, (vocab start, end, merges start, end)) | None
 *
 *   A tokenizer.json's model vocabulary and merge strings read from its bytes, and where they are (the JSON
 *   reader reads the rest of the document): the usual form only, None for any other (_fastload_json.h).
 *
 * json_ids(data: bytes) -> dict | None
 *
 *   A JSON document that is one object of strings to ids (GPT-2's encoder.json), read as tokenizer_json_model
 *   reads the model's vocabulary: the usual form only, None for any other (_fastload_json.h).
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

/* One translation unit: each header below holds one part of the extension. */
#include "_fastload_files.h"  /* rank files, GGUF strings, sentencepiece pieces */
#include "_fastload_merges.h" /* byte spellings, merge look-ups, merge columns */
#include "_fastload_blobs.h"  /* the cache's blobs and arrays */
#include "_fastload_json.h"   /* a tokenizer.json's vocabulary and merges */

static PyMethodDef module_methods[] = {
    {"rank_file", rank_file, METH_O, "rank_file(data): a well-formed tiktoken rank file's table, or None."},
    {"length_prefixed", length_prefixed, METH_VARARGS,
     "length_prefixed(buffer, offset, count, keep): a GGUF array of strings, (strings, end, failed)."},
    {"spelt_bytes", spelt_bytes, METH_VARARGS,
     "spelt_bytes(texts, alphabet): the bytes each text spells, one character a byte, None where it cannot."},
    {"merge_ids", merge_ids, METH_VARARGS,
     "merge_ids(texts, excluded, merges, hugging_face, ids): the (left, right, joined) ids of merges, or None."},
    {"merge_columns", merge_columns, METH_VARARGS,
     "merge_columns(merges, vocabulary): (a, b, c, distinct) of id triples of the vocabulary, or None."},
    {"sentencepiece_pieces", sentencepiece_pieces, METH_O,
     "sentencepiece_pieces(data): (texts, scores, types, other fields) of a ModelProto, or None."},
    {"tokenizer_json_model", tokenizer_json_model, METH_O,
     "tokenizer_json_model(data): (vocab, merges, their places) of a tokenizer.json's usual model, or None."},
    {"json_ids", json_ids, METH_O, "json_ids(data): the dict of a JSON object of strings to ids, or None."},
    {"joined", joined, METH_O, "joined(items): (blob, offsets, their width) of a list of bytes or of str."},
    {"int_array", int_array, METH_O,
     "int_array(items): (int32 or int64 array, width, whether they count 0, 1, ...) of a list of ints, or None."},
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
