"""Builders that append records and produce a finished batch for a Produce request.

Both builders keep the records encoded (uncompressed) as they arrive, so ``build`` only
compresses, writes the header and computes the crc. ``estimated_size`` is an *upper bound* on
the length of what ``build`` returns (exact when uncompressed; the codec's worst case
otherwise), so a producer that cuts a batch when ``estimated_size_with(next record)`` passes its
byte limit never sends a batch over it.

``build`` returns ``bytes`` to pass as a ProduceRequest partition's ``records=`` as they are.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .batch_v2 import HEADER, encode_batch
from .compression import codec, compressed_bound
from .errors import InvalidRecordError
from .legacy import MIN_MESSAGE_SIZE, encode_message, wrap_messages
from .model import NO_TIMESTAMP, Compression, Header
from .v2_records import EncodedRecords, EncodedRecordsPure, encode_headers

__all__ = ["BatchBuilder", "HeaderInput", "LegacyBatchBuilder", "RecordBatchBuilder"]

HeaderInput = Header | tuple[str, bytes | None]
"""A record header as ``append`` takes it: a :class:`Header` or a ``(key, value)`` pair."""

_Data = bytes | None
_Headers = Sequence[HeaderInput]

_TIMESTAMP_TYPE_BIT = 0x08
_TRANSACTIONAL_BIT = 0x10
_CONTROL_BIT = 0x20
# Per record, besides key, value and headers: length (5) + attributes (1) + timestamp delta
# (10) + offset delta (5) + key and value lengths (5 each) at their widest.
_MAX_RECORD_OVERHEAD = 31
_LOG_OVERHEAD = 12


class BatchBuilder(ABC):
    """What both builders offer: append records, watch the size, build the batch."""

    __slots__ = ()

    @abstractmethod
    def __len__(self) -> int:
        """The number of records appended so far."""

    @abstractmethod
    def append(
        self,
        key: bytes | None,
        value: bytes | None,
        *,
        timestamp: int,
        headers: Sequence[HeaderInput] = (),
    ) -> int:
        """Append one record; return its offset relative to the batch's base offset.

        A record the format cannot take raises before anything changes.
        """

    @property
    @abstractmethod
    def estimated_size(self) -> int:
        """An upper bound on ``len(self.build())``."""

    @abstractmethod
    def estimated_size_with(
        self, key: bytes | None, value: bytes | None, headers: Sequence[HeaderInput] = ()
    ) -> int:
        """An upper bound on ``len(self.build())`` once this record is appended too."""

    @abstractmethod
    def build(self) -> bytes:
        """The finished batch (or message set), ready for a ProduceRequest's ``records``."""


# The builder *is* its encoded records (compiled where built) rather than holding them: a
# producer appends every record through it, and so its ``append`` is the C method itself,
# with no Python frame around it.
if TYPE_CHECKING:
    _Records = EncodedRecordsPure
else:
    _Records = EncodedRecords


class RecordBatchBuilder(_Records, BatchBuilder):
    """Builds one v2 record batch (magic 2), optionally compressed and transactional.

    ``base_offset`` is 0 for a Produce request (the broker assigns offsets); the other values
    are those of Kafka's idempotent and transactional producer (``-1`` when unused).
    ``log_append_time`` marks the batch's timestamps as the broker's append time (what a
    broker writes; readers then give every record that timestamp). ``control`` makes a batch
    of control records (see :func:`~kafkawire.records.end_transaction_batch`). Records are
    appended as :class:`~kafkawire.records.v2_records.EncodedRecordsPure` says.
    """

    __slots__ = (
        "_attributes",
        "_base_offset",
        "_base_sequence",
        "_compression",
        "_compression_level",
        "_log_append_time",
        "_partition_leader_epoch",
        "_producer_epoch",
        "_producer_id",
    )

    def __init__(
        self,
        *,
        compression: Compression = Compression.NONE,
        compression_level: int | None = None,
        base_offset: int = 0,
        partition_leader_epoch: int = -1,
        producer_id: int = -1,
        producer_epoch: int = -1,
        base_sequence: int = -1,
        transactional: bool = False,
        control: bool = False,
        log_append_time: int | None = None,
    ) -> None:
        super().__init__()
        # A member as it is (the producer makes a builder per batch), else looked up by id.
        self._compression = compression if type(compression) is Compression else codec(compression)
        self._compression_level = compression_level
        self._base_offset = base_offset
        self._partition_leader_epoch = partition_leader_epoch
        self._producer_id = producer_id
        self._producer_epoch = producer_epoch
        self._base_sequence = base_sequence
        self._log_append_time = log_append_time
        self._attributes = (
            (_TRANSACTIONAL_BIT if transactional else 0)
            | (_CONTROL_BIT if control else 0)
            | (0 if log_append_time is None else _TIMESTAMP_TYPE_BIT)
        )

    def set_producer_state(
        self, *, producer_id: int, producer_epoch: int, base_sequence: int, transactional: bool
    ) -> None:
        """Set (or reset) the idempotent producer's fields before :meth:`build`.

        A producer assigns sequence numbers when a batch is sent, not when it is started, and
        assigns them again after its epoch is bumped; the records appended stay as they are.
        """
        self._producer_id = producer_id
        self._producer_epoch = producer_epoch
        self._base_sequence = base_sequence
        if transactional:
            self._attributes |= _TRANSACTIONAL_BIT
        else:
            self._attributes &= ~_TRANSACTIONAL_BIT

    @property
    def estimated_size(self) -> int:
        return HEADER.size + compressed_bound(self._compression, self.encoded_size)

    def estimated_size_with(
        self, key: bytes | None, value: bytes | None, headers: Sequence[HeaderInput] = ()
    ) -> int:
        size = _MAX_RECORD_OVERHEAD + (0 if key is None else len(key))
        size += 0 if value is None else len(value)
        size += len(encode_headers(headers)) if headers else 1
        return HEADER.size + compressed_bound(self._compression, self.encoded_size + size)

    def build(self) -> bytes:
        count = len(self)
        return encode_batch(
            self.encoded(),
            count=count,
            compression=self._compression,
            compression_level=self._compression_level,
            attributes=self._attributes,
            base_offset=self._base_offset,
            partition_leader_epoch=self._partition_leader_epoch,
            last_offset_delta=max(count - 1, 0),
            base_timestamp=self.base_timestamp,
            max_timestamp=(
                self.max_timestamp if self._log_append_time is None else self._log_append_time
            ),
            producer_id=self._producer_id,
            producer_epoch=self._producer_epoch,
            base_sequence=self._base_sequence,
        )


class LegacyBatchBuilder(BatchBuilder):
    """Builds a legacy message set (magic 0 or 1): plain messages, or one compressed wrapper.

    Compressed inner messages get offsets as Kafka writes them: absolute for magic 0, relative
    (0, 1, ...) for magic 1 with the wrapper at the last absolute offset. Legacy messages have
    no headers, magic 0 no timestamps (``timestamp`` is then ignored), and no legacy set zstd.
    """

    __slots__ = (
        "_base_offset",
        "_buffer",
        "_compression",
        "_compression_level",
        "_count",
        "_log_append_time",
        "_magic",
        "_max_timestamp",
    )

    def __init__(
        self,
        magic: int,
        *,
        compression: Compression = Compression.NONE,
        compression_level: int | None = None,
        base_offset: int = 0,
        log_append_time: int | None = None,
    ) -> None:
        if magic not in MIN_MESSAGE_SIZE:
            raise InvalidRecordError(f"legacy message sets have magic 0 or 1, not {magic}")
        if magic == 0 and log_append_time is not None:
            raise InvalidRecordError("magic 0 messages have no timestamps")
        compression = codec(compression)
        if compression is Compression.ZSTD:
            # KIP-110: zstd needs magic 2; brokers reject it in a legacy set, as Java's
            # builder does before sending. Reading such a set still works.
            raise InvalidRecordError(f"zstd compression needs magic 2, not {magic}")
        self._buffer = bytearray()
        self._count = 0
        self._max_timestamp = NO_TIMESTAMP
        self._magic = magic
        self._compression = compression
        self._compression_level = compression_level
        self._base_offset = base_offset
        self._log_append_time = log_append_time

    def __len__(self) -> int:
        return self._count

    def append(
        self,
        key: bytes | None,
        value: bytes | None,
        *,
        timestamp: int,
        headers: Sequence[HeaderInput] = (),
    ) -> int:
        delta = self._count
        self._buffer += self._encode(delta, key, value, timestamp, headers)
        self._count = delta + 1
        self._max_timestamp = max(self._max_timestamp, timestamp)
        return delta

    def _encode(
        self, delta: int, key: _Data, value: _Data, timestamp: int, headers: _Headers
    ) -> bytes:
        if headers:
            raise InvalidRecordError(f"magic {self._magic} messages cannot carry headers")
        if self._compression is not Compression.NONE:
            offset = delta if self._magic == 1 else self._base_offset + delta
            attributes = 0
        else:
            offset = self._base_offset + delta
            attributes = 0 if self._log_append_time is None else _TIMESTAMP_TYPE_BIT
            if self._log_append_time is not None:
                timestamp = self._log_append_time
        return encode_message(
            self._magic, offset, key, value, timestamp=timestamp, attributes=attributes
        )

    @property
    def estimated_size(self) -> int:
        return self._bound(len(self._buffer))

    def _bound(self, size: int) -> int:
        if self._compression is Compression.NONE:
            return size
        wrapper = _LOG_OVERHEAD + MIN_MESSAGE_SIZE[self._magic]
        return wrapper + compressed_bound(self._compression, size)

    def estimated_size_with(
        self, key: bytes | None, value: bytes | None, headers: Sequence[HeaderInput] = ()
    ) -> int:
        size = _LOG_OVERHEAD + MIN_MESSAGE_SIZE[self._magic]
        size += (0 if key is None else len(key)) + (0 if value is None else len(value))
        return self._bound(len(self._buffer) + size)

    def build(self) -> bytes:
        """The message set; empty when no record was appended (a wrapper needs one inside)."""
        if self._compression is Compression.NONE or not self._count:
            return bytes(self._buffer)
        timestamp, attributes = self._max_timestamp, 0
        if self._log_append_time is not None:
            timestamp, attributes = self._log_append_time, _TIMESTAMP_TYPE_BIT
        return wrap_messages(
            bytes(self._buffer),
            magic=self._magic,
            compression=self._compression,
            compression_level=self._compression_level,
            offset=self._base_offset + self._count - 1,
            timestamp=timestamp,
            attributes=attributes,
        )
