"""Control records: the transaction markers a transaction coordinator writes.

A control batch (attribute bit 5, always transactional) holds control records, which a
consumer never returns to the application. A control record's key is ``version int16 |
type int16``; for COMMIT and ABORT (the end-transaction markers) the value is ``version int16
| coordinatorEpoch int32``. Later versions may append fields, which readers skip, as Kafka's do.
Types 2 and up (leader change, snapshot header/footer, KRaft version and voters) belong to
KRaft's metadata log; they are named here but their values are left as bytes.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from .builder import RecordBatchBuilder
from .errors import CorruptRecordError, InvalidRecordError
from .model import Record

__all__ = [
    "ControlType",
    "EndTransactionMarker",
    "control_type",
    "decode_end_transaction_marker",
    "end_transaction_batch",
]

_KEY = struct.Struct(">hh")
_END_TXN_VALUE = struct.Struct(">hi")
_CURRENT_VERSION = 0


class ControlType(enum.IntEnum):
    """The ``type`` in a control record's key."""

    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


_END_TXN_TYPES = (ControlType.ABORT, ControlType.COMMIT)


@dataclass(frozen=True, slots=True)
class EndTransactionMarker:
    """A COMMIT or ABORT marker: how a transaction ended, per the coordinator's epoch."""

    type: ControlType
    coordinator_epoch: int
    version: int = _CURRENT_VERSION

    @property
    def committed(self) -> bool:
        """Whether the transaction was committed (not aborted)."""
        return self.type is ControlType.COMMIT


def control_type(record: Record) -> ControlType | int:
    """The type in a control record's key: a :class:`ControlType`, or the raw int if unknown.

    Raises :class:`CorruptRecordError` for a key shorter than four bytes.
    """
    if record.key is None or len(record.key) < _KEY.size:
        raise CorruptRecordError(f"control record at offset {record.offset} has no valid key")
    _, kind = _KEY.unpack_from(record.key)
    try:
        return ControlType(kind)
    except ValueError:
        return int(kind)


def decode_end_transaction_marker(record: Record) -> EndTransactionMarker:
    """The COMMIT or ABORT marker that ``record`` (from a control batch) holds.

    Raises :class:`CorruptRecordError` for another control type or a value too short.
    """
    kind = control_type(record)
    if kind not in _END_TXN_TYPES:
        raise CorruptRecordError(f"control record at offset {record.offset} is type {kind}")
    if record.value is None or len(record.value) < _END_TXN_VALUE.size:
        raise CorruptRecordError(f"marker at offset {record.offset} has no valid value")
    version, epoch = _END_TXN_VALUE.unpack_from(record.value)
    return EndTransactionMarker(ControlType(kind), epoch, version)


def end_transaction_batch(
    marker: EndTransactionMarker,
    *,
    producer_id: int,
    producer_epoch: int,
    timestamp: int,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
) -> bytes:
    """The control batch a broker appends when ``producer_id``'s transaction ends."""
    if marker.type not in _END_TXN_TYPES:
        raise InvalidRecordError(f"an end-transaction marker is ABORT or COMMIT, not {marker.type}")
    builder = RecordBatchBuilder(
        base_offset=base_offset,
        partition_leader_epoch=partition_leader_epoch,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        transactional=True,
        control=True,
    )
    builder.append(
        _KEY.pack(_CURRENT_VERSION, marker.type),
        _END_TXN_VALUE.pack(marker.version, marker.coordinator_epoch),
        timestamp=timestamp,
    )
    return builder.build()
