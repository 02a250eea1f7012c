"""Partitioning as Kafka's Java client does it: murmur2 of the key, sticky without a key."""

from __future__ import annotations

import itertools
import random
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkawire.producer import murmur2, partition_for_key
from kafkawire.producer.partitioner import StickyPartitioner

with warnings.catch_warnings():
    # kafka-python 3.0 loads its schemas through a deprecated importlib.resources call.
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.partitioner.default import murmur2 as kafka_python_murmur2


def _signed(value: int) -> int:
    return value - 2**32 if value >= 2**31 else value


# From Kafka's own UtilsTest.testMurmur2 (signed 32-bit results).
@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (b"21", -973932308),
        (b"foobar", -790332482),
        (b"a-little-bit-long-string", -985981536),
        (b"a-little-bit-longer-string", -1486304829),
        (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
        (b"abc", 479470107),
    ],
)
def test_murmur2_matches_kafkas_own_vectors(key: bytes, expected: int) -> None:
    assert _signed(murmur2(key)) == expected


def test_10000_random_keys_land_where_kafka_python_puts_them() -> None:
    rng = random.Random(7)
    for _ in range(10_000):
        key = rng.randbytes(rng.randrange(0, 40))
        count = rng.randrange(1, 200)
        expected = (kafka_python_murmur2(key) & 0x7FFFFFFF) % count
        assert partition_for_key(key, count) == expected


@given(st.binary(max_size=64))
def test_murmur2_agrees_with_kafka_python_on_any_bytes(key: bytes) -> None:
    assert murmur2(key) == kafka_python_murmur2(key)


def test_records_without_a_key_stick_to_a_partition_for_a_batch() -> None:
    sticky = StickyPartitioner(batch_size=1000)
    chosen = [sticky.partition("t", 6, 100) for _ in range(100)]
    runs = [chosen[i : i + 10] for i in range(0, 100, 10)]
    for run in runs:
        assert len(set(run)) == 1  # 10 records of 100 bytes fill one batch of 1000
    for before, after in itertools.pairwise(runs):
        assert before[0] != after[0]  # the next batch goes to another partition


def test_a_topic_that_shrank_or_has_one_partition_is_handled() -> None:
    sticky = StickyPartitioner(batch_size=10)
    assert {sticky.partition("t", 1, 50) for _ in range(20)} == {0}
    sticky.partition("u", 8, 1)
    assert all(0 <= sticky.partition("u", 2, 50) < 2 for _ in range(20))
