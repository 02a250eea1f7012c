"""States as values: an enum, and a table of the moves each state allows (as h11's
``_state.py`` and aiokafka's ``TransactionState`` keep them).

A move the table does not hold raises :class:`IllegalTransitionError`: a bug in kafkawire,
never something an application or a broker did, so it is no :class:`KafkawireError`. In a
background task it reaches the application as a ``BackgroundTaskError``, like any error a task
does not expect.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import TypeVar

__all__ = ["IllegalTransitionError", "Moves", "check_move"]

S = TypeVar("S", bound=Enum)

Moves = Mapping[S, frozenset[S]]
"""Each state, and the states it may move to."""


class IllegalTransitionError(RuntimeError):
    """A move its state's table does not allow (a bug in kafkawire)."""


def check_move(moves: Moves[S], old: S, new: S, what: str) -> None:
    """Raise :class:`IllegalTransitionError` unless ``moves`` lets ``old`` move to ``new``;
    ``what`` names whose state it is, for the message."""
    if new not in moves[old]:
        raise IllegalTransitionError(
            f"{what}: no move from {old.name} to {new.name} (it may move to "
            f"{', '.join(sorted(s.name for s in moves[old])) or 'nothing'})"
        )
