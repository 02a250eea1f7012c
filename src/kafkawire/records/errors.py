"""Errors of the records layer, all :class:`kafkawire.errors.ProtocolError` subclasses.

Decoding errors name the batch they come from by its base offset (for a legacy message set,
the offset of the top-level message), since that is what a consumer reports and skips past:

- :class:`CorruptRecordError`: bytes that do not form a valid batch or record (bad crc, bad
  magic, a length past the end, an invalid varint, corrupt compressed data, a record count
  that does not match the records);
- :class:`DecompressionLimitError`: a compressed payload that inflates past the configured
  bound (a decompression bomb, or a bound set too low for real data);
- :class:`UnsupportedCodecError`: a compression codec id that Kafka does not define.

:class:`InvalidRecordError` is the one raised while *writing*: a record the chosen format
cannot carry (headers in a legacy message set, zstd below magic 2, a value out of its field's
range).
"""

from __future__ import annotations

from kafkawire.errors import ProtocolError

__all__ = [
    "CorruptRecordError",
    "DecompressionLimitError",
    "InvalidRecordError",
    "RecordsError",
    "UnsupportedCodecError",
]


class RecordsError(ProtocolError):
    """A record batch that cannot be read or written.

    ``base_offset`` is the base offset of the batch the error is about, or ``None`` where no
    batch is involved yet (a codec called on its own, a builder's argument).
    """

    def __init__(self, reason: str, base_offset: int | None = None) -> None:
        self.reason = reason
        self.base_offset = base_offset
        where = "" if base_offset is None else f"batch at offset {base_offset}: "
        super().__init__(f"{where}{reason}")

    def at(self, base_offset: int) -> RecordsError:
        """The same error, anchored at the batch with ``base_offset``."""
        return type(self)(self.reason, base_offset)


class CorruptRecordError(RecordsError):
    """Bytes that do not form a valid record batch, message set or record."""


class DecompressionLimitError(RecordsError):
    """A compressed payload whose output would pass the decompression limit."""


class UnsupportedCodecError(RecordsError):
    """A compression codec id outside those Kafka defines (none, gzip, snappy, lz4, zstd)."""


class InvalidRecordError(RecordsError, ValueError):
    """A record or batch option that the chosen format cannot encode."""
