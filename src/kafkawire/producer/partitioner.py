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
from collections.abc import Callable, Sequence
from typing import Protocol

from kafkawire._extensions import load_optional

__all__ = [
    "ACCELERATED",
    "Partitioner",
    "StickyPartitioner",
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


def key_partitions_pure(keys: Sequence[bytes | None], partition_count: int) -> bytes:
    """:func:`partition_for_key` of each key (``-1`` for ``None``), as native int32 values."""
    if partition_count < 1:
        raise ValueError(f"a topic has at least one partition, not {partition_count}")
    partitions = array("i", bytes(4 * len(keys)))
    for index, key in enumerate(keys):
        if key is None:
            partitions[index] = -1
        elif type(key) is bytes:
            partitions[index] = (murmur2_pure(key) & 0x7FFFFFFF) % partition_count
        else:
            raise TypeError(f"keys[{index}] must be bytes or None, not {type(key).__name__}")
    return partitions.tobytes()


KeyPartitions = Callable[[Sequence[bytes | None], int], bytes]


def _load_compiled() -> tuple[Callable[[bytes], int], Callable[[bytes, int], int], KeyPartitions]:
    from . import _accel

    return _accel.murmur2, _accel.partition_for_key, _accel.key_partitions


_COMPILED = load_optional("kafkawire.producer._accel", _load_compiled)
ACCELERATED = _COMPILED is not None
"""Whether the key functions are the compiled ones."""
murmur2, partition_for_key, key_partitions = (
    (murmur2_pure, partition_for_key_pure, key_partitions_pure) if _COMPILED is None else _COMPILED
)


class StickyPartitioner:
    """The partition for records without a key: sticky per topic, moved on after
    ``batch_size`` bytes (KIP-794)."""

    def __init__(self, batch_size: int) -> None:
        self._batch_size = batch_size
        self._current: dict[str, tuple[int, int]] = {}  # topic -> (partition, bytes so far)

    def partition(self, topic: str, partition_count: int, size: int) -> int:
        """The partition for a record of ``size`` bytes of ``topic``."""
        current = self._current.get(topic)
        if current is None or current[0] >= partition_count or current[1] >= self._batch_size:
            previous = None if current is None else current[0]
            current = (self._next(partition_count, previous), 0)
        self._current[topic] = (current[0], current[1] + size)
        return current[0]

    @staticmethod
    def _next(partition_count: int, previous: int | None) -> int:
        if partition_count == 1 or previous is None or previous >= partition_count:
            return random.randrange(partition_count)
        choice = random.randrange(partition_count - 1)  # any partition but the previous one
        return choice + 1 if choice >= previous else choice
