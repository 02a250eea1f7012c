"""A produced partition's records, checked as Kafka checks them before it appends.

In Kafka's order: the request's own rules first (:func:`request_check`, Kafka's
``ProduceRequest.validateRecords``: from v3 exactly one batch, of magic 2; zstd only from v7),
and at the leader the log's (:func:`log_check`): the size (``max.message.bytes``), the crc and
the records inside (``LogValidator``: the count matches the offset range; no control batches from
clients; an idempotent batch has a sequence; a compacted topic takes no null keys). Each
failure is a :class:`~kafkawire.testing.fake.producer_state.AppendError` with Kafka's code.
"""

from __future__ import annotations

import struct

from kafkawire.records import (
    Compression,
    CorruptRecordError,
    RecordBatch,
    RecordsError,
    decode_batches,
)

from .codes import Error
from .producer_state import AppendError

__all__ = ["log_check", "request_check"]

_OFFSET_AND_LENGTH = struct.Struct(">qi")
_LOG_OVERHEAD = 12
_MAGIC_AT = 16
_ATTRIBUTES = struct.Struct(">h")
_ATTRIBUTES_AT = 21
_CODEC_MASK = 0x07
_FIRST_ZSTD_PRODUCE = 7


def request_check(records: bytes | memoryview | None, *, produce_version: int) -> bytes:
    """The request's own rules (checked before the leader is): the one batch's bytes."""
    data = bytes(records or b"")
    if len(data) < _ATTRIBUTES_AT + 2:
        raise AppendError(
            Error.INVALID_RECORD,
            f"Produce requests with version {produce_version} must have at least one record batch",
        )
    _, length = _OFFSET_AND_LENGTH.unpack_from(data)
    if len(data) != _LOG_OVERHEAD + length:
        raise AppendError(
            Error.INVALID_RECORD,
            f"Produce requests with version {produce_version} are only allowed to contain "
            "exactly one record batch per partition",
        )
    if data[_MAGIC_AT] != 2:
        raise AppendError(
            Error.INVALID_RECORD,
            f"Produce requests with version {produce_version} are only allowed to contain "
            f"record batches with magic version 2, not {data[_MAGIC_AT]}",
        )
    (attributes,) = _ATTRIBUTES.unpack_from(data, _ATTRIBUTES_AT)
    codec = attributes & _CODEC_MASK
    if codec == Compression.ZSTD and produce_version < _FIRST_ZSTD_PRODUCE:
        raise AppendError(
            Error.UNSUPPORTED_COMPRESSION_TYPE,
            f"Produce requests with version {produce_version} are not allowed to use "
            "ZStandard compression",
        )
    return data


def log_check(data: bytes, *, max_message_bytes: int, compacted: bool, where: str) -> RecordBatch:
    """The log's rules (checked at the leader): the batch, decoded."""
    if len(data) > max_message_bytes:
        raise AppendError(
            Error.MESSAGE_TOO_LARGE,
            f"The record batch size in the append to {where} is {len(data)} bytes which "
            f"exceeds the maximum configured value of {max_message_bytes}.",
        )
    try:
        (batch,) = decode_batches(data)
        assert isinstance(batch, RecordBatch)
        _check_batch(batch, where)
        if compacted and any(record.key is None for record in batch.records):
            raise AppendError(
                Error.INVALID_RECORD,
                f"Compacted topic cannot accept message without key in topic partition {where}.",
            )
    except CorruptRecordError as exc:
        raise AppendError(Error.CORRUPT_MESSAGE, f"{where}: {exc}") from None
    except RecordsError as exc:
        raise AppendError(Error.INVALID_RECORD, f"{where}: {exc}") from None
    return batch


def _check_batch(batch: RecordBatch, where: str) -> None:
    count = batch.last_offset_delta + 1
    if count <= 0 or batch.records_count <= 0:
        raise AppendError(Error.INVALID_RECORD, f"Batch has an invalid offset range in {where}")
    if count != batch.records_count:
        raise AppendError(
            Error.INVALID_RECORD,
            f"Inconsistent batch offset range [0, {count - 1}] and count of records "
            f"{batch.records_count} in {where}",
        )
    if batch.is_control:
        raise AppendError(Error.INVALID_RECORD, "Clients are not allowed to write control records")
    if batch.producer_id >= 0 and batch.base_sequence < 0:
        raise AppendError(
            Error.INVALID_RECORD,
            f"Invalid sequence number {batch.base_sequence} in record batch with producerId "
            f"{batch.producer_id}",
        )
    # Decoding every record, as Kafka's validator walks them: a corrupt one raises here.
    if len(batch.records) != count:
        raise AppendError(Error.INVALID_RECORD, f"Batch record count mismatch in {where}")
