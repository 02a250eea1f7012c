"""Writing Python source line by line, with the constants it refers to."""

from __future__ import annotations

from typing import Any


class Source:
    """Lines of Python with indentation, and the constants they refer to."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.lines: list[str] = []
        self.depth = 0
        self.namespace = namespace

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def const(self, value: Any, hint: str = "c") -> str:
        name = f"_{hint}{len(self.namespace)}"
        self.namespace[name] = value
        return name

    def indent(self) -> Indent:
        return Indent(self)


class Indent:
    def __init__(self, src: Source) -> None:
        self.src = src

    def __enter__(self) -> None:
        self.src.depth += 1

    def __exit__(self, *exc: object) -> None:
        self.src.depth -= 1
