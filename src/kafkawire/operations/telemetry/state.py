"""Where a client's metrics push (KIP-714) stands: Java's ``ClientTelemetryState`` and its
moves, as a table (:data:`TELEMETRY_MOVES`).

======================================  ========================================================
SUBSCRIPTION_NEEDED                     a GetTelemetrySubscriptions is due (at the start; after
                                        a subscription that asks for no metrics, after an error)
SUBSCRIPTION_IN_PROGRESS                it is out
PUSH_NEEDED                             subscribed to metrics: a PushTelemetry is due at the
                                        push interval
PUSH_IN_PROGRESS                        it is out
TERMINATING_PUSH_NEEDED                 the client is closing: the last push is due now
TERMINATING_PUSH_IN_PROGRESS            it is out
TERMINATED                              nothing more is sent
======================================  ========================================================
"""

from __future__ import annotations

from enum import Enum

from kafkawire.cluster.transitions import Transitions

__all__ = ["TELEMETRY_MOVES", "TelemetryState"]


class TelemetryState(Enum):
    SUBSCRIPTION_NEEDED = "subscription needed"
    SUBSCRIPTION_IN_PROGRESS = "subscription in progress"
    PUSH_NEEDED = "push needed"
    PUSH_IN_PROGRESS = "push in progress"
    TERMINATING_PUSH_NEEDED = "terminating push needed"
    TERMINATING_PUSH_IN_PROGRESS = "terminating push in progress"
    TERMINATED = "terminated"

    @property
    def terminating(self) -> bool:
        return self in _TERMINATING


_S = TelemetryState
_TERMINATING = frozenset(
    {_S.TERMINATING_PUSH_NEEDED, _S.TERMINATING_PUSH_IN_PROGRESS, _S.TERMINATED}
)

TELEMETRY_MOVES = Transitions(
    "the metrics push (KIP-714)",
    {
        _S.SUBSCRIPTION_NEEDED: {_S.SUBSCRIPTION_IN_PROGRESS, _S.TERMINATED},
        # subscribed (to metrics, or to none: ask again later), failed, or closing meanwhile
        _S.SUBSCRIPTION_IN_PROGRESS: {
            _S.PUSH_NEEDED,
            _S.SUBSCRIPTION_NEEDED,
            _S.TERMINATING_PUSH_NEEDED,
            _S.TERMINATED,
        },
        _S.PUSH_NEEDED: {
            _S.PUSH_IN_PROGRESS,
            _S.SUBSCRIPTION_NEEDED,
            _S.TERMINATING_PUSH_NEEDED,
            _S.TERMINATED,
        },
        # pushed; refused (subscribe again); closing meanwhile
        _S.PUSH_IN_PROGRESS: {
            _S.PUSH_NEEDED,
            _S.SUBSCRIPTION_NEEDED,
            _S.TERMINATING_PUSH_NEEDED,
            _S.TERMINATED,
        },
        _S.TERMINATING_PUSH_NEEDED: {_S.TERMINATING_PUSH_IN_PROGRESS, _S.TERMINATED},
        _S.TERMINATING_PUSH_IN_PROGRESS: {_S.TERMINATED},
        _S.TERMINATED: set(),
    },
)
"""Java's ``ClientTelemetryState.VALID_NEXT_STATES``."""
