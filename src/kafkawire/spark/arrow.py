"""Records to Arrow record batches with exactly the schema of Spark's Kafka source, and the
columns a write takes.

Spark checks the Arrow batches a Python data source returns against the declared schema, type
for type: partition and timestampType are int32, offset int64, timestamp microseconds in UTC,
headers a list of (string, binary) structs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from kafkawire.records import Record

__all__ = ["arrow_schema", "read_schema", "to_batch"]

_COLUMNS = (
    "key binary, value binary, topic string, partition int, offset long,"
    " timestamp timestamp, timestampType int"
)
_HEADERS = "headers array<struct<key: string, value: binary>>"

_HEADER_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
_FIELDS = [
    ("key", pa.binary()),
    ("value", pa.binary()),
    ("topic", pa.string()),
    ("partition", pa.int32()),
    ("offset", pa.int64()),
    ("timestamp", pa.timestamp("us", tz="UTC")),
    ("timestampType", pa.int32()),
]
_SCHEMAS = {False: pa.schema(_FIELDS), True: pa.schema([*_FIELDS, ("headers", _HEADER_TYPE)])}


def read_schema(include_headers: bool) -> str:
    """The read schema as Spark DDL: that of Spark's Kafka source."""
    return f"{_COLUMNS}, {_HEADERS}" if include_headers else _COLUMNS


def arrow_schema(include_headers: bool) -> Any:
    return _SCHEMAS[include_headers]


def to_batch(topic: str, partition: int, records: Sequence[Record], include_headers: bool) -> Any:
    """One Arrow record batch of ``records`` of one partition.

    timestampType is 0 (CreateTime) for every record: the client's records do not carry their
    batch's timestamp type.
    """
    count = len(records)
    columns = [
        pa.array([r.key for r in records], pa.binary()),
        pa.array([r.value for r in records], pa.binary()),
        pa.array([topic] * count, pa.string()),
        pa.array([partition] * count, pa.int32()),
        pa.array([r.offset for r in records], pa.int64()),
        # Milliseconds since the epoch, as microseconds: exact, unlike a datetime round trip.
        pa.array([r.timestamp * 1000 for r in records], pa.int64()).cast(
            pa.timestamp("us", tz="UTC")
        ),
        pa.array([0] * count, pa.int32()),
    ]
    if include_headers:
        columns.append(
            pa.array(
                [[{"key": h.key, "value": h.value} for h in r.headers] for r in records],
                _HEADER_TYPE,
            )
        )
    return pa.RecordBatch.from_arrays(columns, schema=_SCHEMAS[include_headers])
