"""Records to Arrow record batches with exactly the schema of Spark's Kafka source, and the
columns a write takes.

Spark checks the Arrow batches a Python data source returns against the declared schema, type
for type: partition and timestampType are int32, offset int64, timestamp microseconds in UTC,
headers a list of (string, binary) structs. The columns are built from the buffers
:class:`~kafkawire.records.arrow_columns.RecordColumns` fills (no Python object per record):
each ``bytes`` buffer is wrapped as it is (``pa.py_buffer``), not copied.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from kafkawire.records.arrow_columns import BinaryBuffers, ColumnBuffers

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


def to_batch(topic: str, partition: int, columns: ColumnBuffers, include_headers: bool) -> Any:
    """One Arrow record batch of the rows of ``columns``, all of ``topic``/``partition``."""
    rows = columns.rows
    arrays = [
        _binary(pa.binary(), rows, columns.keys),
        _binary(pa.binary(), rows, columns.values),
        pa.repeat(pa.scalar(topic, pa.string()), rows),
        pa.repeat(pa.scalar(partition, pa.int32()), rows),
        _fixed(pa.int64(), rows, columns.offsets),
        _fixed(_FIELDS[5][1], rows, columns.timestamps),
        _fixed(pa.int32(), rows, columns.timestamp_types),
    ]
    if include_headers:
        headers = columns.headers
        assert headers is not None, "the columns were built without headers"
        count = len(headers.keys.offsets) // 4 - 1  # one int32 offset per header, and one
        entries = pa.StructArray.from_arrays(
            [
                _binary(pa.string(), count, headers.keys),
                _binary(pa.binary(), count, headers.values),
            ],
            fields=list(_HEADER_TYPE.value_type),
        )
        arrays.append(
            pa.ListArray.from_buffers(
                _HEADER_TYPE, rows, [None, pa.py_buffer(headers.lists)], children=[entries]
            )
        )
    return pa.RecordBatch.from_arrays(arrays, schema=_SCHEMAS[include_headers])


def _fixed(kind: Any, rows: int, data: bytes) -> Any:
    return pa.Array.from_buffers(kind, rows, [None, pa.py_buffer(data)])


def _binary(kind: Any, count: int, buffers: BinaryBuffers) -> Any:
    validity = None if buffers.validity is None else pa.py_buffer(buffers.validity)
    return pa.Array.from_buffers(
        kind,
        count,
        [validity, pa.py_buffer(buffers.offsets), pa.py_buffer(buffers.data)],
        null_count=buffers.null_count,
    )
