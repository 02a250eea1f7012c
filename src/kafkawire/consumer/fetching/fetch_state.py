"""A partition's fetch state, after Kafka's Java ``SubscriptionState.FetchStates``.

Where a partition stands is one of four states; the position (an offset, and the leader epoch
of the record before it) is known in two of them. Pausing and revoking are apart: they stop
the fetching and the handing out of a partition in any state, and leave its state as it is.

==================  =========================================================  ========
state               what it waits for                                          position
==================  =========================================================  ========
INITIALIZING        a position: the group's committed offset, or a seek        no
AWAIT_RESET         the offset its reset policy names (ListOffsets)            no
FETCHING            nothing: it is fetched from its position                   yes
AWAIT_VALIDATION    the leader's word that its log still reaches the           yes
                    position (KIP-320), after the leader or its epoch changed
==================  =========================================================  ========

The moves are Java's, and one more: a reset whose policy is ``"none"`` is refused (the
application hears :class:`~kafkawire.consumer.NoOffsetForPartitionError`), and the partition
goes back to INITIALIZING until it is seeked. Java leaves such a partition in INITIALIZING
and raises anew at every poll; kafkawire raises once.
"""

from __future__ import annotations

from enum import Enum

from kafkawire.cluster.transitions import Transitions

__all__ = ["FETCH_MOVES", "FetchState"]


class FetchState(Enum):
    INITIALIZING = "initializing"
    AWAIT_RESET = "awaiting a reset"
    FETCHING = "fetching"
    AWAIT_VALIDATION = "awaiting validation"

    @property
    def has_position(self) -> bool:
        return self in (FetchState.FETCHING, FetchState.AWAIT_VALIDATION)


_S = FetchState

FETCH_MOVES = Transitions(
    "a partition's fetch state",
    {
        # committed offset found or seeked; no committed offset, or a reset asked for
        _S.INITIALIZING: frozenset({_S.FETCHING, _S.AWAIT_RESET}),
        # the offset found, or seeked; asked again; refused (policy "none")
        _S.AWAIT_RESET: frozenset({_S.FETCHING, _S.AWAIT_RESET, _S.INITIALIZING}),
        # seeked; out of range or seek_to_*; the leader changed
        _S.FETCHING: frozenset({_S.FETCHING, _S.AWAIT_RESET, _S.AWAIT_VALIDATION}),
        # validated (or moved back to where the logs part), or seeked; a leader that knows
        # nothing of the epoch, or seek_to_*; another leader change
        _S.AWAIT_VALIDATION: frozenset({_S.FETCHING, _S.AWAIT_RESET, _S.AWAIT_VALIDATION}),
    },
)
"""Each fetch state, and the states it may move to."""
