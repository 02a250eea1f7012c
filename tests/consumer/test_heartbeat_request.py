"""What each ConsumerGroupHeartbeat carries (sans-IO): everything on a join, afterwards only
what changed, everything again after a failure."""

from __future__ import annotations

import string
import uuid
from typing import Any

import pytest

from kafkawire.consumer.group.heartbeat_request import (
    HeartbeatAnswers,
    HeartbeatFields,
    new_member_id,
)
from kafkawire.consumer.settings import ConsumerSettings
from kafkawire.messages.consumer_group_heartbeat import v1 as consumer_heartbeat
from kafkawire.messages.share_group_heartbeat import v1 as share_heartbeat

TOPIC = uuid.UUID(int=7)


def fields(**options: Any) -> HeartbeatFields:
    settings = ConsumerSettings(
        bootstrap_servers="h:1", group_id="g", group_protocol="consumer", **options
    )
    return HeartbeatFields(settings)


def beat(
    hb: HeartbeatFields,
    epoch: int,
    topics: frozenset[str] = frozenset({"a"}),
    owned: dict[uuid.UUID, set[int]] | None = None,
    version: int = 1,
) -> Any:
    return hb.request(member_id="m", epoch=epoch, topics=topics, owned=owned or {}, version=version)


def optional(request: Any) -> tuple[Any, ...]:
    """The fields that go only when they changed."""
    return (
        request.rebalance_timeout_ms,
        request.subscribed_topic_names,
        request.subscribed_topic_regex,
        request.server_assignor,
        request.topic_partitions,
    )


UNCHANGED = (-1, None, None, None, None)


def test_a_join_carries_everything_then_only_what_changed() -> None:
    hb = fields(max_poll_interval_ms=1234, group_remote_assignor="uniform")
    join = beat(hb, 0, frozenset({"b", "a"}))
    assert (join.group_id, join.member_id, join.member_epoch) == ("g", "m", 0)
    assert optional(join) == (1234, ("a", "b"), "", "uniform", ())
    steady = beat(hb, 3, frozenset({"a", "b"}))
    assert (steady.member_epoch, optional(steady)) == (3, UNCHANGED)
    owned = beat(hb, 3, frozenset({"a", "b"}), {TOPIC: {2, 1}})
    assert [(tp.topic_id, tp.partitions) for tp in owned.topic_partitions] == [(TOPIC, (1, 2))]
    assert optional(owned)[:4] == UNCHANGED[:4]
    resubscribed = beat(hb, 3, frozenset({"c"}), {TOPIC: {1, 2}})
    assert optional(resubscribed) == (-1, ("c",), "", None, None)


def test_while_the_epoch_stays_0_every_heartbeat_is_a_full_join() -> None:
    hb = fields()
    for _ in range(2):  # a broker that cannot assign yet answers epoch 0
        join = beat(hb, 0)
        assert optional(join) == (300_000, ("a",), "", None, ())


def test_after_a_failure_everything_goes_again() -> None:
    hb = fields()
    beat(hb, 0)
    beat(hb, 1, owned={TOPIC: {0}})
    hb.forget()
    again = beat(hb, 1, owned={TOPIC: {0}})
    assert optional(again)[:3] == (300_000, ("a",), "")
    assert [(tp.topic_id, tp.partitions) for tp in again.topic_partitions] == [(TOPIC, (0,))]


def test_an_acknowledgement_repeats_the_owned_partitions() -> None:
    hb = fields()
    beat(hb, 1, owned={TOPIC: {0}})
    hb.acknowledge()
    ack = beat(hb, 2, owned={TOPIC: {0}})
    assert ack.topic_partitions is not None
    assert beat(hb, 2, owned={TOPIC: {0}}).topic_partitions is None


def test_version_0_has_no_regex() -> None:
    join = beat(fields(), 0, version=0)
    assert (join.subscribed_topic_names, join.subscribed_topic_regex) == (("a",), None)


def test_the_instance_id_goes_every_time_and_a_static_member_leaves_with_minus_2() -> None:
    static, dynamic = fields(group_instance_id="i"), fields()
    beat(static, 0)
    assert beat(static, 1).instance_id == "i"
    leave = static.leave("m")
    assert (leave.member_id, leave.member_epoch, leave.instance_id) == ("m", -2, "i")
    assert optional(leave) == UNCHANGED
    assert dynamic.leave("m").member_epoch == -1


def test_member_ids_are_kafka_uuid_strings() -> None:
    ids = {new_member_id() for _ in range(100)}
    assert len(ids) == 100
    assert {len(i) for i in ids} == {22}  # 16 bytes in base64 without padding
    assert not set("".join(ids)) - set(string.ascii_letters + string.digits + "-_")  # URL-safe


class Member(HeartbeatAnswers):
    def __init__(self) -> None:
        self.member_id, self.epoch = "mine", 0
        self._interval, self._next_beat, self._target = 5.0, 1e12, None


@pytest.mark.parametrize(
    ("response", "assignment", "partitions"),
    [
        (
            consumer_heartbeat.ConsumerGroupHeartbeatResponse,
            consumer_heartbeat.Assignment,
            consumer_heartbeat.ConsumerGroupHeartbeatResponseTopicPartitions,
        ),
        (
            share_heartbeat.ShareGroupHeartbeatResponse,
            share_heartbeat.Assignment,
            share_heartbeat.TopicPartitions,
        ),
    ],
    ids=["consumer", "share"],
)
def test_an_answer_sets_the_same_things_in_a_consumer_and_a_share_member(
    response: Any, assignment: Any, partitions: Any
) -> None:
    member = Member()
    member._take_answer(response(member_epoch=3, heartbeat_interval_ms=0))
    assert (member.member_id, member.epoch, member._interval) == ("mine", 3, 5.0)
    assert member._target is None
    member._take_answer(
        response(
            member_id="theirs",
            member_epoch=4,
            heartbeat_interval_ms=250,
            assignment=assignment(
                topic_partitions=(partitions(topic_id=TOPIC, partitions=(2, 0)),)
            ),
        )
    )
    assert (member.member_id, member.epoch, member._interval) == ("theirs", 4, 0.25)
    assert member._next_beat < 1e12  # no later than one new interval from now
    assert member._target == {TOPIC: frozenset({0, 2})}
