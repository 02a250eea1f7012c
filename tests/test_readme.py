"""The Python snippets of the README and of the documentation pages under docs/ run as written
and print what their comments say.

A snippet that defines ``test_*`` functions has them called, as pytest would. Blocks marked
``py`` rather than ``python`` are shown, not run (they need a secured cluster or Spark).
"""

from __future__ import annotations

import linecache
import re
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
SNIPPETS = [
    (f"{page.relative_to(ROOT)} snippet {i}", snippet)
    for page in PAGES
    for i, snippet in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S))
]


def _promised_output(snippet: str) -> list[str]:
    """The comment after each print(), less a trailing '...': what that line must start with."""
    return [
        comment.removesuffix("...").strip()
        for comment in re.findall(r"print\(.*\)\s+# (.*)", snippet)
    ]


def test_readme_opens_with_the_two_commands_then_says_what_kafkawire_is() -> None:
    text = README.read_text()
    opening = re.search(r"```sh\n(.*?)```", text, flags=re.S)
    assert opening is not None
    commands = [line.split("#")[0].strip() for line in opening[1].splitlines()]
    assert commands == ["make demo", "make test && make test-py313"]
    assert text[: opening.start()].strip() == "# kafkawire"
    # What the project is comes before any word about CI.
    assert text.index("asyncio Kafka client") < re.search(r"\bCI\b", text).start()  # type: ignore[union-attr]


@pytest.mark.parametrize(("name", "snippet"), SNIPPETS, ids=[name for name, _ in SNIPPETS])
def test_snippet_runs(name: str, snippet: str, capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, object] = {}
    # The snippet's own name and source, so that what reads a function's source (hypothesis
    # does, to seed its examples) reads the snippet, not the page at the snippet's line 1.
    filename = f"<{name}>"
    linecache.cache[filename] = (len(snippet), None, snippet.splitlines(keepends=True), filename)
    exec(compile(snippet, filename, "exec"), namespace)
    for key, test in namespace.items():
        if key.startswith("test_") and callable(test):
            # No deadline: the first example also builds the message's codec.
            settings(deadline=None)(test)()
    printed = capsys.readouterr().out.splitlines()
    promised = _promised_output(snippet)
    assert len(printed) == len(promised)
    for line, start in zip(printed, promised, strict=True):
        assert line.startswith(start)
