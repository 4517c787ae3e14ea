"""``FormatError``, the one exception for a bad file, as ``impl.formats`` exports it (defined in ``impl.io.errors``)."""

from __future__ import annotations

from bpeproof.impl.io.errors import FormatError

__all__ = ["FormatError"]
