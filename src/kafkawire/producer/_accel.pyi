"""The producer's per-record steps, compiled (``_accel.c``); see
:mod:`kafkawire.producer.partitioner` and :mod:`kafkawire.producer.batch`."""

import asyncio
from collections.abc import Callable
from typing import Any

from kafkawire.records import RecordBatchBuilder
from kafkawire.records.columns import ColumnSpec

def setup(delivery_class: type[Any]) -> None: ...
def murmur2(data: bytes) -> int: ...
def partition_for_key(key: bytes, partition_count: int) -> int: ...
def key_partitions(keys: ColumnSpec, partition_count: int) -> bytes: ...
def group_by_partition(partitions: bytes, partition_count: int) -> tuple[bytes, list[int]]: ...
def append(
    builder: RecordBatchBuilder,
    future: asyncio.Future[Any],
    key: bytes | None,
    value: bytes | None,
) -> Any: ...
def setup_send_path(
    batch_class: type[Any],
    use_class: type[Any],
    checked_partition: Callable[[str, Any, int], int],
    record_overhead: int,
) -> None: ...

class SendPath:
    def __init__(
        self,
        accumulator: Any,
        sticky: Any,
        counts: dict[str, int],
        max_record_size: int,
        choose: Callable[[str, bytes | None, int, int], Any] | None,
    ) -> None: ...
    def send(self, topic: str, value: Any, key: Any, partition: Any) -> Any: ...
