"""Walking a state machine's transition table (a
:class:`~kafkawire.cluster.transitions.Transitions`): the checks the producer's state tests
share."""

from __future__ import annotations

import enum
import itertools
from typing import Any, TypeVar

import pytest

from kafkawire.cluster.transitions import IllegalTransitionError, Transitions

S = TypeVar("S", bound=enum.Enum)


def every_pair(states: type[S]) -> Any:
    """``pytest.mark.parametrize`` over every (source, target) pair of ``states``."""
    pairs = list(itertools.product(states, states))
    return pytest.mark.parametrize(("source", "target"), pairs, ids=lambda s: s.name)


def check_move(table: Transitions[S], machine: Any, source: S, target: S) -> None:
    """``machine``, in ``source``, moves to ``target`` if ``table`` allows it; else its move
    raises and it stays where it was."""
    assert machine.state is source
    if table.allows(source, target):
        machine._move(target)
        assert machine.state is target
    else:
        with pytest.raises(IllegalTransitionError, match=f"from {source.name} to {target.name}"):
            machine._move(target)
        assert machine.state is source
