"""``FormatError``, the one exception for a bad file, as ``impl.formats`` exports it (defined in ``impl.errors``)."""

from __future__ import annotations

from bpeproof.impl.errors import FormatError

__all__ = ["FormatError"]
