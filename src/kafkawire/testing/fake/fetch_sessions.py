"""Fetch sessions (KIP-227), as Kafka's broker keeps them (``FetchSession.scala``).

Each broker has its own cache. A Fetch's (session id, epoch) picks one of four contexts:

- epoch -1: *sessionless*: answer every partition asked; a session id given is closed.
- epoch 0: *full*: answer every partition asked and open a new session holding them (id 0 in
  the answer when the cache has no free slot); a session id given is closed first.
- epoch > 0: *incremental*, on session ``id`` (FETCH_SESSION_ID_NOT_FOUND if unknown),
  whose epoch must be the one expected (INVALID_FETCH_SESSION_EPOCH if not), by topic ids iff
  the request is v13+ (FETCH_SESSION_TOPIC_ID_ERROR if not). The partitions in the request are
  added or updated, the forgotten ones removed, and the epoch moves on (after 2^31 - 1 to 1).
  A session left with no partitions is closed and the fetch answered as sessionless.
- The answer to an incremental fetch names only the partitions with news: records, an error,
  a diverging epoch, or a high watermark, last stable offset or log start offset other than
  last answered. Partitions that returned records move to the end of the session, so that a
  byte limit is shared out in turn.

The session keeps each partition's fetch offset as last sent: a partition not named again is
fetched at that offset again (the client must re-send it when its position moves).

Slots: a new session takes a free slot, or the slot of a session unused for the eviction time;
otherwise none is opened (Kafka also weighs sessions by size; the fake does not).
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .codes import Error

__all__ = [
    "CachedPartition",
    "FetchContext",
    "FetchSession",
    "FetchSessionCache",
    "PartitionKey",
    "SessionKind",
]

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_MAX_EPOCH = 2**31 - 1

PartitionKey = tuple[uuid.UUID | str, int]  # (topic id from v13, else topic name; partition)


def next_epoch(epoch: int) -> int:
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _MAX_EPOCH else epoch + 1


@dataclass
class CachedPartition:
    """One partition of a fetch: what was asked, and (in a session) what was last answered."""

    topic: uuid.UUID | str
    partition: int
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1

    @property
    def key(self) -> PartitionKey:
        return self.topic, self.partition

    def update_request(self, asked: CachedPartition) -> None:
        self.fetch_offset = asked.fetch_offset
        self.max_bytes = asked.max_bytes
        self.current_leader_epoch = asked.current_leader_epoch
        self.last_fetched_epoch = asked.last_fetched_epoch


@dataclass(frozen=True, slots=True)
class Answered:
    """What the read of one partition found, as far as a session compares it."""

    error: int
    has_records: bool
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    diverging: bool


@dataclass
class FetchSession:
    session_id: int
    epoch: int  # the epoch the next incremental fetch must carry
    uses_topic_ids: bool
    last_used: float
    partitions: dict[PartitionKey, CachedPartition] = field(default_factory=dict)


class SessionKind(enum.Enum):
    SESSIONLESS = "sessionless"
    FULL = "full"
    INCREMENTAL = "incremental"


@dataclass
class FetchContext:
    """How one Fetch is answered: which partitions to read, and which of them to name."""

    kind: SessionKind
    partitions: list[CachedPartition]
    session: FetchSession | None = None
    error: Error = Error.NONE

    def answer(
        self, cache: FetchSessionCache, answered: list[Answered], *, uses_topic_ids: bool
    ) -> tuple[int, list[int]]:
        """(session id for the answer, indexes of ``partitions`` to name in it)."""
        if self.kind is SessionKind.SESSIONLESS:
            return INVALID_SESSION_ID, list(range(len(self.partitions)))
        if self.kind is SessionKind.FULL:
            for cached, found in zip(self.partitions, answered, strict=True):
                _remember(cached, found)
            session_id = cache.open(self.partitions, uses_topic_ids)
            return session_id, list(range(len(self.partitions)))
        assert self.session is not None
        named = []
        for index, (cached, found) in enumerate(zip(self.partitions, answered, strict=True)):
            if _has_news(cached, found):
                named.append(index)
                _remember(cached, found)
                if found.has_records:  # to the back of the line
                    del self.session.partitions[cached.key]
                    self.session.partitions[cached.key] = cached
        return self.session.session_id, named


def _has_news(cached: CachedPartition, found: Answered) -> bool:
    return (
        found.has_records
        or found.error != Error.NONE
        or found.diverging
        or cached.high_watermark != found.high_watermark
        or cached.last_stable_offset != found.last_stable_offset
        or cached.log_start_offset != found.log_start_offset
    )


def _remember(cached: CachedPartition, found: Answered) -> None:
    # After an error the high watermark is forgotten (Kafka sets -1), so the partition is
    # named again once the error clears.
    cached.high_watermark = -1 if found.error != Error.NONE else found.high_watermark
    cached.last_stable_offset = found.last_stable_offset
    cached.log_start_offset = found.log_start_offset


class FetchSessionCache:
    def __init__(self, slots: int, eviction_ms: int, clock: Callable[[], float]) -> None:
        self.slots = slots
        self.eviction_s = eviction_ms / 1000
        self.clock = clock
        self.sessions: dict[int, FetchSession] = {}
        self._last_id = 0

    def open(self, partitions: Iterable[CachedPartition], uses_topic_ids: bool) -> int:
        """A new session holding ``partitions``: its id, or 0 if no slot is free."""
        now = self.clock()
        if len(self.sessions) >= self.slots:
            idle = min(self.sessions.values(), key=lambda s: s.last_used, default=None)
            if idle is None or now - idle.last_used < self.eviction_s:
                return INVALID_SESSION_ID
            del self.sessions[idle.session_id]
        self._last_id = self._last_id % _MAX_EPOCH + 1
        while self._last_id in self.sessions:
            self._last_id = self._last_id % _MAX_EPOCH + 1
        session = FetchSession(self._last_id, next_epoch(INITIAL_EPOCH), uses_topic_ids, now)
        session.partitions = {p.key: p for p in partitions}
        self.sessions[session.session_id] = session
        return session.session_id

    def context(
        self,
        session_id: int,
        epoch: int,
        asked: list[CachedPartition],
        forgotten: Iterable[PartitionKey],
        *,
        uses_topic_ids: bool,
    ) -> FetchContext:
        """The context a Fetch with this session id and epoch is answered in (module rules)."""
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            self.sessions.pop(session_id, None)
            kind = SessionKind.SESSIONLESS if epoch == FINAL_EPOCH else SessionKind.FULL
            return FetchContext(kind, asked)
        session = self.sessions.get(session_id)
        if session is None:
            return FetchContext(SessionKind.SESSIONLESS, [], error=Error.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return FetchContext(
                SessionKind.SESSIONLESS, [], error=Error.INVALID_FETCH_SESSION_EPOCH
            )
        if session.uses_topic_ids != uses_topic_ids:
            return FetchContext(
                SessionKind.SESSIONLESS, [], error=Error.FETCH_SESSION_TOPIC_ID_ERROR
            )
        for cached in asked:
            existing = session.partitions.get(cached.key)
            if existing is None:
                session.partitions[cached.key] = cached
            else:
                existing.update_request(cached)
        for key in forgotten:
            session.partitions.pop(key, None)
        if not session.partitions:
            del self.sessions[session_id]
            return FetchContext(SessionKind.SESSIONLESS, asked)
        session.epoch = next_epoch(session.epoch)
        session.last_used = self.clock()
        return FetchContext(SessionKind.INCREMENTAL, list(session.partitions.values()), session)
