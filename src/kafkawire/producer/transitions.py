"""A state machine's transition table: which state may follow which.

The producer's states are enums, each with its table next to it (:mod:`.transactions`,
:mod:`.sequences`), as h11's ``_state.py`` and Kafka's ``TransactionManager.State`` keep
theirs. A move the table does not hold is a bug in kafkawire (:class:`IllegalTransitionError`);
a call the application may not make in the state it finds is refused before anything moves,
by the call, with an error of its own that says why.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Set
from typing import Generic, TypeVar

__all__ = ["IllegalTransitionError", "Transitions"]

S = TypeVar("S", bound=enum.Enum)


class IllegalTransitionError(RuntimeError):
    """A move its table does not allow: a bug in kafkawire, never an answer to the
    application's input (a background task meeting it fails the producer)."""


class Transitions(Generic[S]):
    """The moves of the state machine ``name``: for each state, the states it may go to."""

    def __init__(self, name: str, moves: Mapping[S, Set[S]]) -> None:
        self.name = name
        self._moves = {source: frozenset(targets) for source, targets in moves.items()}

    def allows(self, source: S, target: S) -> bool:
        return target in self._moves.get(source, frozenset())

    def check(self, source: S, target: S) -> S:
        """``target``, if the table allows the move from ``source``; else the error."""
        if not self.allows(source, target):
            raise IllegalTransitionError(
                f"{self.name}: no move from {source.name} to {target.name} (a bug in kafkawire)"
            )
        return target

    def __iter__(self) -> Iterator[tuple[S, S]]:
        """Every allowed move, as ``(source, target)``."""
        for source, targets in self._moves.items():
            for target in targets:
                yield source, target
