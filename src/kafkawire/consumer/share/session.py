"""A share session with one broker (KIP-932), and the requests that carry it; no I/O.

Rules, as Kafka's broker (``ShareSessionCache``) holds them and Java's ``ShareSessionHandler``
keeps them:

- The first ShareFetch to a broker has epoch 0: it opens a session holding the partitions it
  names (a session of this member already there is closed, its records released). Each later
  request (ShareFetch or ShareAcknowledge) carries the next epoch (wrapping to 1 after 2^31-1);
  an incremental ShareFetch names the partitions to add and forgets those no longer wanted (the
  broker fetches every partition in the session). Epoch -1 closes it (ShareAcknowledge on
  close: the last acknowledgements go with it, and the rest is released).
- Only the partitions a member fetches are in its session. Acknowledgements for a partition it
  does not fetch (no longer assigned, led elsewhere now) go in a ShareAcknowledge, which adds
  nothing to the session: a partition sent only to carry acknowledgements and never forgotten
  is fetched by the broker on every request (franz-go 1.21.5 redelivered records without end).
- No acknowledgements ride an epoch-0 request (the broker refuses them: KAFKA-18198, -19485):
  a new session has acquired nothing yet.
- A session ends (the next request opens one at epoch 0) when the broker answers
  SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH or SHARE_SESSION_LIMIT_REACHED, answers
  any other top-level error, or does not answer at all (a broken connection, a timeout, a
  request given up): the broker may not have taken the epoch. Each session has an
  ``incarnation``; what was acquired in an ended one was released by the broker, so its
  acknowledgements fail at once (a member that waited for them hung: KAFKA-18164) and its
  buffered records are dropped.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from kafkawire.messages import request_type
from kafkawire.protocol import VersionConversionError, struct_type

from .acknowledgements import AcknowledgeType, WireBatch

__all__ = ["FINAL_EPOCH", "SHARE_ACKNOWLEDGE", "SHARE_FETCH", "Acks", "PartitionId", "ShareSession"]

FINAL_EPOCH = -1
SHARE_FETCH, SHARE_ACKNOWLEDGE = 78, 79
RENEW = AcknowledgeType.RENEW
_MAX_EPOCH = 2**31 - 1

PartitionId = tuple[uuid.UUID, int]
"""A partition as share requests name it: (topic id, index)."""

Acks = Mapping[PartitionId, list[WireBatch]]


class ShareSession:
    """This member's share session with one broker: its epoch, what it holds, which
    incarnation it is."""

    def __init__(self, node: int, group_id: str, member_id: str) -> None:
        self.node = node
        self._group_id = group_id
        self._member_id = member_id
        self.epoch = 0
        self.incarnation = 0
        self.partitions: set[PartitionId] = set()
        self.ended_by: BaseException | None = None  # why the last incarnation ended

    @property
    def open(self) -> bool:
        """Whether the broker holds a session of ours (acknowledgements can go)."""
        return self.epoch > 0

    def end(self, reason: BaseException) -> None:
        """The session is gone (or may be): the next request opens a new one."""
        self.epoch = 0
        self.partitions = set()
        self.incarnation += 1
        self.ended_by = reason

    def advance(self) -> None:
        """The broker took the request: the next one carries the next epoch."""
        self.epoch = 1 if self.epoch >= _MAX_EPOCH else self.epoch + 1

    def fetch_request(
        self,
        wanted: Collection[PartitionId],
        acks: Acks,
        *,
        version: int,
        max_wait_ms: int,
        min_bytes: int,
        max_bytes: int,
        max_records: int,
        acquire_mode: int,
    ) -> Any:
        """The next ShareFetch at ``version`` for ``wanted`` (its partitions become the
        session's), carrying ``acks`` of wanted partitions (none at epoch 0)."""
        assert not acks or self.open, "acknowledgements never ride an epoch-0 ShareFetch"
        assert set(acks) <= set(wanted), (
            "acknowledgements of unfetched partitions: use ShareAcknowledge"
        )
        added = set(wanted) if not self.open else set(wanted) - self.partitions
        forgotten = set() if not self.open else self.partitions - set(wanted)
        self.partitions = set(wanted)
        named = sorted(added | set(acks))
        request_cls = request_type(SHARE_FETCH, version)
        topic_cls = struct_type(request_cls, "topics")
        partition_cls = struct_type(topic_cls, "partitions")
        batch_cls = struct_type(partition_cls, "acknowledgement_batches")
        forgotten_cls = struct_type(request_cls, "forgotten_topics_data")
        fields: dict[str, Any] = {}
        if version >= 2:
            fields["share_acquire_mode"] = acquire_mode
        return request_cls(
            group_id=self._group_id,
            member_id=self._member_id,
            share_session_epoch=self.epoch,
            max_wait_ms=max_wait_ms,
            min_bytes=min_bytes,
            max_bytes=max_bytes,
            max_records=max_records,
            batch_size=max_records,
            topics=_by_topic(
                named,
                lambda topic_id, parts: topic_cls(topic_id=topic_id, partitions=parts),
                lambda p: partition_cls(
                    partition_index=p[1],
                    acknowledgement_batches=_batches(batch_cls, acks.get(p, ())),
                ),
            ),
            forgotten_topics_data=_by_topic(
                sorted(forgotten),
                lambda topic_id, parts: forgotten_cls(topic_id=topic_id, partitions=parts),
                lambda p: p[1],
            ),
            **fields,
        )

    def acknowledge_request(self, acks: Acks, *, version: int, final: bool = False) -> Any:
        """A ShareAcknowledge at ``version`` carrying ``acks`` (at epoch -1 with ``final``:
        it closes the session). A RENEW needs v2 (:class:`VersionConversionError` below)."""
        assert self.open, "a ShareAcknowledge needs an open session"
        renew = any(b.acknowledge_type == RENEW for batches in acks.values() for b in batches)
        if renew and version < 2:
            raise VersionConversionError(
                f"ShareAcknowledge v{version} cannot carry RENEW (is_renew_ack: v2, KIP-1222)"
            )
        request_cls = request_type(SHARE_ACKNOWLEDGE, version)
        topic_cls = struct_type(request_cls, "topics")
        partition_cls = struct_type(topic_cls, "partitions")
        batch_cls = struct_type(partition_cls, "acknowledgement_batches")
        fields: dict[str, Any] = {"is_renew_ack": renew} if version >= 2 else {}
        return request_cls(
            group_id=self._group_id,
            member_id=self._member_id,
            share_session_epoch=FINAL_EPOCH if final else self.epoch,
            topics=_by_topic(
                sorted(acks),
                lambda topic_id, parts: topic_cls(topic_id=topic_id, partitions=parts),
                lambda p: partition_cls(
                    partition_index=p[1], acknowledgement_batches=_batches(batch_cls, acks[p])
                ),
            ),
            **fields,
        )


def _batches(batch_cls: type[Any], batches: Iterable[WireBatch]) -> tuple[Any, ...]:
    return tuple(
        batch_cls(
            first_offset=b.first_offset,
            last_offset=b.last_offset,
            acknowledge_types=(b.acknowledge_type,),
        )
        for b in batches
    )


def _by_topic(partitions: Iterable[PartitionId], topic: Any, partition: Any) -> tuple[Any, ...]:
    """``partitions`` grouped by topic id, each built with ``partition`` and its topic with
    ``topic`` (in the order given)."""
    grouped: dict[uuid.UUID, list[Any]] = {}
    for p in partitions:
        grouped.setdefault(p[0], []).append(partition(p))
    return tuple(topic(topic_id, tuple(parts)) for topic_id, parts in grouped.items())
