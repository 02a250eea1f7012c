"""Runs the record-decoding tests against each v2 record loop this build has.

The modules in ``DECODING_MODULES`` run once per loop: the pure-Python one always, and the
compiled one (``kafkawire.records._accel``) when it was built and not disabled with
``KAFKAWIRE_NO_EXTENSIONS``. The ``decode_path`` fixture swaps the loop the batch decoder
calls; it is module-scoped, so hypothesis tests may use it, and the swap is undone after each
module.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafkawire.records import batch_v2, v2_records

DECODING_MODULES = frozenset(
    {
        "test_builder",
        "test_crosscheck",
        "test_errors",
        "test_golden",
        "test_messages",
        "test_model",
        "test_roundtrip",
        "test_transactions",
    }
)
# Tests in those modules that never decode v2 records with kafkawire (they run once).
NOT_DECODING = frozenset({"test_peer_reads_our_batches"})
DECODE_PATHS: dict[str, v2_records.ReadRecordsFunction] = {"pure": v2_records.read_records_pure}
if v2_records.ACCELERATED:
    DECODE_PATHS["accelerated"] = v2_records.read_records


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    module = metafunc.module.__name__.rpartition(".")[2]
    if (
        module in DECODING_MODULES
        and metafunc.function.__name__ not in NOT_DECODING
        and "decode_path" in metafunc.fixturenames
    ):
        metafunc.parametrize("decode_path", list(DECODE_PATHS), indirect=True, scope="module")


@pytest.fixture(scope="module", autouse=True)
def decode_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """The name of the loop the batch decoder calls during this module ("default": unswapped)."""
    name: str | None = getattr(request, "param", None)
    if name is None:
        yield "default"
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(batch_v2, "read_records", DECODE_PATHS[name])
        yield name
