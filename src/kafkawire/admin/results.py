"""Per-item results: what a call about many topics, groups or partitions hands back.

Kafka answers each item of a batched admin request with its own error code, so one bad topic
must not hide what happened to the others. :class:`ItemResults` is a read-only mapping from
each item asked about to its result; looking up an item that failed raises that item's error,
and :attr:`ItemResults.errors` lists every failure without raising.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

from kafkawire.errors import KafkawireError, error_for_code
from kafkawire.operations.fanout import unanswered

__all__ = ["AdminItemsError", "ItemResults", "error_of", "unanswered"]

K = TypeVar("K")
V = TypeVar("V")


class AdminItemsError(KafkawireError):
    """Some items of an admin call failed; ``errors`` maps each to its own error."""

    def __init__(self, errors: Mapping[Any, KafkawireError]) -> None:
        listed = "; ".join(f"{key}: {error}" for key, error in errors.items())
        super().__init__(f"{len(errors)} failed: {listed}")
        self.errors = dict(errors)


class ItemResults(Mapping[K, V], Generic[K, V]):
    """Each item's result, or its error (raised when the item is looked up)."""

    def __init__(self, results: Mapping[K, V | KafkawireError]) -> None:
        self._results = dict(results)

    def __getitem__(self, key: K) -> V:
        result = self._results[key]
        if isinstance(result, KafkawireError):
            raise result
        return result

    def __iter__(self) -> Iterator[K]:
        return iter(self._results)

    def __len__(self) -> int:
        return len(self._results)

    def __repr__(self) -> str:
        return f"ItemResults({self._results!r})"

    @property
    def errors(self) -> dict[K, KafkawireError]:
        """The items that failed and why."""
        return {k: r for k, r in self._results.items() if isinstance(r, KafkawireError)}

    @property
    def succeeded(self) -> dict[K, V]:
        """The items that succeeded and their results."""
        return {k: r for k, r in self._results.items() if not isinstance(r, KafkawireError)}

    def outcome(self, key: K) -> V | KafkawireError:
        """``key``'s result or error, without raising."""
        return self._results[key]

    def raise_for_errors(self) -> dict[K, V]:
        """Every result, or :class:`AdminItemsError` naming every item that failed."""
        errors = self.errors
        if errors:
            raise AdminItemsError(errors)
        return self.succeeded


def error_of(answer: Any) -> KafkawireError | None:
    """The error an answer's ``error_code`` (and ``error_message``, where it has one) names."""
    return error_for_code(answer.error_code, getattr(answer, "error_message", None))
