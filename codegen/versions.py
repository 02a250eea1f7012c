"""Kafka version ranges: ``"0+"``, ``"3-7"``, ``"5"`` and ``"none"``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

# Open ranges ("3+") stop here; no Kafka API is anywhere near this version.
_OPEN_END = 32767


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive range of versions; empty when ``low > high``."""

    low: int
    high: int

    @classmethod
    def parse(cls, text: str | None, default: Versions | None = None) -> Versions:
        if text is None:
            if default is None:
                raise ValueError("missing version range")
            return default
        text = text.strip()
        if text == "none":
            return NONE
        if text.endswith("+"):
            return cls(int(text[:-1]), _OPEN_END)
        low, sep, high = text.partition("-")
        return cls(int(low), int(high) if sep else int(low))

    @classmethod
    def of(cls, versions: set[int]) -> Versions:
        """The range holding exactly ``versions``; raises if they are not contiguous."""
        if not versions:
            return NONE
        low, high = min(versions), max(versions)
        if len(versions) != high - low + 1:
            raise ValueError(f"versions {sorted(versions)} are not contiguous")
        return cls(low, high)

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.low, self.high + 1))

    def as_set(self) -> set[int]:
        return set(range(self.low, self.high + 1)) if self.low <= self.high else set()

    def __str__(self) -> str:
        if self.low > self.high:
            return "none"
        if self.high == _OPEN_END:
            return f"{self.low}+"
        if self.low == self.high:
            return str(self.low)
        return f"{self.low}-{self.high}"


NONE = Versions(0, -1)
