"""Fetch sessions (KIP-227): what one broker remembers of this consumer's fetches, kept on our
side so each Fetch sends only what changed.

Rules this module keeps (the broker's side is Kafka's ``FetchManager``; ours follows the Java
client's ``FetchSessionHandler``):

- Session id 0 means no session. A *full* fetch (epoch 0) names every partition wanted and asks
  the broker for a session; a broker that answers session id 0 keeps none (Tansu 0.6.0 and
  librdkafka's mock cluster), and then every fetch is full, as without sessions.
- Once the broker answers an id, the next fetches are *incremental*: that id, the epoch after
  the last one (1, 2, ... wrapping to 1 after 2**31 - 1), only the partitions added or changed
  (fetch offset, leader epoch, max bytes), and the partitions no longer wanted as forgotten.
  The broker keeps fetching the others at the offsets it was last sent, so the partitions of a
  session are exactly those of the last request: one not wanted now must be forgotten, even if
  it is wanted again soon.
- The answer to an incremental fetch names only partitions with data or news (high watermark,
  log start offset, an error); a partition it leaves out is not an error. A partition the
  session does not hold is: the answer is dropped and the next fetch is full again.
- The session's partitions change when a request is *built*; any failure after that (an error
  code, a lost connection, a timeout, a cancelled request) makes the next fetch full (epoch 0,
  the same id: the broker drops the old session and may open a new one), so what the broker
  holds never drifts from what we think it holds. FETCH_SESSION_ID_NOT_FOUND starts from no
  session at all.
- Sessions need Fetch v7. A session opened with topic names (Fetch v12 and older) cannot go on
  with topic ids (v13+), nor a topic keep its place under a new id (a topic deleted and made
  again): either makes the next fetch full.
- Nothing is sent when the consumer closes: the broker evicts an idle session by itself.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from kafkawire.cluster import TopicPartition
from kafkawire.errors import (
    FetchSessionIdNotFoundError,
    FetchSessionTopicIdError,
    InvalidFetchSessionEpochError,
)
from kafkawire.operations.fetch_request import FINAL_EPOCH, NO_SESSION, PartitionFetch

__all__ = [
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "NO_SESSION",
    "SESSION_MIN_VERSION",
    "FetchSession",
    "PartitionFetch",
    "SessionRequest",
    "is_session_error",
    "next_epoch",
]

_log = logging.getLogger(__name__)

INITIAL_EPOCH = 0  # a full fetch that asks for a (new) session
SESSION_MIN_VERSION = 7
_INT32_MAX = 2**31 - 1
_FIRST_TOPIC_ID_VERSION = 13


def next_epoch(epoch: int) -> int:
    """The session epoch after ``epoch`` (wrapping past the largest int32 to 1, not 0)."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _INT32_MAX else epoch + 1


@dataclass(frozen=True, slots=True)
class SessionRequest:
    """One Fetch as the session built it."""

    session_id: int
    epoch: int
    to_send: dict[TopicPartition, PartitionFetch]
    to_forget: list[TopicPartition]
    partitions: dict[TopicPartition, PartitionFetch]  # the session's, for reading the answer
    topic_ids: dict[str, uuid.UUID | None]  # of every topic sent or forgotten

    @property
    def full(self) -> bool:
        return self.epoch in (INITIAL_EPOCH, FINAL_EPOCH)

    @property
    def names(self) -> dict[uuid.UUID, str]:
        """Topic id -> name, for reading an answer of v13+ (which names topics by id)."""
        return {topic_id: name for name, topic_id in self.topic_ids.items() if topic_id}


class FetchSession:
    """The fetch session with one broker: build each request, then report how it ended."""

    def __init__(self, node_id: int) -> None:
        self.node_id = node_id
        self.session_id = NO_SESSION
        self.epoch = INITIAL_EPOCH  # of the next request
        self._partitions: dict[TopicPartition, PartitionFetch] = {}
        self._topic_ids: dict[str, uuid.UUID | None] = {}
        self._by_topic_id = False

    def build(
        self,
        wanted: Mapping[TopicPartition, PartitionFetch],
        topic_ids: Mapping[str, uuid.UUID | None],
        version: int,
    ) -> SessionRequest:
        """The request for ``wanted`` (every partition to fetch from this broker now) at Fetch
        ``version``; the session holds exactly ``wanted`` from here on."""
        by_topic_id = version >= _FIRST_TOPIC_ID_VERSION
        if by_topic_id != self._by_topic_id or self._renamed(topic_ids):
            self.epoch = INITIAL_EPOCH  # the broker could not follow: start over
        old, old_ids = self._partitions, self._topic_ids
        self._partitions = dict(wanted)
        self._topic_ids = {tp.topic: topic_ids[tp.topic] for tp in wanted}
        self._by_topic_id = by_topic_id
        if version < SESSION_MIN_VERSION:
            return self._full(NO_SESSION, FINAL_EPOCH)
        if self.epoch == INITIAL_EPOCH:
            return self._full(self.session_id, INITIAL_EPOCH)
        to_send = {tp: fetch for tp, fetch in wanted.items() if old.get(tp) != fetch}
        to_forget = [tp for tp in old if tp not in wanted]
        ids = {**{tp.topic: old_ids[tp.topic] for tp in to_forget}, **self._topic_ids}
        return SessionRequest(
            self.session_id, self.epoch, to_send, to_forget, self._partitions, ids
        )

    def _full(self, session_id: int, epoch: int) -> SessionRequest:
        everything = self._partitions
        return SessionRequest(session_id, epoch, everything, [], everything, self._topic_ids)

    def _renamed(self, topic_ids: Mapping[str, uuid.UUID | None]) -> bool:
        return any(topic_ids.get(topic, old) != old for topic, old in self._topic_ids.items())

    def answered(
        self, request: SessionRequest, session_id: int, partitions: Collection[TopicPartition]
    ) -> str | None:
        """Record the broker's answer to ``request`` (it named ``partitions``); a description of
        what is wrong with it, if something is (then drop the answer: the next fetch is full)."""
        extra = [tp for tp in partitions if tp not in request.partitions]
        if extra:
            self.failed()
            names = ", ".join(f"{tp.topic}/{tp.partition}" for tp in extra)
            return f"broker {self.node_id} answered partitions it was not asked for: {names}"
        if request.epoch == FINAL_EPOCH or (request.full and session_id == NO_SESSION):
            self.session_id, self.epoch = NO_SESSION, INITIAL_EPOCH
        elif request.full:
            _log.debug("broker %d opened fetch session %d", self.node_id, session_id)
            self.session_id, self.epoch = session_id, next_epoch(INITIAL_EPOCH)
        elif session_id == NO_SESSION:
            _log.debug("broker %d closed fetch session %d", self.node_id, self.session_id)
            self.session_id, self.epoch = NO_SESSION, INITIAL_EPOCH
        else:
            self.epoch = next_epoch(self.epoch)
        return None

    def failed(self, error: BaseException | None = None) -> None:
        """The request went wrong (``error``: its error code, or why it got no answer): the next
        fetch is full, and asks the broker to drop this session (FETCH_SESSION_ID_NOT_FOUND: it
        has none) and open a new one."""
        if self.session_id != NO_SESSION:
            _log.debug(
                "fetch session %d with broker %d ends: %s", self.session_id, self.node_id, error
            )
        if isinstance(error, FetchSessionIdNotFoundError):
            self.session_id = NO_SESSION
        self.epoch = INITIAL_EPOCH


def is_session_error(error: BaseException) -> bool:
    """An error code about the session itself, not the partitions: a full fetch cures it."""
    return isinstance(
        error,
        FetchSessionIdNotFoundError | InvalidFetchSessionEpochError | FetchSessionTopicIdError,
    )
