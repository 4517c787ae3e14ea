"""Write ``impl/data/tokenizers-classes.txt``: the character tables that Hugging Face ``tokenizers`` runs on.

The library's normalizers and pre-tokenizers classify characters by tables compiled into it, each of another
Unicode version: Rust's ``char::is_numeric``, ``is_whitespace`` and ``to_lowercase``, the ``regex`` crate's
``\\w``, ``unicode_categories``' punctuation, ``unicode-normalization-alignments``' combining marks and
decompositions (Unicode 9.0).  ``bpeproof.impl.pre_tokenizers.hf_chars`` reads this file so that the engine classifies
as the library
does, whatever the Unicode version of Python or of the ``regex`` module.  The tables are read off the installed
library itself (``bpeproof.proofs_tests.probes.tokenizers_library``)::

    python scripts/make_tokenizers_tables.py

``proofs_tests/tests/impl/test_hf_pipelines.py`` checks the file against the installed library again.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from bpeproof.proofs_tests.probes import tokenizers_library as probes

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "impl" / "data" / "tokenizers-classes.txt"


def _range_lines(codes: set[int]) -> list[str]:
    return [f"{low:X}" if low == high else f"{low:X}-{high:X}" for low, high in probes.ranges(codes)]


def main() -> None:
    import tokenizers

    word, space = probes.library_word_classes()
    whitespace = probes.library_whitespace()
    if space != whitespace:
        raise SystemExit("the regex crate's \\s is not char::is_whitespace in this library; the file has one table")
    unassigned = {code for code in probes.EVERY_CODE_POINT if unicodedata.category(chr(code)) == "Cn"}
    sections: list[tuple[str, str, list[str]]] = [
        ("numeric", "char::is_numeric (Digits)", _range_lines(probes.library_numeric())),
        ("punctuation", "ASCII or unicode_categories punctuation (Punctuation)", _range_lines(
            probes.library_punctuation())),
        ("whitespace", "char::is_whitespace and the regex crate's \\s (Strip, WhitespaceSplit, Whitespace,"
         " added tokens' lstrip and rstrip)", _range_lines(whitespace)),
        ("word", "the regex crate's \\w (Whitespace, added tokens' single_word)", _range_lines(word)),
        ("mark", "unicode-normalization-alignments' is_combining_mark (StripAccents)", _range_lines(
            probes.library_marks())),
        ("lowercase", "char::to_lowercase of every code point it changes: code point, then the lower case",
         [f"{code:X} " + " ".join(f"{ord(char):X}" for char in text)
          for code, text in sorted(probes.library_lowercase().items())]),
        ("normalization-gaps", f"code points whose decomposition or combining class in Python's Unicode"
         f" {unicodedata.unidata_version} the normalizers do not have", _range_lines(
             probes.library_normalization_gaps())),
        ("composition-gaps", "primary composites of that Unicode version the normalizers do not compose",
         _range_lines(probes.library_composition_gaps())),
        ("python-unassigned", f"code points unassigned in Unicode {unicodedata.unidata_version}: the normalizers"
         " do not have what a later Unicode assigns to them either", _range_lines(unassigned)),
        ("python-unicode", "the Unicode version of the Python these gaps were found with",
         [unicodedata.unidata_version]),
    ]
    lines = [f"# Character tables of Hugging Face tokenizers {tokenizers.__version__}, read off the library by"
             " scripts/make_tokenizers_tables.py.",
             "# Sections '[name]'; a line is a code point or an inclusive range, hexadecimal."]
    for name, meaning, body in sections:
        lines += [f"[{name}] {meaning}", *body]
    TARGET.write_text("\n".join(lines) + "\n", encoding="ascii")
    print(f"wrote {TARGET.relative_to(ROOT)}: {sum(len(body) for _, _, body in sections)} lines")


if __name__ == "__main__":
    main()
