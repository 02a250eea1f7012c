"""Generated trees are written exactly: changed files rewritten, stale ones removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.output import emit

pytestmark = pytest.mark.codegen


def test_check_reports_and_write_mends(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "stale.json").write_text("{}\n")
    (tmp_path / "same.json").write_text("1\n")
    (tmp_path / "changed.json").write_text("2\n")
    wanted = {"same.json": "1\n", "changed.json": "3\n", "new/added.json": "4\n"}

    problems = emit(tmp_path, wanted, suffix=".json", check=True)
    assert sorted(problems) == sorted(
        [
            f"differs: {tmp_path / 'changed.json'}",
            f"missing: {tmp_path / 'new/added.json'}",
            f"stale: {tmp_path / 'old/stale.json'}",
        ]
    )
    assert (tmp_path / "old" / "stale.json").exists()

    emit(tmp_path, wanted, suffix=".json", check=False)
    assert emit(tmp_path, wanted, suffix=".json", check=True) == []
    assert not (tmp_path / "old").exists()
    assert (tmp_path / "changed.json").read_text() == "3\n"


def test_python_output_is_formatted(tmp_path: Path) -> None:
    emit(tmp_path, {"m.py": "x=( 1,\n2)\n"}, suffix=".py", check=False)
    assert (tmp_path / "m.py").read_text() == "x = (1, 2)\n"
