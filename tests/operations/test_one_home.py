"""Each wire operation has one home: every generated module of ListOffsets, OffsetFetch,
OffsetCommit, Fetch and the consumer protocol's subscription and assignment is imported by
exactly one hand-written module of kafkawire (in :mod:`kafkawire.operations`), so a second
copy of an operation cannot grow back unnoticed. The fake cluster (:mod:`kafkawire.testing.fake`)
is the other side of the wire, the broker: it reads these requests and answers them, and is
not counted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import kafkawire

SOURCE = Path(kafkawire.__file__).parent
NOT_CLIENTS = (SOURCE / "messages", SOURCE / "testing" / "fake")  # generated; the broker side
SHARED = (
    "list_offsets",
    "offset_fetch",
    "offset_commit",
    "fetch",
    "consumer_protocol_subscription",
    "consumer_protocol_assignment",
)


def imports(message: str, text: str) -> bool:
    """Whether ``text`` imports ``kafkawire.messages.<message>`` in any form: ``from
    kafkawire.messages.<message>[.vN] import ...``, ``import kafkawire.messages.<message>...``,
    ``from kafkawire.messages import <message>``, or its dotted name in a string (importlib)."""
    dotted = rf"kafkawire\.messages\.{message}\b"
    from_package = (
        rf"from\s+kafkawire\.messages\s+import\s+"
        rf"(\([^)]*\b{message}\b[^)]*\)|[^\n]*\b{message}\b)"
    )
    return bool(re.search(dotted, text) or re.search(from_package, text))


def importers(message: str) -> set[str]:
    """The hand-written client modules of kafkawire that import
    ``kafkawire.messages.<message>``."""
    return {
        str(path.relative_to(SOURCE))
        for path in SOURCE.rglob("*.py")
        if not any(place in path.parents for place in NOT_CLIENTS)
        and imports(message, path.read_text(encoding="utf-8"))
    }


@pytest.mark.parametrize("message", SHARED)
def test_each_generated_module_has_one_importer(message: str) -> None:
    found = importers(message)
    assert len(found) == 1, f"kafkawire.messages.{message} is imported by {sorted(found)}"
    assert next(iter(found)).startswith("operations/")


def test_the_check_sees_every_form_of_import(tmp_path: Path) -> None:
    forms = [
        "from kafkawire.messages.fetch import v18 as fetch_latest",
        "import kafkawire.messages.fetch.v4",
        "from kafkawire.messages import APIS, fetch",
        "from kafkawire.messages import (\n    fetch,\n)",
        'importlib.import_module("kafkawire.messages.fetch.v3")',
    ]
    assert [form for form in forms if not imports("fetch", form)] == []
    assert not imports("fetch", "from kafkawire.messages.fetch_snapshot import v1")
