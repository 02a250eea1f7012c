"""The records layer is sans-IO and sits beside the protocol layer, importing neither it nor I/O.

import-linter holds the same rule for the whole project; this keeps it next to the code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kafkawire.records

FORBIDDEN = ("asyncio", "socket", "ssl", "selectors", "kafkawire.protocol", "kafkawire.net")
MODULES = sorted(Path(kafkawire.records.__file__).parent.glob("*.py"))


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_io_and_no_protocol_imports(path: Path) -> None:
    bad = {
        name
        for name in _imports(path)
        if any(name == f or name.startswith(f"{f}.") for f in FORBIDDEN)
    }
    assert not bad


def test_the_public_surface_is_what_all_says() -> None:
    exported = set(kafkawire.records.__all__)
    assert all(not name.startswith("_") for name in exported)
    assert all(hasattr(kafkawire.records, name) for name in exported)
