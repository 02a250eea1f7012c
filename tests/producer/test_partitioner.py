"""Partitioning as Kafka's Java client does it: murmur2 of the key, sticky without a key."""

from __future__ import annotations

import itertools
import random
import warnings
from array import array
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkawire.producer import murmur2, partition_for_key, partitioner
from kafkawire.producer.partitioner import StickyPartitioner
from kafkawire.records.columns import column

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


needs_accel = pytest.mark.skipif(
    not partitioner.ACCELERATED, reason="the C extension is not built, or disabled"
)
keys_or_none = st.lists(st.none() | st.binary(max_size=40), max_size=50)


@needs_accel
@given(st.binary(max_size=64), st.integers(1, 10_000))
def test_the_compiled_key_hash_gives_what_the_pure_one_gives(key: bytes, count: int) -> None:
    assert partitioner.murmur2(key) == partitioner.murmur2_pure(key)
    assert partitioner.murmur2(bytearray(key)) == partitioner.murmur2_pure(memoryview(key))
    assert partitioner.partition_for_key(key, count) == partitioner.partition_for_key_pure(
        key, count
    )


@given(keys_or_none, st.integers(1, 1_000))
def test_key_partitions_are_partition_for_key_of_each_key(
    keys: list[bytes | None], count: int
) -> None:
    chosen = array("i", partitioner.key_partitions(column(keys, "keys"), count))
    assert chosen.tolist() == [-1 if k is None else partition_for_key(k, count) for k in keys]
    assert partitioner.key_partitions_pure(column(keys, "keys"), count) == chosen.tobytes()
    arrow = column(pa.array(keys, pa.binary()), "keys")
    assert partitioner.key_partitions(arrow, count) == chosen.tobytes()
    assert partitioner.key_partitions_pure(arrow, count) == chosen.tobytes()


@pytest.mark.parametrize(
    "function",
    [
        partitioner.partition_for_key,
        partitioner.partition_for_key_pure,
        lambda key, count: partitioner.key_partitions(column([key], "keys"), count),
        lambda key, count: partitioner.key_partitions_pure(column([key], "keys"), count),
    ],
    ids=["compiled", "pure", "compiled list", "pure list"],
)
def test_keys_that_are_not_bytes_and_counts_below_one_are_refused(function: Any) -> None:
    with pytest.raises(TypeError, match="must be bytes"):
        function("text", 3)
    with pytest.raises(ValueError, match="at least one partition, not 0"):
        function(b"k", 0)
