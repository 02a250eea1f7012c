"""Loading kafkawire's optional C extensions, or not.

Each extension stands in for pure-Python code that stays the fallback: it is used when the
build compiled it and ``KAFKAWIRE_NO_EXTENSIONS`` is not set (to any non-empty value).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import TypeVar

__all__ = ["DISABLE", "load_optional"]

T = TypeVar("T")

DISABLE = "KAFKAWIRE_NO_EXTENSIONS"


def load_optional(name: str, load: Callable[[], T]) -> T | None:
    """What ``load`` returns (it imports and sets up the extension ``name``), or ``None``.

    ``None`` when the extension is disabled, not built (``ImportError``), or refuses to set up
    (``TypeError``: a stale build, made for other classes; that one warns).
    """
    if os.environ.get(DISABLE):
        return None
    try:
        return load()
    except ImportError:
        return None
    except TypeError as exc:
        warnings.warn(f"{name} not used: {exc}", RuntimeWarning, stacklevel=2)
        return None
