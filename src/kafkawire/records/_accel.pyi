"""The compiled v2 record loop and record encoder (``_accel.c``); see
:mod:`kafkawire.records.v2_records`."""

from collections.abc import Sequence
from typing import Any

from .columns import ColumnSpec
from .errors import CorruptRecordError, InvalidRecordError
from .model import BytesLike, Header, Record

_Headers = Sequence[Header | tuple[str, BytesLike | None]]

def setup(
    record_class: type[Record],
    header_class: type[Header],
    corrupt_error: type[CorruptRecordError],
    invalid_error: type[InvalidRecordError],
) -> None: ...
def measure_columns(
    *,
    values: ColumnSpec,
    keys: ColumnSpec,
    headers: Sequence[_Headers | None] | None,
    overhead: int,
    header_overhead: int,
) -> tuple[int, int, int]: ...
def read_records_into(
    buf: bytes,
    *,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    count: int,
    out: list[Any],
    cls: type[Any],
    names: tuple[str, ...],
    values: tuple[Any, ...],
    start: int,
) -> int: ...
def read_records(
    buf: bytes, *, base_offset: int, base_timestamp: int, log_append_time: int | None, count: int
) -> tuple[Record, ...]: ...

class EncodedRecords:
    """The compiled twin of :class:`~kafkawire.records.v2_records.EncodedRecordsPure`."""

    def __len__(self) -> int: ...
    @property
    def base_timestamp(self) -> int: ...
    @property
    def max_timestamp(self) -> int: ...
    @property
    def encoded_size(self) -> int: ...
    def encoded(self) -> bytes: ...
    def append(
        self,
        key: BytesLike | None,
        value: BytesLike | None,
        *,
        timestamp: int,
        headers: Sequence[Header | tuple[str, BytesLike | None]] = (),
    ) -> int: ...
    def append_columns(
        self,
        *,
        values: ColumnSpec,
        keys: ColumnSpec,
        headers: Sequence[_Headers | None] | None,
        timestamps: ColumnSpec,
        timestamp: int,
        order: BytesLike | None,
        start: int,
        stop: int,
        room: int,
        soft_room: int,
        overhead: int,
        header_overhead: int,
    ) -> tuple[int, int, int]: ...

class RecordColumns:
    """The compiled twin of :class:`~kafkawire.records.arrow_columns.RecordColumnsPure`."""

    def __init__(self, include_headers: bool) -> None: ...
    def __len__(self) -> int: ...
    def append(
        self,
        buf: BytesLike,
        *,
        base_offset: int,
        base_timestamp: int,
        log_append_time: int | None,
        count: int,
        start: int,
        end: int,
        timestamp_type: int,
    ) -> int: ...
    def finish(self) -> tuple[Any, ...]: ...
