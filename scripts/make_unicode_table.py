"""Write ``impl/data/unicode-<version>-categories.txt``: the general category of every code point in one Unicode
version, as runs ``<first code point, hex> <category>``.

The pre-tokenization patterns' classes (``\\p{L}``, ``\\p{N}``, …) are read from this table rather than from the
installed ``regex`` module, whose tables follow whatever Unicode version its release ships.  The data comes from
the ``unicodedata2`` package of that version (Unicode's own UnicodeData.txt, compiled)::

    python scripts/make_unicode_table.py 16.0.0

installs ``unicodedata2==VERSION`` into a temporary directory with pip and writes the file.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(version: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", scratch,
                        f"unicodedata2=={version}"], check=True)
        library = next(Path(scratch).glob("unicodedata2*.so"))
        spec = importlib.util.spec_from_file_location("unicodedata2", library)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        unicode_version = module.unidata_version
        lines = [f"# General categories of Unicode {unicode_version} (unicodedata2 {version}):"
                 " runs '<first code point, hex> <category>'"]
        previous = None
        for code in range(0x110000):
            category = module.category(chr(code))
            if category != previous:
                lines.append(f"{code:X} {category}")
                previous = category
    major_minor = ".".join(unicode_version.split(".")[:2])
    target = ROOT / "impl" / "data" / f"unicode-{major_minor}-categories.txt"
    target.write_text("\n".join(lines) + "\n", encoding="ascii")
    print(f"wrote {target.relative_to(ROOT)}: {len(lines) - 1} runs")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "16.0.0")
