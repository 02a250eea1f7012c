"""Values as JSON: generated messages, record batches and records.

Bytes have one documented encoding. A bytes field of a message is always
``{"base64": "..."}``. A record's key, value and header values are a JSON string when they are
valid UTF-8 and ``{"base64": "..."}`` when they are not, so a string is always text and an
object always raw bytes. The ``records`` field of Produce and Fetch is shown as its record
batches.

What the compressed batches of one frame decompress to is bounded all together (a
:class:`RecordsBudget`): a 2 KB Produce frame holding a zstd batch of 60 MiB of zeros wrote
360 MB of JSON. A batch past the budget, and every compressed batch after it in the frame,
is shown without its records, with ``records_cut`` saying why.
"""

from __future__ import annotations

import base64
import dataclasses
import uuid
from collections.abc import Iterable
from typing import Any

from kafkawire.consumer import ConsumerRecord
from kafkawire.records import (
    Batch,
    Compression,
    DecompressionLimitError,
    Record,
    RecordsError,
    decode_batches,
)

__all__ = ["RecordsBudget", "base64_of", "message_json", "record_json", "text_or_base64"]

BytesLike = bytes | bytearray | memoryview
# The most bytes of framing a record can take in a batch's decompressed payload: a v2 record's
# length, attributes, timestamp and offset deltas, key and value lengths and header count as
# the longest varints (36; a legacy message takes 34), and 10 a header.
_RECORD_FRAMING = 36
_HEADER_FRAMING = 10


class RecordsBudget:
    """What the compressed record batches of one frame may still decompress to, together.

    A records field is decoded within what is left; each batch it decompresses is then
    charged its records' bytes and the most framing they can have, never less than it took.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.left = limit
        self.cut_batches = 0  # compressed batches shown without their records

    def charge(self, records: Iterable[Record]) -> None:
        self.left -= sum(
            _RECORD_FRAMING
            + len(r.key or b"")
            + len(r.value or b"")
            + sum(_HEADER_FRAMING + len(h.key.encode()) + len(h.value or b"") for h in r.headers)
            for r in records
        )

    def cut(self) -> str:
        self.left = 0  # the batches after it are not decompressed: the work stays bounded
        self.cut_batches += 1
        return (
            f"not decompressed: the frame's batches would decompress past"
            f" --max-decompressed ({self.limit:,} bytes)"
        )


def base64_of(data: BytesLike) -> dict[str, str]:
    return {"base64": base64.b64encode(data).decode("ascii")}


def text_or_base64(data: BytesLike | None) -> str | dict[str, str] | None:
    if data is None:
        return None
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        return base64_of(data)


def record_json(record: Record | ConsumerRecord) -> dict[str, Any]:
    return {
        "offset": record.offset,
        "timestamp": record.timestamp,
        "key": text_or_base64(record.key),
        "value": text_or_base64(record.value),
        "headers": [[h.key, text_or_base64(h.value)] for h in record.headers],
    }


def message_json(value: Any, budget: RecordsBudget, name: str = "") -> Any:
    """A generated message (or any part of one) as JSON values; its record batches
    decompress within ``budget``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: message_json(getattr(value, f.name), budget, f.name)
            for f in dataclasses.fields(value)
            # Unknown tagged fields are almost always empty: shown only when there are some.
            if f.name != "unknown_tagged_fields" or getattr(value, f.name)
        }
    if isinstance(value, BytesLike):
        return _batches_json(value, budget) if name == "records" else base64_of(value)
    if isinstance(value, tuple | list):
        return [message_json(item, budget) for item in value]
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def _batches_json(data: BytesLike, budget: RecordsBudget) -> Any:
    left = max(budget.left, 0)
    try:
        batches = decode_batches(data, max_decompressed_size=left, max_total_decompressed_size=left)
        return [_batch_json(batch, budget) for batch in batches]
    except RecordsError as exc:
        return {**base64_of(data), "error": str(exc)}


def _batch_json(batch: Batch, budget: RecordsBudget) -> dict[str, Any]:
    shown: dict[str, Any] = {
        f.name: getattr(batch, f.name) for f in dataclasses.fields(batch) if f.name != "records"
    }
    shown["compression"] = batch.compression.name.lower()
    shown["timestamp_type"] = batch.timestamp_type.name.lower()
    if batch.compression is Compression.NONE:
        records = tuple(batch.records)  # no bigger than its part of the frame
    elif budget.left <= 0:
        shown["records_cut"] = budget.cut()
        return shown
    else:
        try:
            records = tuple(batch.records)  # they decompress on first use: now
        except DecompressionLimitError:
            shown["records_cut"] = budget.cut()
            return shown
        budget.charge(records)
    shown["records"] = [record_json(record) for record in records]
    return shown
