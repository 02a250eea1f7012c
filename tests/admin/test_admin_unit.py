"""The admin client's parts that need no broker: per-item results, settings, consumer
protocol data."""

from __future__ import annotations

import pytest

from kafkawire.admin import (
    Admin,
    AdminItemsError,
    AdminSettings,
    ItemResults,
    decode_assignment,
    decode_subscription,
    topic_name_problem,
)
from kafkawire.cluster import TopicPartition
from kafkawire.errors import DecodeError, TopicAlreadyExistsError
from kafkawire.messages.consumer_protocol_assignment import v1 as assignment_v1
from kafkawire.messages.consumer_protocol_subscription import v0 as subscription_v0
from kafkawire.protocol import encode


def test_one_failed_item_keeps_the_others_results() -> None:
    failure = TopicAlreadyExistsError("exists")
    results: ItemResults[str, int] = ItemResults({"a": 1, "b": failure, "c": 3})
    assert results["a"] == 1
    assert results["c"] == 3
    with pytest.raises(TopicAlreadyExistsError):
        results["b"]
    assert results.errors == {"b": failure}
    assert results.succeeded == {"a": 1, "c": 3}
    assert results.outcome("b") is failure
    with pytest.raises(AdminItemsError, match="1 failed: b: TOPIC_ALREADY_EXISTS") as caught:
        results.raise_for_errors()
    assert caught.value.errors == {"b": failure}
    assert ItemResults({"a": 1}).raise_for_errors() == {"a": 1}


def test_settings_are_checked_and_options_named() -> None:
    with pytest.raises(TypeError, match="'request_timeout'"):
        Admin("127.0.0.1:9092", request_timeout=1)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="request_timeout_ms"):
        AdminSettings(bootstrap_servers="h:1", request_timeout_ms=0)
    # One admin call is bounded by default_api_timeout_ms, as in the Java admin client.
    assert Admin("h:1", default_api_timeout_ms=5000)._cluster.settings.retry_timeout == 5.0


def _framed(version: int, body: bytes) -> bytes:
    return version.to_bytes(2, "big") + body


def test_consumer_protocol_data_decodes_at_its_version() -> None:
    assignment = assignment_v1.ConsumerProtocolAssignment(
        assigned_partitions=(assignment_v1.TopicPartition(topic="t", partitions=(0, 2)),)
    )
    assert decode_assignment(_framed(1, encode(assignment))) == (
        TopicPartition("t", 0),
        TopicPartition("t", 2),
    )
    subscription = subscription_v0.ConsumerProtocolSubscription(topics=("t", "u"))
    assert decode_subscription(_framed(0, encode(subscription))) == ("t", "u")
    assert decode_assignment(b"") == ()
    assert decode_subscription(b"") == ()


def test_a_newer_consumer_protocol_version_is_read_as_the_newest_known() -> None:
    # Newer versions only append fields: what kafkawire knows is read, the rest ignored.
    subscription = subscription_v0.ConsumerProtocolSubscription(topics=("t",))
    assert decode_subscription(_framed(99, encode(subscription) + b"\0" * 40)) == ("t",)


def test_bad_consumer_protocol_data_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="version"):
        decode_assignment(b"\x00")
    with pytest.raises(DecodeError):
        decode_assignment(_framed(0, b"\x00\x00\x00\x05"))


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("orders", None),
        ("a.b_c-D9", None),
        ("x" * 249, None),
        ("", "a topic name cannot be empty"),
        (".", "a topic cannot be named '.'"),
        ("..", "a topic cannot be named '..'"),
        ("x" * 250, "is 250 characters long, more than 249"),
        ("a b", "has a character other than ASCII letters, digits, '.', '_' and '-'"),
        ("é", "has a character other than ASCII letters"),
    ],
)
def test_topic_names_by_kafkas_rules(name: str, problem: str | None) -> None:
    found = topic_name_problem(name)
    assert found == problem if problem is None else problem in (found or "")
