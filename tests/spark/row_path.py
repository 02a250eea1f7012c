"""The data source's read path before its Arrow columns came from C (main at 7a4210b): a
fetch decoded into Record values by ``KafkaClient.fetch`` (``_fetch_result``), then one
Arrow batch built from them row by row. Kept as the reference the new path must equal."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from kafkawire.client.client import _fetch_result
from kafkawire.records import Record
from kafkawire.spark.arrow import arrow_schema

_HEADER_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
_KEY, _VALUE, _OFFSET, _TIMESTAMP = map(attrgetter, ("key", "value", "offset", "timestamp"))


def old_to_batch(
    topic: str,
    partition: int,
    records: Sequence[Record],
    timestamp_types: Sequence[int],
    include_headers: bool,
) -> Any:
    count = len(records)
    stamps = pa.array(list(map(_TIMESTAMP, records)), pa.int64())
    columns = [
        pa.array(list(map(_KEY, records)), pa.binary()),
        pa.array(list(map(_VALUE, records)), pa.binary()),
        pa.repeat(pa.scalar(topic, pa.string()), count),
        pa.repeat(pa.scalar(partition, pa.int32()), count),
        pa.array(list(map(_OFFSET, records)), pa.int64()),
        pc.multiply(stamps, 1000).cast(pa.timestamp("us", tz="UTC")),
        pa.array(timestamp_types, pa.int32()),
    ]
    if include_headers:
        columns.append(
            pa.array(
                [[{"key": h.key, "value": h.value} for h in r.headers] for r in records],
                _HEADER_TYPE,
            )
        )
    return pa.RecordBatch.from_arrays(columns, schema=arrow_schema(include_headers))


def old_fetch_rows(
    answer: Any, topic: str, partition: int, start: int, *, end: int, include_headers: bool
) -> tuple[Any, int]:
    """What the old read_range yielded for one fetch answer (None: nothing), and where it
    fetched next."""
    result = _fetch_result(answer, start)
    records = [r for r in result.records if r.offset < end]
    batch = None
    if records:
        types = result.timestamp_types[: len(records)]
        batch = old_to_batch(topic, partition, records, types, include_headers)
    return batch, result.next_offset
