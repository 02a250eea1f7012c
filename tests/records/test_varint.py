"""The zigzag varint codec of v2 records."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkawire.records import CorruptRecordError, InvalidRecordError
from kafkawire.records.varint import (
    SMALL_VARINT_LIMIT,
    encode_varint,
    read_raw,
    read_varint,
    small_varints,
)

from .helpers import SETTINGS


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, "00"),
        (-1, "01"),
        (1, "02"),
        (-64, "7f"),
        (64, "8001"),
        (300, "d804"),
        (2**31 - 1, "feffffff0f"),
        (-(2**31), "ffffffff0f"),
        (-(2**63), "ffffffffffffffffff01"),
    ],
)
def test_zigzag_encodings_from_the_protocol_guide(value: int, encoded: str) -> None:
    assert encode_varint(value) == bytes.fromhex(encoded)


@SETTINGS
@given(st.integers(-(2**31), 2**31 - 1))
def test_varints_round_trip(value: int) -> None:
    data = encode_varint(value) + b"tail"
    assert read_varint(data, 0) == (value, len(data) - 4)


@SETTINGS
@given(st.integers(-(2**63), 2**63 - 1))
def test_varlongs_round_trip(value: int) -> None:
    raw, pos = read_raw(encode_varint(value), 0, 64)
    assert ((raw >> 1) ^ -(raw & 1), pos) == (value, len(encode_varint(value)))


def test_the_small_table_matches_the_encoder() -> None:
    table = small_varints()
    assert len(table) == SMALL_VARINT_LIMIT
    for raw in (0, 1, 127, 128, 8191, SMALL_VARINT_LIMIT - 1):
        value = (raw >> 1) ^ -(raw & 1)
        assert table[raw] == encode_varint(value)


@pytest.mark.parametrize(
    ("data", "bits", "reason"),
    [
        (b"\xff\xff\xff\xff\xff\x01", 32, "longer than 32 bits"),
        (b"\xff\xff\xff\xff\x1f", 32, "overflows 32 bits"),
        (b"\xff" * 9 + b"\x02", 64, "overflows 64 bits"),
        (b"\x80\x80", 32, "runs past the end"),
        (b"", 64, "runs past the end"),
    ],
)
def test_invalid_varints_are_errors(data: bytes, bits: int, reason: str) -> None:
    with pytest.raises(CorruptRecordError, match=reason):
        read_raw(data, 0, bits)


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1])
def test_values_past_int64_are_refused(value: int) -> None:
    with pytest.raises(InvalidRecordError):
        encode_varint(value)
