"""Share sessions, as Kafka's broker keeps them (``ShareSessionCache``,
``SharePartitionManager.newContext`` and ``acknowledgeSessionUpdate``).

Each broker has its own cache, one session per (group, member). A request's epoch says what
it does:

- ShareFetch at epoch 0 opens a session with the partitions it names (a session the member
  had is dropped first, its records kept). Acknowledgements in it are INVALID_REQUEST
  (KAFKA-18198/KAFKA-19485: there is no session they could belong to). With the cache full
  (group.share.max.share.sessions) it is SHARE_SESSION_LIMIT_REACHED.
- A later epoch must be the session's next one (SHARE_SESSION_NOT_FOUND without a session,
  INVALID_SHARE_SESSION_EPOCH otherwise); a ShareFetch adds the partitions it names and drops
  the ones it forgets, and the epoch moves on (after 2^31 - 1 to 1).
- Epoch -1 closes the session (SHARE_SESSION_NOT_FOUND without one), after the request's
  acknowledgements; the member's acquired records of the session's partitions are released.
- ShareAcknowledge at epoch 0 is INVALID_SHARE_SESSION_EPOCH.

A session belongs to the connection that opened it: when that connection closes, the session
goes and its records are released (Kafka's ``ConnectionDisconnectListener``, from 4.1). A
closed connection that opened no session changes nothing.

Partitions in a session are answered in full at epoch 0; later, a partition is named when it
has records or an error, when it was just added, and again after an error (Kafka's
``CachedSharePartition.maybeUpdateResponseData``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from kafkawire.testing.fake.codes import Error

__all__ = ["Partition", "SessionKey", "ShareSession", "ShareSessionCache", "next_epoch"]

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_MAX_EPOCH = 2**31 - 1

SessionKey = tuple[str, str]  # (group id, member id)
Partition = tuple[uuid.UUID, int]  # (topic id, partition)


def next_epoch(epoch: int) -> int:
    return 1 if epoch == _MAX_EPOCH else epoch + 1


@dataclass
class ShareSession:
    key: SessionKey
    epoch: int  # the epoch the next request must carry
    connection_id: int
    # Each partition and whether the next answer must name it (new, or after an error).
    partitions: dict[Partition, bool] = field(default_factory=dict)

    def add(self, partitions: Iterable[Partition]) -> None:
        """Partitions a later request adds: its answer names them (Kafka's requiresUpdate)."""
        for partition in partitions:
            self.partitions.setdefault(partition, True)

    def named(self, partition: Partition, *, has_records: bool, error: bool) -> bool:
        """Whether an answer names ``partition`` (module rules); remembers the answer."""
        must = has_records or error or self.partitions.get(partition, False)
        self.partitions[partition] = error
        return must


class ShareSessionCache:
    """One broker's share sessions."""

    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self.sessions: dict[SessionKey, ShareSession] = {}
        self._by_connection: dict[int, SessionKey] = {}

    def open(
        self, key: SessionKey, partitions: Iterable[Partition], connection_id: int
    ) -> ShareSession | Error:
        """A new session for ``key`` (replacing its old one), or why there is none."""
        self.sessions.pop(key, None)
        if len(self.sessions) >= self.max_sessions:
            return Error.SHARE_SESSION_LIMIT_REACHED
        # The opening answer names them all: none waits to be named again.
        session = ShareSession(
            key, next_epoch(INITIAL_EPOCH), connection_id, dict.fromkeys(partitions, False)
        )
        self.sessions[key] = session
        self._by_connection[connection_id] = key
        return session

    def current(self, key: SessionKey, epoch: int) -> ShareSession | Error:
        """The session a request at ``epoch`` (not 0) continues or closes."""
        session = self.sessions.get(key)
        if session is None:
            return Error.SHARE_SESSION_NOT_FOUND
        if epoch not in (FINAL_EPOCH, session.epoch):
            return Error.INVALID_SHARE_SESSION_EPOCH
        return session

    def advance(self, session: ShareSession) -> None:
        session.epoch = next_epoch(session.epoch)

    def close(self, key: SessionKey) -> ShareSession | None:
        return self.sessions.pop(key, None)

    def disconnected(self, connection_id: int) -> ShareSession | None:
        """The session the closed connection had opened, now gone (if it still was there)."""
        key = self._by_connection.pop(connection_id, None)
        session = self.sessions.get(key) if key is not None else None
        if session is None or session.connection_id != connection_id:
            return None
        return self.sessions.pop(session.key)
