"""ProducerSettings: the compression level is checked against its codec's range, as Kafka's
CompressionType checks compression.<codec>.level (zlib refused gzip level 10 only when a batch
was compressed, in the sender)."""

from __future__ import annotations

import re

import pytest

from kafkawire.producer import ProducerSettings


@pytest.mark.parametrize(
    ("codec", "level"),
    [
        ("gzip", 1),
        ("gzip", 9),
        ("gzip", -1),
        ("lz4", 1),
        ("lz4", 17),
        ("zstd", -131072),
        ("zstd", 22),
    ],
)
def test_a_level_in_its_codecs_range_is_taken(codec: str, level: int) -> None:
    settings = ProducerSettings(
        bootstrap_servers="h:1", compression_type=codec, compression_level=level
    )  # type: ignore[arg-type]
    assert settings.compression_level == level


@pytest.mark.parametrize(
    ("codec", "level", "message"),
    [
        ("gzip", 10, "compression_level must be 1 to 9 (or -1) for gzip, not 10"),
        ("gzip", 0, "compression_level must be 1 to 9 (or -1) for gzip, not 0"),
        ("lz4", 18, "compression_level must be 1 to 17 for lz4, not 18"),
        ("zstd", 23, "compression_level must be -131072 to 22 for zstd, not 23"),
        ("snappy", 1, "compression_level is for gzip, lz4 and zstd, not compression_type 'snappy'"),
        ("none", 1, "compression_level is for gzip, lz4 and zstd, not compression_type 'none'"),
    ],
)
def test_a_level_out_of_its_codecs_range_is_refused(codec: str, level: int, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        ProducerSettings(bootstrap_servers="h:1", compression_type=codec, compression_level=level)  # type: ignore[arg-type]
