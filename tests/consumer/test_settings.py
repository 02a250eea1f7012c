"""ConsumerSettings and ConsumerRecord: defaults, validation naming the option, frozen values."""

from __future__ import annotations

import dataclasses

import pytest

from kafkawire.cluster import TopicPartition
from kafkawire.consumer import Consumer
from kafkawire.consumer.fetching.record import ConsumerRecord, consumer_records
from kafkawire.consumer.settings import ConsumerSettings
from kafkawire.records import Header, RecordBatchBuilder, TimestampType, decode_batches


def test_java_defaults() -> None:
    s = ConsumerSettings(bootstrap_servers="127.0.0.1:9092")
    assert (s.group_id, s.group_protocol, s.auto_offset_reset) == (None, "classic", "latest")
    assert s.partition_assignment_strategy == ("range", "cooperative-sticky")
    assert (s.enable_auto_commit, s.auto_commit_interval_ms) == (True, 5000)
    assert (s.fetch_min_bytes, s.fetch_max_wait_ms, s.fetch_max_bytes) == (1, 500, 52428800)
    assert (s.max_partition_fetch_bytes, s.max_poll_records) == (1048576, 500)
    assert (s.max_poll_interval_ms, s.session_timeout_ms, s.heartbeat_interval_ms) == (
        300000,
        45000,
        3000,
    )
    assert s.isolation_level == "read_uncommitted"
    assert not s.read_committed
    assert s.default_api_timeout_ms == 60000
    # A call such as committed() is bounded by default_api_timeout_ms, as in the Java client.
    assert Consumer(settings=s)._cluster.settings.retry_timeout == 60.0


@pytest.mark.parametrize(
    ("option", "value", "named"),
    [
        ("auto_offset_reset", "smallest", "auto_offset_reset"),
        ("isolation_level", "committed", "isolation_level"),
        ("group_protocol", "share", "group_protocol"),
        ("fetch_max_bytes", 0, "fetch_max_bytes"),
        ("max_poll_records", -1, "max_poll_records"),
        ("partition_assignment_strategy", ["range", "fair"], "partition_assignment_strategy"),
        ("partition_assignment_strategy", [], "partition_assignment_strategy"),
        ("heartbeat_interval_ms", 50000, "heartbeat_interval_ms"),
        ("group_id", "", "group_id"),
        ("group_remote_assignor", "", "group_remote_assignor"),
        ("max_decompressed_bytes_per_fetch", 0, "max_decompressed_bytes_per_fetch"),
    ],
)
def test_bad_values_name_the_option(option: str, value: object, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        ConsumerSettings(bootstrap_servers="127.0.0.1:9092", **{option: value})  # type: ignore[arg-type]


def test_static_membership_needs_a_group() -> None:
    with pytest.raises(ValueError, match="group_instance_id needs a group_id"):
        ConsumerSettings(bootstrap_servers="h:1", group_instance_id="a")


def test_a_server_assignor_is_for_the_consumer_protocol() -> None:
    with pytest.raises(ValueError, match="group_remote_assignor needs group_protocol='consumer'"):
        ConsumerSettings(bootstrap_servers="h:1", group_id="g", group_remote_assignor="uniform")
    s = ConsumerSettings(
        bootstrap_servers="h:1",
        group_id="g",
        group_protocol="consumer",
        group_remote_assignor="uniform",
    )
    assert s.group_remote_assignor == "uniform"


def test_one_strategy_by_name() -> None:
    s = ConsumerSettings(bootstrap_servers="h:1", partition_assignment_strategy="roundrobin")
    assert s.partition_assignment_strategy == ("roundrobin",)


def test_records_are_frozen_deserialized_and_start_at_the_position() -> None:
    builder = RecordBatchBuilder(base_offset=6)
    builder.append(b"j", b"11", timestamp=999)
    builder.append(b"k", b"12", timestamp=1000, headers=[("h", b"x")])
    batch = next(decode_batches(builder.build()))
    out: list[ConsumerRecord] = []
    end = consumer_records(
        out, TopicPartition("t", 2), batch, 7, key_deserializer=bytes.decode, value_deserializer=int
    )
    (record,) = out
    assert end == 8
    assert record == ConsumerRecord(
        "t", 2, 7, 1000, TimestampType.CREATE_TIME, "k", 12, (Header("h", b"x"),), -1
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.offset = 8  # type: ignore[misc]


def test_a_rebalance_drops_what_was_fetched_for_iteration_of_revoked_partitions() -> None:
    consumer = Consumer(bootstrap_servers="127.0.0.1:9092", group_id="g")
    kept, revoked = TopicPartition("t", 0), TopicPartition("t", 1)
    consumer._subscriptions.assign([kept, revoked])
    consumer._iterated.extend(_record(tp, offset) for tp in (kept, revoked) for offset in (0, 1))
    consumer._subscriptions.assign([kept])  # what the group coordinator does on a rebalance
    assert [(r.partition, r.offset) for r in consumer._iterated] == [(0, 0), (0, 1)]


def _record(tp: TopicPartition, offset: int) -> ConsumerRecord:
    return ConsumerRecord(
        topic=tp.topic,
        partition=tp.partition,
        offset=offset,
        timestamp=0,
        timestamp_type=TimestampType.CREATE_TIME,
        key=None,
        value=b"v",
        headers=(),
        leader_epoch=-1,
    )
