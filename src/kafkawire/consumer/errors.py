"""The consumer's own errors (broker errors come from :mod:`kafkawire.errors`)."""

from __future__ import annotations

from kafkawire.cluster import TopicPartition
from kafkawire.errors import KafkawireError

__all__ = [
    "BackgroundTaskError",
    "CommitFailedError",
    "ConsumerStateError",
    "LogTruncationError",
    "NoOffsetForPartitionError",
    "NotAssignedError",
    "OffsetOutOfRangeError",
    "RecordDeserializationError",
    "UnsupportedGroupProtocolError",
]


class ConsumerStateError(KafkawireError):
    """A call the consumer cannot serve as it stands (closed, no group, not started, ...)."""


class CommitFailedError(KafkawireError):
    """A commit the group cannot take: the member is not in the group now (thrown out, or
    not joined yet). As Kafka's Java ``CommitFailedException``: the records it got may be read
    again by the partitions' next owner, from the last committed offsets."""


class NotAssignedError(ConsumerStateError):
    """A call named a partition that is not assigned to this consumer."""


class NoOffsetForPartitionError(KafkawireError):
    """A partition has no position and ``auto_offset_reset`` is ``"none"``."""

    def __init__(self, partitions: list[TopicPartition]) -> None:
        names = ", ".join(f"{tp.topic}/{tp.partition}" for tp in partitions)
        super().__init__(f"no committed offset and auto_offset_reset='none' for {names}")
        self.partitions = partitions


class OffsetOutOfRangeError(KafkawireError):
    """A fetch position is outside the partition's log and ``auto_offset_reset`` is
    ``"none"``: seek the partition somewhere valid to go on."""

    def __init__(self, tp: TopicPartition, offset: int) -> None:
        super().__init__(
            f"offset {offset} is out of range for {tp.topic}/{tp.partition} "
            "(auto_offset_reset='none'): seek to a valid offset"
        )
        self.partition = tp
        self.offset = offset


class LogTruncationError(OffsetOutOfRangeError):
    """The partition's log was cut back below the position after its leader changed (KIP-320),
    and ``auto_offset_reset`` is ``"none"``: records the consumer may have read are gone from
    it. ``divergent_offset`` is where the leader's log parts from what was read (``None`` when
    the leader knows nothing of the position's epoch); seek to go on."""

    def __init__(self, tp: TopicPartition, offset: int, divergent_offset: int | None) -> None:
        where = (
            f"the leader's log ends that epoch at offset {divergent_offset}"
            if divergent_offset is not None
            else "the leader's log no longer holds the position's leader epoch"
        )
        KafkawireError.__init__(
            self,
            f"log truncation detected for {tp.topic}/{tp.partition} at offset {offset}: {where} "
            "(auto_offset_reset='none'): seek to a valid offset",
        )
        self.partition = tp
        self.offset = offset
        self.divergent_offset = divergent_offset


class UnsupportedGroupProtocolError(KafkawireError):
    """The broker does not serve the group protocol asked for (``group_protocol``)."""


class RecordDeserializationError(KafkawireError):
    """The key or value deserializer raised on a record (Kafka's Java
    ``RecordDeserializationException``). The records before it were handed out; the
    partition's position is at it, and every poll raises this again (the deserializer is
    tried anew) until the application seeks, say to ``offset + 1`` to skip the record.
    ``origin`` is ``"key"`` or ``"value"``; the deserializer's error is the ``__cause__``."""

    def __init__(self, tp: TopicPartition, offset: int, origin: str, error: Exception) -> None:
        super().__init__(
            f"the {origin} deserializer failed on {tp.topic}/{tp.partition} at offset {offset}"
            f" ({type(error).__name__}: {error}): the position stays at the record; seek to "
            f"offset {offset + 1} to skip it"
        )
        self.partition = tp
        self.offset = offset
        self.origin = origin


class BackgroundTaskError(KafkawireError):
    """A background task of the consumer (``task`` names it: the fetcher, a fetch from one
    broker, the group membership, ...) stopped on an error it does not expect, the
    ``__cause__``. The application's next call raises it, once, and the work is tried again
    (see :mod:`kafkawire.consumer.tasks`), as Kafka's Java consumer raises its heartbeat
    thread's failure from the next ``poll()`` and then starts a new thread."""

    def __init__(self, task: str, error: BaseException) -> None:
        super().__init__(
            f"the consumer's {task} stopped on an unexpected error "
            f"({type(error).__name__}: {error}); it is tried again"
        )
        self.task = task
