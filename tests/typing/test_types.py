"""mypy sees real types for generated messages and the protocol API (see reveal.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mypy import api

SAMPLE = Path(__file__).with_name("reveal.py")
_OUTPUT = re.compile(r"^[^:]+:(\d+): (note|error): (.*)$")


def _expectations() -> dict[int, tuple[str, str]]:
    expected = {}
    for number, line in enumerate(SAMPLE.read_text().splitlines(), start=1):
        for kind in ("revealed", "error"):
            marker = f"# {kind}: "
            if marker in line:
                expected[number] = (kind, line.split(marker, 1)[1].strip())
    return expected


def test_revealed_types_and_rejected_calls() -> None:
    stdout, stderr, _ = api.run(
        [str(SAMPLE), "--strict", "--no-error-summary", "--hide-error-codes"]
    )
    assert not stderr
    seen: dict[int, list[str]] = {}
    for line in stdout.splitlines():
        match = _OUTPUT.match(line)
        assert match, f"unexpected mypy output: {line}"
        number, kind, text = int(match[1]), match[2], match[3]
        if kind == "note" and text.startswith("Revealed type is"):
            seen.setdefault(number, []).append("revealed: " + text.split('"')[1])
        elif kind == "error":
            seen.setdefault(number, []).append("error: " + text)
    for number, (kind, text) in _expectations().items():
        found = seen.pop(number, [])
        assert any(f.startswith(f"{kind}: {text}") for f in found), (number, text, found)
    assert not seen, f"mypy reported more than reveal.py expects: {seen}"


pytestmark = pytest.mark.typing
