"""The decoding tests run against each message decoder this build has.

The modules in ``DECODING_MODULES`` run once per decoder (``decoders.DECODE_PATHS``): the
pure-Python one always, and the compiled one (``kafkawire.protocol._accel``) when it was built
and not disabled with ``KAFKAWIRE_NO_EXTENSIONS``. The ``decode_path`` fixture makes ``decode``
and the framing functions use the pure decoders (``Codec.decode_from_pure``) for the "pure" run;
it is module-scoped, so hypothesis tests may use it, and the swap is undone after each module.

The round trips (``test_roundtrip.py``) are not among them: each of their examples is decoded by
both decoders in turn (``decoders.decoding_with``), so an example is drawn once, not once per
decoder.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .decoders import DECODE_PATHS, decoding_with

DECODING_MODULES = frozenset({"test_decode_errors", "test_framing", "test_golden"})


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    module = metafunc.module.__name__.rpartition(".")[2]
    if module in DECODING_MODULES and "decode_path" in metafunc.fixturenames:
        metafunc.parametrize("decode_path", DECODE_PATHS, indirect=True, scope="module")


@pytest.fixture(scope="module", autouse=True)
def decode_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """The decoders in use during this module ("default": unswapped, whichever is chosen)."""
    name: str = getattr(request, "param", "default")
    with decoding_with(name):
        yield name
