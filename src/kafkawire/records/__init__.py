"""The records layer: record batches and legacy message sets, to and from bytes (sans-IO).

Reading: :func:`decode_batches` walks a FetchResponse partition's ``records`` (a
``memoryview``; any bytes-like works) and yields :class:`RecordBatch` (magic 2) and
:class:`LegacyRecordBatch` (magic 0 and 1) values whose ``records`` decode on first use.
:func:`read_committed` / :class:`ReadCommittedFilter` apply the FetchResponse's aborted
transactions; :func:`decode_end_transaction_marker` reads a control batch's marker.

Writing: :class:`RecordBatchBuilder` (magic 2) and :class:`LegacyBatchBuilder` (magic 0 and 1)
append records and ``build()`` the ``bytes`` a ProduceRequest partition takes as ``records``.

Every codec Kafka defines reads in every format and writes in every format Kafka allows it
in (zstd needs magic 2); see :mod:`.compression`. Decompression is lazy and bounded, per
batch (``max_decompressed_size``) and per records field (``max_total_decompressed_size``, see
:mod:`.budget`), and every decoding error names its batch's base offset.

Module map: ``model`` (the values), ``reader`` (``decode_batches``), ``batch_v2`` (v2 header
and crc32c) with ``v2_records`` (the record loop and encoder) and ``varint``, ``legacy``
(magic 0/1), ``compression`` with ``xerial`` (snappy framing), ``lz4_frame``
(KAFKA-3160) and ``output`` (the buffer codecs fill), ``budget`` (the bound per records
field), ``builder``, ``control`` (transaction markers), ``transactions``
(read_committed), ``arrow_columns`` (records as Arrow column buffers, for the Spark data
source), ``errors``. Nothing here does I/O or imports the protocol layer.
"""

from .budget import (
    DEFAULT_DECOMPRESSION_RATIO,
    DEFAULT_MAX_TOTAL_DECOMPRESSED_SIZE,
    default_max_total_decompressed_size,
)
from .builder import BatchBuilder, HeaderInput, LegacyBatchBuilder, RecordBatchBuilder
from .compression import DEFAULT_MAX_DECOMPRESSED_SIZE, compress, compressed_bound, decompress
from .control import (
    ControlType,
    EndTransactionMarker,
    control_type,
    decode_end_transaction_marker,
    end_transaction_batch,
)
from .errors import (
    CorruptRecordError,
    DecompressionLimitError,
    InvalidRecordError,
    RecordsError,
    UnsupportedCodecError,
)
from .model import (
    NO_TIMESTAMP,
    Batch,
    BytesLike,
    Compression,
    Header,
    LazyRecords,
    LegacyRecordBatch,
    Record,
    RecordBatch,
    RecordsAs,
    TimestampType,
)
from .reader import decode_batches
from .transactions import (
    AbortedTransaction,
    AbortedTransactionLike,
    ReadCommittedFilter,
    read_committed,
)

__all__ = [
    "DEFAULT_DECOMPRESSION_RATIO",
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "DEFAULT_MAX_TOTAL_DECOMPRESSED_SIZE",
    "NO_TIMESTAMP",
    "AbortedTransaction",
    "AbortedTransactionLike",
    "Batch",
    "BatchBuilder",
    "BytesLike",
    "Compression",
    "ControlType",
    "CorruptRecordError",
    "DecompressionLimitError",
    "EndTransactionMarker",
    "Header",
    "HeaderInput",
    "InvalidRecordError",
    "LazyRecords",
    "LegacyBatchBuilder",
    "LegacyRecordBatch",
    "ReadCommittedFilter",
    "Record",
    "RecordBatch",
    "RecordBatchBuilder",
    "RecordsAs",
    "RecordsError",
    "TimestampType",
    "UnsupportedCodecError",
    "compress",
    "compressed_bound",
    "control_type",
    "decode_batches",
    "decode_end_transaction_marker",
    "decompress",
    "default_max_total_decompressed_size",
    "end_transaction_batch",
    "read_committed",
]
