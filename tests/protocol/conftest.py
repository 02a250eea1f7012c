"""The decoding tests run against each message decoder this build has.

The modules in ``DECODING_MODULES`` run once per decoder: the pure-Python one always, and the
compiled one (``kafkawire.protocol._accel``) when it was built and not disabled with
``KAFKAWIRE_NO_EXTENSIONS``. The ``decode_path`` fixture makes ``decode`` and the framing
functions use the pure decoders (``Codec.decode_from_pure``) for the "pure" run; it is
module-scoped, so hypothesis tests may use it, and the swap is undone after each module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from kafkawire.protocol import codec, framing

DECODING_MODULES = frozenset(
    {"test_decode_errors", "test_framing", "test_golden", "test_roundtrip"}
)
DECODE_PATHS = ["pure", "accelerated"] if codec.ACCELERATED else ["pure"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    module = metafunc.module.__name__.rpartition(".")[2]
    if module in DECODING_MODULES and "decode_path" in metafunc.fixturenames:
        metafunc.parametrize("decode_path", DECODE_PATHS, indirect=True, scope="module")


@cache
def _pure_codec(cls: type[Any]) -> codec.Codec:
    chosen = _CHOSEN_CODEC_FOR(cls)
    return dataclasses.replace(chosen, decode_from=chosen.decode_from_pure)


_CHOSEN_CODEC_FOR = codec.codec_for


@pytest.fixture(scope="module", autouse=True)
def decode_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """The decoders in use during this module ("default": unswapped, whichever is chosen)."""
    name: str | None = getattr(request, "param", None)
    if name is None or name == "accelerated":
        yield name or "default"
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(codec, "codec_for", _pure_codec)
        patch.setattr(framing, "codec_for", _pure_codec)
        yield name
