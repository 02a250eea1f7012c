"""Writing a generated tree: formatted, byte-stable, stale files removed, or only checked."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path


def _formatted(files: dict[str, str]) -> dict[str, str]:
    """Run ruff's formatter over the Python files, so generated code meets the repo's style."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "ruff",
                "format",
                "--quiet",
                "--no-cache",
                "--line-length",
                "100",
                tmp,
            ],
            check=True,
        )
        return {rel: (root / rel).read_text(encoding="utf-8") for rel in files}


def emit(out_dir: Path, files: dict[str, str], *, suffix: str, check: bool) -> list[str]:
    """Make ``out_dir`` hold exactly ``files`` (paths relative to it) among its ``suffix`` files.

    With ``check`` nothing is written; the differences are returned instead. Without it the
    differences are mended (changed files written, stale ones deleted) and returned as well.
    """
    if suffix == ".py":
        files = _formatted(files)
    existing = (
        {str(p.relative_to(out_dir)) for p in out_dir.rglob(f"*{suffix}")}
        if out_dir.exists()
        else set()
    )
    problems: list[str] = []
    for rel in sorted(files):
        path = out_dir / rel
        if rel not in existing:
            problems.append(f"missing: {path}")
        elif path.read_text(encoding="utf-8") != files[rel]:
            problems.append(f"differs: {path}")
        else:
            continue
        if not check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(files[rel], encoding="utf-8")
    for rel in sorted(existing - set(files)):
        problems.append(f"stale: {out_dir / rel}")
        if not check:
            (out_dir / rel).unlink()
    if not check:
        _remove_empty_dirs(out_dir)
    return problems


def _remove_empty_dirs(root: Path) -> None:
    for path in sorted(root.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if path.is_dir() and not any(p for p in path.iterdir() if p.name != "__pycache__"):
            for cache in path.glob("__pycache__"):
                for f in cache.iterdir():
                    f.unlink()
                cache.rmdir()
            path.rmdir()
