"""The compiled v2 record loop (``_accel.c``); see :mod:`kafkawire.records.v2_records`."""

from .errors import CorruptRecordError
from .model import Header, Record

def setup(
    record_class: type[Record], header_class: type[Header], corrupt_error: type[CorruptRecordError]
) -> None: ...
def read_records(
    buf: bytes, *, base_offset: int, base_timestamp: int, log_append_time: int | None, count: int
) -> tuple[Record, ...]: ...
def encode_record(
    offset_delta: int, timestamp_delta: int, key: bytes | None, value: bytes | None
) -> bytes: ...
