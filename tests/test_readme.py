"""The README's Python snippets run as written and print what their comments say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).parents[1] / "README.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def _promised_output(snippet: str) -> list[str]:
    """The comment after each print(), less a trailing '...': what that line must start with."""
    return [
        comment.removesuffix("...").strip()
        for comment in re.findall(r"print\(.*\)\s+# (.*)", snippet)
    ]


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
def test_readme_snippet_runs(snippet: str, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(snippet, str(README), "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    promised = _promised_output(snippet)
    assert len(printed) == len(promised)
    for line, start in zip(printed, promised, strict=True):
        assert line.startswith(start)
