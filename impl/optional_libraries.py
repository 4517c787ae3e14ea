"""The optional libraries that the audit and the checker compare with, imported only when a command needs one.

A missing one is reported with the extra that installs it, so that the message says what to type, not only
"No module named 'tiktoken'".
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: The extra of ``pyproject.toml`` that installs each optional module.
EXTRA_OF: dict[str, str] = {
    "tiktoken": "compare",
    "tokenizers": "compare",
    "sentencepiece": "compare",
    "mistral_common": "compare",
    "ftfy": "compare",
    "gguf": "compare",
    "distributed": "dask",
    "dask": "dask",
    "pyarrow": "parquet",
    "crosshair": "prove",
}
#: The distribution to name when it differs from the module's name.
DISTRIBUTION_OF: dict[str, str] = {"mistral_common": "mistral-common", "distributed": "dask[distributed]",
                                   "crosshair": "crosshair-tool"}


class LibraryMissingError(ImportError):
    """An optional library is not installed; the message names it and the command that installs it."""


def install_hint(module: str) -> str:
    """How to install ``module``: its extra of bpeproof, or the distribution itself."""
    distribution = DISTRIBUTION_OF.get(module, module)
    extra = EXTRA_OF.get(module)
    if extra is None:
        return f"pip install {distribution}"
    return f"pip install 'bpeproof[{extra}]' (or pip install {distribution})"


def missing_message(module: str, purpose: str) -> str:
    """One line: what needs ``module``, that it is missing, and how to install it."""
    return f"{purpose} needs {module}, which is not installed: {install_hint(module)}"


def require(module: str, purpose: str) -> ModuleType:
    """``module`` imported, or ``LibraryMissingError`` saying that ``purpose`` needs it and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        if error.name is not None and error.name.split(".")[0] != module.split(".")[0]:
            raise  # the library is there but one of its own imports failed: that is its error, not a missing library
        raise LibraryMissingError(missing_message(module, purpose)) from None
