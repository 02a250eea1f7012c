"""The producer's per-record steps, compiled (``_accel.c``); see
:mod:`kafkawire.producer.partitioner` and :mod:`kafkawire.producer.batch`."""

import asyncio
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
