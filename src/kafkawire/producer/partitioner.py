"""Which partition a record goes to, as Kafka's Java client decides it.

- A record with a key goes to ``murmur2(key) & 0x7fffffff % partition_count``: the Java
  client's ``BuiltInPartitioner.partitionForKey``, so the same key lands in the same partition
  whichever client wrote it.
- A record without a key goes to the topic's current *sticky* partition (KIP-480, and KIP-794's
  uniform form): one partition takes records until about ``batch_size`` bytes have gone to it,
  then another is chosen at random, so batches fill up instead of one record per partition.
- A user's partitioner, when given, decides every record it sees.

:func:`murmur2`, :func:`partition_for_key` and :func:`key_partitions` are compiled in the
optional C extension ``kafkawire.producer._accel`` where it is built (and
``KAFKAWIRE_NO_EXTENSIONS`` is not set); the pure functions here give the same answers and
errors for bytes-like keys and int partition counts. :data:`ACCELERATED` says which are in
use.
"""

from __future__ import annotations

import random
import struct
from array import array
from collections.abc import Callable
from typing import Protocol

from kafkawire._extensions import load_optional
from kafkawire.records.columns import NONE, ColumnSpec, items

__all__ = [
    "ACCELERATED",
    "Partitioner",
    "StickyPartitioner",
    "group_by_partition",
    "key_partitions",
    "murmur2",
    "partition_for_key",
]

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


class Partitioner(Protocol):
    """A user's choice of partition: ``partitioner(topic, key, partition_count)``."""

    def __call__(self, topic: str, key: bytes | None, partition_count: int) -> int: ...


def murmur2_pure(data: bytes) -> int:
    """Kafka's 32-bit murmur2 of ``data`` (``Utils.murmur2``), as an unsigned int."""
    try:
        data = bytes(memoryview(data))
    except TypeError:
        raise TypeError(f"a key must be bytes-like, not {type(data).__name__}") from None
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length & ~3
    for (word,) in struct.iter_unpack("<I", data[:whole]):
        k = (word * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    rest = length & 3
    if rest:
        if rest == 3:
            h ^= data[whole + 2] << 16
        if rest >= 2:
            h ^= data[whole + 1] << 8
        h ^= data[whole]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h


def partition_for_key_pure(key: bytes, partition_count: int) -> int:
    """The partition Kafka's Java client picks for ``key``."""
    if partition_count < 1:
        raise ValueError(f"a topic has at least one partition, not {partition_count}")
    return (murmur2_pure(key) & 0x7FFFFFFF) % partition_count


def key_partitions_pure(keys: ColumnSpec, partition_count: int) -> bytes:
    """:func:`partition_for_key` of each key of a column (see
    :mod:`kafkawire.records.columns`; ``-1`` for ``None``), as native int32 values."""
    if partition_count < 1:
        raise ValueError(f"a topic has at least one partition, not {partition_count}")
    if keys[0] == NONE:
        raise TypeError("keys: not a column of known length")
    listed = items(keys, 0)
    partitions = array("i", bytes(4 * len(listed)))
    for index, key in enumerate(listed):
        if key is None:
            partitions[index] = -1
        elif type(key) is bytes:
            partitions[index] = (murmur2_pure(key) & 0x7FFFFFFF) % partition_count
        else:
            raise TypeError(f"keys[{index}] must be bytes or None, not {type(key).__name__}")
    return partitions.tobytes()


def group_by_partition_pure(partitions: bytes, partition_count: int) -> tuple[bytes, list[int]]:
    """The record indexes of ``partitions`` (native int32 values, -1: not chosen yet) grouped
    by partition, in their order within each (int32 values), and the bounds of each group in
    them: group ``p`` (a partition) is ``bounds[p]:bounds[p + 1]``, the records of -1 come
    last (group ``partition_count``)."""
    if partition_count < 1:
        raise ValueError(f"a topic has at least one partition, not {partition_count}")
    chosen = array("i", partitions)
    groups: list[list[int]] = [[] for _ in range(partition_count + 1)]
    for index, partition in enumerate(chosen):
        if not -1 <= partition < partition_count:
            raise ValueError(
                f"record {index}: partition {partition} is not one of {partition_count}"
            )
        groups[partition].append(index)  # -1: the last group
    bounds = [0]
    for group in groups:
        bounds.append(bounds[-1] + len(group))
    return array("i", [i for group in groups for i in group]).tobytes(), bounds


KeyPartitions = Callable[[ColumnSpec, int], bytes]
GroupByPartition = Callable[[bytes, int], tuple[bytes, list[int]]]


def _load_compiled() -> tuple[
    Callable[[bytes], int], Callable[[bytes, int], int], KeyPartitions, GroupByPartition
]:
    from . import _accel

    return (
        _accel.murmur2,
        _accel.partition_for_key,
        _accel.key_partitions,
        _accel.group_by_partition,
    )


_COMPILED = load_optional("kafkawire.producer._accel", _load_compiled)
ACCELERATED = _COMPILED is not None
"""Whether the key functions are the compiled ones."""
_CHOSEN = (
    (murmur2_pure, partition_for_key_pure, key_partitions_pure, group_by_partition_pure)
    if _COMPILED is None
    else _COMPILED
)
murmur2: Callable[[bytes], int] = _CHOSEN[0]
"""Kafka's 32-bit murmur2 of ``data`` (``Utils.murmur2``), as an unsigned int."""
partition_for_key: Callable[[bytes, int], int] = _CHOSEN[1]
"""``partition_for_key(key, partition_count)``: the partition Kafka's Java client picks for
``key``."""
key_partitions: KeyPartitions = _CHOSEN[2]
"""See :func:`key_partitions_pure`."""
group_by_partition: GroupByPartition = _CHOSEN[3]
"""See :func:`group_by_partition_pure`."""


class StickyPartitioner:
    """The partition for records without a key: sticky per topic, moved on after
    ``batch_size`` bytes (KIP-794)."""

    def __init__(self, batch_size: int) -> None:
        self._batch_size = batch_size
        # topic -> (partition, bytes so far); the compiled send path (.send_path) reads and
        # updates it in place, as staying() and add() do.
        self._current: dict[str, tuple[int, int]] = {}

    def partition(self, topic: str, partition_count: int, size: int) -> int:
        """The partition for a record of ``size`` bytes of ``topic``."""
        partition, _ = self.current(topic, partition_count)
        self.add(topic, size)
        return partition

    def current(self, topic: str, partition_count: int) -> tuple[int, int]:
        """``topic``'s partition for its next record, and how many bytes may go to it before
        it moves on (at least one record goes, whatever its size)."""
        if self.staying(topic, partition_count) is None:
            current = self._current.get(topic)
            previous = None if current is None else current[0]
            self._current[topic] = (self._next(partition_count, previous), 0)
        partition, sent = self._current[topic]
        return partition, self._batch_size - sent

    def staying(self, topic: str, partition_count: int) -> int | None:
        """``topic``'s partition if its next record stays on it; ``None`` when :meth:`current`
        would move on (it has none yet, or it had its ``batch_size`` bytes, or the topic
        shrank), which draws the next at random."""
        current = self._current.get(topic)
        if current is None or current[0] >= partition_count or current[1] >= self._batch_size:
            return None
        return current[0]

    def add(self, topic: str, size: int) -> None:
        """``size`` more bytes went to ``topic``'s current partition (see :meth:`current`)."""
        partition, sent = self._current[topic]
        self._current[topic] = (partition, sent + size)

    @staticmethod
    def _next(partition_count: int, previous: int | None) -> int:
        if partition_count == 1 or previous is None or previous >= partition_count:
            return random.randrange(partition_count)
        choice = random.randrange(partition_count - 1)  # any partition but the previous one
        return choice + 1 if choice >= previous else choice
