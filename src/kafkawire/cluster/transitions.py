"""States as values: an enum, and a table of the moves each state allows (as h11's
``_state.py`` and Kafka's ``TransactionManager.State`` keep them).

Every client keeps its states this way (the consumer's group membership and each partition's
fetch state, the producer's transactions and producer id), each table next to its enum. A move
the table does not hold is a bug in kafkawire (:class:`IllegalTransitionError`), never
something an application or a broker did, so it is no ``KafkawireError``: a background task
meeting it reports it to its client like any error it does not expect. A call the application
may not make in the state it finds is refused before anything moves, by the call, with an
error of its own that says why.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping, Set
from typing import Generic, TypeVar

__all__ = ["IllegalTransitionError", "Transitions"]

S = TypeVar("S", bound=enum.Enum)


class IllegalTransitionError(RuntimeError):
    """A move its table does not allow: a bug in kafkawire, never an answer to the
    application's input."""


class Transitions(Generic[S]):
    """The moves of the state machine ``name``: for each state, the states it may go to."""

    def __init__(self, name: str, moves: Mapping[S, Set[S]]) -> None:
        self.name = name
        self._moves = {source: frozenset(targets) for source, targets in moves.items()}

    def allows(self, source: S, target: S) -> bool:
        return target in self._moves.get(source, frozenset())

    def targets(self, source: S) -> frozenset[S]:
        """The states ``source`` may move to."""
        return self._moves.get(source, frozenset())

    def check(self, source: S, target: S, whose: str | None = None) -> S:
        """``target``, if the table allows the move from ``source``; else the error, naming
        ``whose`` state it is (default: the machine's name)."""
        if not self.allows(source, target):
            allowed = ", ".join(sorted(s.name for s in self.targets(source))) or "nothing"
            raise IllegalTransitionError(
                f"{whose or self.name}: no move from {source.name} to {target.name} "
                f"(it may move to {allowed}; a bug in kafkawire)"
            )
        return target

    def __iter__(self) -> Iterator[tuple[S, S]]:
        """Every allowed move, as ``(source, target)``."""
        for source, targets in self._moves.items():
            for target in targets:
                yield source, target
