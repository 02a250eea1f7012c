"""What the builders refuse, and that a refused record leaves the builder as it was."""

from __future__ import annotations

import pytest

from kafkawire.records import (
    Compression,
    Header,
    InvalidRecordError,
    LegacyBatchBuilder,
    RecordBatchBuilder,
    UnsupportedCodecError,
    decode_batches,
)


def test_legacy_sets_take_no_headers() -> None:
    builder = LegacyBatchBuilder(1)
    with pytest.raises(InvalidRecordError, match="cannot carry headers"):
        builder.append(None, b"v", timestamp=0, headers=[("h", None)])
    assert len(builder) == 0


@pytest.mark.parametrize("magic", [2, 3, -1])
def test_legacy_builders_are_for_magic_0_and_1(magic: int) -> None:
    with pytest.raises(InvalidRecordError, match="magic 0 or 1"):
        LegacyBatchBuilder(magic)


def test_magic_0_has_no_log_append_time() -> None:
    with pytest.raises(InvalidRecordError, match="no timestamps"):
        LegacyBatchBuilder(0, log_append_time=5)


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_sets_refuse_zstd(magic: int) -> None:
    with pytest.raises(InvalidRecordError, match="zstd compression needs magic 2"):
        LegacyBatchBuilder(magic, compression=Compression.ZSTD)


@pytest.mark.parametrize("codec_id", [5, 7])
def test_unknown_codecs_are_refused(codec_id: int) -> None:
    with pytest.raises(UnsupportedCodecError):
        RecordBatchBuilder(compression=codec_id)  # type: ignore[arg-type]
    with pytest.raises(UnsupportedCodecError):
        LegacyBatchBuilder(1, compression=codec_id)  # type: ignore[arg-type]


def test_codec_ids_are_accepted_as_ints() -> None:
    builder = RecordBatchBuilder(compression=1)  # type: ignore[arg-type]
    builder.append(None, b"v", timestamp=0)
    assert next(iter(decode_batches(builder.build()))).compression is Compression.GZIP


def test_values_out_of_range_are_refused() -> None:
    with pytest.raises(InvalidRecordError, match="out of range"):
        RecordBatchBuilder(producer_epoch=2**15).build()
    builder = RecordBatchBuilder()
    builder.append(None, b"v", timestamp=-(2**63))
    with pytest.raises(InvalidRecordError, match="does not fit in a varlong"):
        builder.append(None, b"v", timestamp=2**63 - 1)
    with pytest.raises(InvalidRecordError, match="not an int64"):
        LegacyBatchBuilder(1).append(None, b"v", timestamp=2**63)
    with pytest.raises(InvalidRecordError, match="offset"):
        LegacyBatchBuilder(1, base_offset=2**63).append(None, b"v", timestamp=0)


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_a_refused_record_leaves_the_builder_unchanged(magic: int) -> None:
    builder = RecordBatchBuilder() if magic == 2 else LegacyBatchBuilder(magic)
    builder.append(b"k", b"v", timestamp=1)
    before = builder.build()
    with pytest.raises(TypeError):
        builder.append("not bytes", b"v", timestamp=2)  # type: ignore[arg-type]
    assert builder.build() == before
    assert len(builder) == 1


def test_a_refused_first_record_leaves_no_base_timestamp() -> None:
    builder = RecordBatchBuilder()
    with pytest.raises(TypeError):
        builder.append("not bytes", b"v", timestamp=5)  # type: ignore[arg-type]
    assert builder.build() == RecordBatchBuilder().build()


def test_headers_may_be_pairs_or_header_values() -> None:
    builder = RecordBatchBuilder()
    builder.append(None, None, timestamp=0, headers=[("a", b"1"), Header("b", None)])
    [record] = next(iter(decode_batches(builder.build()))).records
    assert record.headers == (Header("a", b"1"), Header("b", None))


def test_an_empty_legacy_builder_builds_nothing() -> None:
    for codec in (Compression.NONE, Compression.GZIP):
        assert LegacyBatchBuilder(1, compression=codec).build() == b""
