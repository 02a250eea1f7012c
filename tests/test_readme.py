"""The README's Python snippets run as written and print what their comments say.

A snippet that defines ``test_*`` functions has them called, as pytest would.
"""

from __future__ import annotations

import linecache
import re
from pathlib import Path

import pytest
from hypothesis import settings

README = Path(__file__).parents[1] / "README.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


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


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
def test_readme_snippet_runs(snippet: str, capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, object] = {}
    # The snippet's own name and source, so that what reads a function's source (hypothesis
    # does, to seed its examples) reads the snippet, not README.md at the snippet's line 1.
    name = f"<README.md snippet {SNIPPETS.index(snippet)}>"
    linecache.cache[name] = (len(snippet), None, snippet.splitlines(keepends=True), name)
    exec(compile(snippet, name, "exec"), namespace)
    for name, test in namespace.items():
        if name.startswith("test_") and callable(test):
            # No deadline: the first example also builds the message's codec.
            settings(deadline=None)(test)()
    printed = capsys.readouterr().out.splitlines()
    promised = _promised_output(snippet)
    assert len(printed) == len(promised)
    for line, start in zip(printed, promised, strict=True):
        assert line.startswith(start)
