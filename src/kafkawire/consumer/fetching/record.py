"""What the consumer hands out: one frozen :class:`ConsumerRecord` per record.

Records are built only when the application takes them (``getmany`` drains a partition's
batches lazily). Without deserializers (and outside share groups, which pick the records they
acquired) they are built straight from the batch's bytes by the
records layer (:meth:`~kafkawire.records.LazyRecords.read_into`: in C where it is compiled,
with no :class:`~kafkawire.records.Record` in between and no Python step per record); with
deserializers, from the decoded records through a mutable twin of the class whose
``__class__`` is then swapped, as the record decoders do: a frozen dataclass's ``__init__``
sets each field through ``object.__setattr__``, which costs several times more, and this loop
runs once per record consumed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafkawire.cluster import TopicPartition
from kafkawire.consumer.errors import RecordDeserializationError
from kafkawire.consumer.settings import Deserializer
from kafkawire.records import Batch, Header, LazyRecords, RecordsAs, TimestampType

__all__ = ["ConsumerRecord"]


@dataclass(frozen=True, slots=True)
class ConsumerRecord:
    """One record of one partition, with its absolute offset and timestamp.

    ``key`` and ``value`` are bytes (or ``None``) unless the consumer has deserializers;
    ``leader_epoch`` is the partition leader epoch of its batch (``-1`` when unknown, as for
    legacy message sets). ``delivery_count`` is how many times a share group has delivered
    the record, this delivery included (``None`` outside share groups, as Java's
    ``ConsumerRecord.deliveryCount()`` is empty there).
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
    delivery_count: int | None = None


def _twin() -> type[Any]:
    twin = type("_ConsumerRecordTwin", (), {"__slots__": ConsumerRecord.__slots__})
    probe = twin()
    probe.__class__ = ConsumerRecord  # fails at import if the layouts ever differ
    return twin


_Twin = _twin()
# What every record of a batch shares, beside what the records layer reads per record.
_CONSTANT_FIELDS = ("topic", "partition", "timestamp_type", "leader_epoch", "delivery_count")


def consumer_records(
    out: list[ConsumerRecord],
    tp: TopicPartition,
    batch: Batch,
    start: int,
    *,
    key_deserializer: Deserializer | None,
    value_deserializer: Deserializer | None,
    delivery_counts: Mapping[int, int] | None = None,
) -> int:
    """Append to ``out`` the records of ``batch`` from offset ``start`` on, as consumer
    records, deserialized, each offset once and in increasing order (a record below ``start``,
    or below one appended before it, is skipped); the offset after the last record read
    (``start`` if none was). With ``delivery_counts`` (a share group's acquired records:
    offset -> delivery count) only the offsets it holds are appended, with their counts.

    Raises :class:`~.errors.RecordDeserializationError` for a deserializer that raises
    (``out`` then ends with the record before it), and the records layer's errors for a batch
    whose records cannot be decoded (before anything is appended)."""
    topic, partition = tp
    timestamp_type = batch.timestamp_type
    leader_epoch = getattr(batch, "partition_leader_epoch", -1)  # none in legacy message sets
    records = batch.records
    if (
        key_deserializer is None
        and value_deserializer is None
        and delivery_counts is None
        and isinstance(records, LazyRecords)
    ):
        constants = (topic, partition, timestamp_type, leader_epoch, None)
        return records.read_into(out, RecordsAs(ConsumerRecord, _CONSTANT_FIELDS, constants), start)
    append = out.append
    for record in records:
        offset = record.offset
        if offset < start:  # before the position, or an offset repeated (a broken batch)
            continue
        start = offset + 1
        delivery_count = None
        if delivery_counts is not None:
            delivery_count = delivery_counts.get(offset)
            if delivery_count is None:
                continue  # not acquired by this member
        key, value = record.key, record.value
        if key_deserializer is not None:
            try:
                key = key_deserializer(key)
            except Exception as exc:  # the application's code: any error is its
                raise RecordDeserializationError(tp, offset, "key", exc) from exc
        if value_deserializer is not None:
            try:
                value = value_deserializer(value)
            except Exception as exc:
                raise RecordDeserializationError(tp, offset, "value", exc) from exc
        r = _Twin()
        r.topic = topic
        r.partition = partition
        r.offset = offset
        r.timestamp = record.timestamp
        r.timestamp_type = timestamp_type
        r.key = key
        r.value = value
        r.headers = record.headers
        r.leader_epoch = leader_epoch
        r.delivery_count = delivery_count
        r.__class__ = ConsumerRecord
        append(r)
    return start
