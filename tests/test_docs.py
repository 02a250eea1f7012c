"""Every file the README and the pages under docs/ point to is one a reader of the repository can
open (mkdocs --strict checks the links between pages of the site too)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _references(text: str) -> set[str]:
    """Markdown link targets in the repository, and names of Markdown files mentioned."""
    links = {t for t in re.findall(r"\]\(([^)#\s]+)", text) if "://" not in t}
    return links | set(re.findall(r"[\w./-]+\.md\b", text))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_what_a_doc_refers_to_exists(doc: Path) -> None:
    missing = [
        ref
        for ref in sorted(_references(doc.read_text()))
        if not (doc.parent / ref).exists() and not (ROOT / ref).exists()
    ]
    assert missing == []
