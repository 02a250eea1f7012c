"""Where the accelerators are required, the compiled code is the code in use.

kafkawire falls back to its pure-Python code, quietly, when an extension did not build, so a
compile error on one Python version would otherwise pass every test, only slower. With
``KAFKAWIRE_REQUIRE_EXTENSIONS=1`` (``make test`` sets it where a C compiler is found,
``make test-py313`` always) every accelerator must be in use.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from types import ModuleType

import pytest

from kafkawire._extensions import DISABLE
from kafkawire.producer import batch, partitioner, send_path
from kafkawire.protocol import codec
from kafkawire.records import arrow_columns, v2_records

REQUIRED = os.environ.get("KAFKAWIRE_REQUIRE_EXTENSIONS") == "1"


def why_not_in_use(extension: str) -> str:
    if os.environ.get(DISABLE):
        return f"{DISABLE} is set"
    if importlib.util.find_spec(extension) is None:
        return "it was not built: the install's warning says why"
    return "it was built but refused to set up: a stale build? reinstall kafkawire"


@pytest.mark.skipif(not REQUIRED, reason="KAFKAWIRE_REQUIRE_EXTENSIONS=1 is not set")
@pytest.mark.parametrize(
    ("module", "extension"),
    [
        (codec, "kafkawire.protocol._accel"),
        (v2_records, "kafkawire.records._accel"),
        (partitioner, "kafkawire.producer._accel"),
        (send_path, "kafkawire.producer._accel"),
        (arrow_columns, "kafkawire.records._accel"),
    ],
    ids=["protocol", "records", "producer", "send-path", "arrow-columns"],
)
def test_the_compiled_accelerator_is_in_use(module: ModuleType, extension: str) -> None:
    assert module.ACCELERATED, (
        f"{extension} is not in use on Python {sys.version.split()[0]}: {why_not_in_use(extension)}"
    )


@pytest.mark.skipif(not REQUIRED, reason="KAFKAWIRE_REQUIRE_EXTENSIONS=1 is not set")
def test_the_producer_appends_through_the_compiled_step() -> None:
    assert batch.append_record is not batch.append_record_pure
