"""What the consumer hands out: one frozen :class:`ConsumerRecord` per record.

Records are built from a batch's decoded :class:`~kafkawire.records.Record` values only when
the application takes them (``getmany`` drains a partition's batches lazily), and through a
mutable twin of the class whose ``__class__`` is then swapped, as the record decoders do: a
frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``, which costs
several times more, and this loop runs once per record consumed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafkawire.cluster import TopicPartition
from kafkawire.records import Batch, Header, TimestampType

from .settings import Deserializer

__all__ = ["ConsumerRecord"]


@dataclass(frozen=True, slots=True)
class ConsumerRecord:
    """One record of one partition, with its absolute offset and timestamp.

    ``key`` and ``value`` are bytes (or ``None``) unless the consumer has deserializers;
    ``leader_epoch`` is the partition leader epoch of its batch (``-1`` when unknown, as for
    legacy message sets).
    """

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: TimestampType
    key: Any
    value: Any
    headers: tuple[Header, ...] = ()
    leader_epoch: int = -1


def _twin() -> type[Any]:
    twin = type("_ConsumerRecordTwin", (), {"__slots__": ConsumerRecord.__slots__})
    probe = twin()
    probe.__class__ = ConsumerRecord  # fails at import if the layouts ever differ
    return twin


_Twin = _twin()


def consumer_records(
    tp: TopicPartition,
    batch: Batch,
    start: int,
    key_deserializer: Deserializer | None,
    value_deserializer: Deserializer | None,
) -> list[ConsumerRecord]:
    """The records of ``batch`` from offset ``start`` on, as consumer records, deserialized."""
    topic, partition = tp
    timestamp_type = batch.timestamp_type
    leader_epoch = getattr(batch, "partition_leader_epoch", -1)  # none in legacy message sets
    records = batch.records
    if records and records[0].offset < start:  # a batch the position starts inside
        records = [r for r in records if r.offset >= start]
    out: list[ConsumerRecord] = []
    append = out.append
    for record in records:
        r = _Twin()
        r.topic = topic
        r.partition = partition
        r.offset = record.offset
        r.timestamp = record.timestamp
        r.timestamp_type = timestamp_type
        key, value = record.key, record.value
        r.key = key if key_deserializer is None else key_deserializer(key)
        r.value = value if value_deserializer is None else value_deserializer(value)
        r.headers = record.headers
        r.leader_epoch = leader_epoch
        r.__class__ = ConsumerRecord
        append(r)
    return out
