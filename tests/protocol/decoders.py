"""The message decoders a build has, and a switch to the pure-Python ones.

``pure``, always; ``accelerated`` (the compiled decoders of ``kafkawire.protocol._accel``) when
built and not disabled with ``KAFKAWIRE_NO_EXTENSIONS``. Inside ``decoding_with("pure")``,
``decode`` and the framing functions use ``Codec.decode_from_pure``; the rest of the time they use
the decoder chosen at build time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import pytest

from kafkawire.protocol import codec, framing

__all__ = ["DECODE_PATHS", "decoding_with"]

DECODE_PATHS = ("pure", "accelerated") if codec.ACCELERATED else ("pure",)

_CHOSEN_CODEC_FOR = codec.codec_for


@cache
def _pure_codec(cls: type[Any]) -> codec.Codec:
    chosen = _CHOSEN_CODEC_FOR(cls)
    return dataclasses.replace(chosen, decode_from=chosen.decode_from_pure)


@contextmanager
def decoding_with(path: str) -> Iterator[None]:
    """``decode`` and the framing functions use the decoders of ``path`` inside (one of
    :data:`DECODE_PATHS`, or "default": unswapped)."""
    if path != "pure":
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(codec, "codec_for", _pure_codec)
        patch.setattr(framing, "codec_for", _pure_codec)
        yield
