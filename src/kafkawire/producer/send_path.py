"""``Producer.send``'s common case in one call: check a record, place it, append it.

Most records are bytes (or ``None``) without headers or a timestamp, for a topic whose
partition count is known, and join their partition's open batch. ``send`` hands such a
record's ``(topic, value, key, partition)`` to :meth:`SendPathPure.send` (compiled where
built: one C call per record), which answers with its :class:`~.batch.Delivery`, or leaves
the record to the full path (``Producer._send``). Rules, which the compiled twin keeps too:

- It takes a record only where the full path would do the same: values and keys exactly
  ``bytes`` or ``None``, a known partition count, at most ``max_record_size``, room in the
  partition's open batch and in ``buffer_memory`` with no send waiting for room
  (:meth:`~.accumulator.RecordAccumulator.append_to_open`). Otherwise it answers ``None``
  having changed nothing, and the full path decides everything as it would have.
- A given partition is used if it is an ``int`` of the topic's; anything else is what
  :func:`~.arguments.checked_partition` answers or raises, as on the full path.
- Without a partition: a user's partitioner's choice (through the producer, which checks
  it); else the key's (:func:`~.partitioner.partition_for_key`); else the topic's sticky
  partition while the record stays on it (:meth:`~.partitioner.StickyPartitioner.staying`).
  When the sticky partition moves on, the record is the full path's, which draws the next
  one: a draw is made once, and the record's bytes count once, when it is appended.
- A user's partitioner is called once per record: when the record it placed cannot be
  appended here, ``send`` answers with its choice, which the full path then takes.
- It never starts a batch, so its deliveries never do: ``send``'s yield once per batch
  stays the full path's.

The compiled ``kafkawire.producer._accel.SendPath`` reads and updates the producer's
objects where they are (the partition counts, the sticky partitioner's ``_current``, the
accumulator's ``_open``, ``_waiters``, ``wakeup`` and ``_memory``, each batch's slots);
:data:`ACCELERATED` says whether it is in use, and the tests compare the two twins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from kafkawire._extensions import load_optional

from .accumulator import BufferUse, RecordAccumulator
from .arguments import checked_partition
from .batch import RECORD_OVERHEAD, Delivery, ProducerBatch
from .partitioner import StickyPartitioner, partition_for_key

__all__ = ["ACCELERATED", "Choose", "SendPath", "SendPathPure", "SendStep"]

Choose = Callable[[str, bytes | None, int, int], Any]
"""The producer's call of a user's partitioner: ``(topic, key, size, partition_count)``."""


class SendStep(Protocol):
    def send(self, topic: str, value: Any, key: Any, partition: Any) -> Delivery | Any | None:
        """The record's delivery; ``None`` (nothing changed: the full path's); or a user's
        partitioner's choice for a record that could not be appended (see the module doc)."""
        ...


class SendPathPure:
    """:class:`SendStep` in Python, the compiled one's twin."""

    __slots__ = ("_accumulator", "_choose", "_counts", "_max_record_size", "_sticky")

    def __init__(
        self,
        accumulator: RecordAccumulator,
        sticky: StickyPartitioner,
        counts: dict[str, int],
        max_record_size: int,
        choose: Choose | None,
    ) -> None:
        self._accumulator = accumulator
        self._sticky = sticky
        self._counts = counts  # the producer's, topic -> partition count
        self._max_record_size = max_record_size
        self._choose = choose

    def send(self, topic: str, value: Any, key: Any, partition: Any) -> Delivery | Any | None:
        if not (
            (value is None or value.__class__ is bytes) and (key is None or key.__class__ is bytes)
        ):
            return None
        count = self._counts.get(topic)
        if count is None or count < 1:  # (never stored below 1; the C twin divides by it)
            return None
        size = RECORD_OVERHEAD + (len(key) if key else 0) + (len(value) if value else 0)
        if size > self._max_record_size:
            return None
        chosen = sticky = False
        if partition is not None:
            if partition.__class__ is not int or not 0 <= partition < count:
                partition = checked_partition(topic, partition, count)
        elif self._choose is not None:
            partition = self._choose(topic, key, size, count)
            chosen = True
        elif key is not None:
            partition = partition_for_key(key, count)
        else:
            partition = self._sticky.staying(topic, count)
            if partition is None:
                return None
            sticky = True
        delivery = self._accumulator.append_to_open(topic, partition, key, value, size)
        if delivery is None:
            return partition if chosen else None
        if sticky:
            self._sticky.add(topic, size)
        return delivery


MakeSendPath = Callable[
    [RecordAccumulator, StickyPartitioner, dict[str, int], int, Choose | None], SendStep
]


def _load_compiled() -> MakeSendPath:
    from . import _accel

    _accel.setup_send_path(ProducerBatch, BufferUse, checked_partition, RECORD_OVERHEAD)
    return _accel.SendPath


_COMPILED = load_optional("kafkawire.producer._accel", _load_compiled)
ACCELERATED = _COMPILED is not None
"""Whether :data:`SendPath` is the compiled one."""
SendPath: MakeSendPath = SendPathPure if _COMPILED is None else _COMPILED
"""``SendPath(accumulator, sticky, counts, max_record_size, choose)``: the compiled
:class:`SendPathPure` where built, else it."""
