"""Values as JSON: generated messages, record batches and records.

Bytes have one documented encoding. A bytes field of a message is always
``{"base64": "..."}``. A record's key, value and header values are a JSON string when they are
valid UTF-8 and ``{"base64": "..."}`` when they are not, so a string is always text and an
object always raw bytes. The ``records`` field of Produce and Fetch is shown as its record
batches.
"""

from __future__ import annotations

import base64
import dataclasses
import uuid
from typing import Any

from kafkawire.consumer import ConsumerRecord
from kafkawire.records import Batch, Record, RecordsError, decode_batches

__all__ = ["base64_of", "message_json", "record_json", "text_or_base64"]

BytesLike = bytes | bytearray | memoryview


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


def message_json(value: Any, name: str = "") -> Any:
    """A generated message (or any part of one) as JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: message_json(getattr(value, f.name), f.name)
            for f in dataclasses.fields(value)
            # Unknown tagged fields are almost always empty: shown only when there are some.
            if f.name != "unknown_tagged_fields" or getattr(value, f.name)
        }
    if isinstance(value, BytesLike):
        return _batches_json(value) if name == "records" else base64_of(value)
    if isinstance(value, tuple | list):
        return [message_json(item) for item in value]
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def _batches_json(data: BytesLike) -> Any:
    try:
        return [_batch_json(batch) for batch in decode_batches(data)]
    except RecordsError as exc:
        return {**base64_of(data), "error": str(exc)}


def _batch_json(batch: Batch) -> dict[str, Any]:
    shown: dict[str, Any] = {
        f.name: getattr(batch, f.name) for f in dataclasses.fields(batch) if f.name != "records"
    }
    shown["compression"] = batch.compression.name.lower()
    shown["timestamp_type"] = batch.timestamp_type.name.lower()
    shown["records"] = [record_json(record) for record in batch.records]
    return shown
