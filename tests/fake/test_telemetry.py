"""The fake cluster's client metrics (KIP-714) by Kafka's ``ClientMetricsManager`` rules, asked
on the wire with raw requests, on a clock the test moves."""

from __future__ import annotations

import gzip
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kafkawire.client import KafkaClient
from kafkawire.errors import BrokerError
from kafkawire.messages.get_telemetry_subscriptions import v0 as get_subscriptions
from kafkawire.messages.push_telemetry import v0 as push_telemetry
from kafkawire.testing.fake import FakeCluster, ManualClock
from kafkawire.testing.fake.codes import Error

ZERO = uuid.UUID(int=0)
PAYLOAD = b"metrics data"


class Telemetry:
    """A client asking one broker, and the clock."""

    def __init__(self, cluster: FakeCluster, client: KafkaClient, clock: ManualClock) -> None:
        self.cluster = cluster
        self.client = client
        self.clock = clock

    async def ask(self, request: Any) -> tuple[int, Any]:
        """The answer's error code, and the answer (None when the error was raised)."""
        try:
            answer = await self.client.cluster.send(request, negotiate=True, retry=False)
        except BrokerError as error:
            return error.code, None
        return answer.error_code, answer

    async def subscribe(self, instance: uuid.UUID = ZERO) -> Any:
        code, answer = await self.ask(
            get_subscriptions.GetTelemetrySubscriptionsRequest(client_instance_id=instance)
        )
        assert code == Error.NONE
        return answer

    async def push(self, subscription: Any, *, terminating: bool = False, **changes: Any) -> int:
        fields: dict[str, Any] = {
            "client_instance_id": subscription.client_instance_id,
            "subscription_id": subscription.subscription_id,
            "terminating": terminating,
            "compression_type": 0,
            "metrics": PAYLOAD,
        }
        code, _ = await self.ask(push_telemetry.PushTelemetryRequest(**fields | changes))
        return code


@pytest.fixture
async def telemetry() -> AsyncIterator[Telemetry]:
    clock = ManualClock(start=1000.0)
    async with (
        FakeCluster(
            1, client_telemetry=True, clock=clock, client_telemetry_max_bytes=100
        ) as cluster,
        KafkaClient(cluster.bootstrap, client_id="app-1") as client,
    ):
        yield Telemetry(cluster, client, clock)


async def test_a_broker_without_an_exporter_does_not_list_the_apis() -> None:
    async with FakeCluster(1) as cluster, KafkaClient(cluster.bootstrap) as client:
        await client.cluster.metadata()
        assert not {71, 72} & set(cluster.served)


async def test_the_first_request_gets_an_instance_id_and_no_metrics_without_a_subscription(
    telemetry: Telemetry,
) -> None:
    answer = await telemetry.subscribe()
    assert answer.client_instance_id != ZERO
    assert answer.requested_metrics == ()
    assert answer.push_interval_ms == 300000
    assert answer.accepted_compression_types == (4, 3, 1, 2)
    assert answer.delta_temporality
    assert answer.telemetry_max_bytes == 100
    code, _ = await telemetry.ask(
        get_subscriptions.GetTelemetrySubscriptionsRequest(
            client_instance_id=answer.client_instance_id
        )
    )
    assert code == Error.THROTTLING_QUOTA_EXCEEDED  # sooner than the push interval
    telemetry.clock.advance(300)
    assert (await telemetry.subscribe(answer.client_instance_id)).subscription_id == (
        answer.subscription_id
    )


async def test_subscriptions_match_clients_and_join_their_metrics(telemetry: Telemetry) -> None:
    cluster = telemetry.cluster
    cluster.telemetry.set_subscription(
        "producers", metrics=["org.apache.kafka.producer."], interval_ms=1000
    )
    cluster.telemetry.set_subscription(
        "app",
        metrics=["org.apache.kafka.consumer."],
        interval_ms=500,
        match={"client_id": "app-.*"},
    )
    cluster.telemetry.set_subscription("others", metrics=["*"], match={"client_id": "other"})
    answer = await telemetry.subscribe()
    assert answer.requested_metrics == ("org.apache.kafka.consumer.", "org.apache.kafka.producer.")
    assert answer.push_interval_ms == 500  # the shortest
    with pytest.raises(ValueError, match="interval_ms"):
        cluster.telemetry.set_subscription("bad", metrics=["*"], interval_ms=99)
    with pytest.raises(ValueError, match="unknown client match keys"):
        cluster.telemetry.set_subscription("bad", metrics=["*"], match={"host": "x"})


async def test_pushes_are_kept_decompressed_and_paced_by_the_interval(
    telemetry: Telemetry,
) -> None:
    telemetry.cluster.telemetry.set_subscription("all", metrics=["*"], interval_ms=1000)
    subscription = await telemetry.subscribe()
    assert subscription.requested_metrics == ("*",)
    # The first push after a subscription may come early (the client staggers it).
    assert (
        await telemetry.push(subscription, compression_type=1, metrics=gzip.compress(PAYLOAD)) == 0
    )
    assert await telemetry.push(subscription) == Error.THROTTLING_QUOTA_EXCEEDED
    telemetry.clock.advance(1)
    assert await telemetry.push(subscription) == Error.NONE
    assert await telemetry.push(subscription, terminating=True) == Error.NONE  # early: allowed
    assert await telemetry.push(subscription) == Error.INVALID_REQUEST  # after the last one
    pushes = telemetry.cluster.telemetry.pushes
    assert [(p.metrics, p.compression_type, p.terminating) for p in pushes] == [
        (PAYLOAD, 1, False),
        (PAYLOAD, 0, False),
        (PAYLOAD, 0, True),
    ]
    assert {p.client_instance_id for p in pushes} == {subscription.client_instance_id}


async def test_push_errors_in_kafkas_order(telemetry: Telemetry) -> None:
    telemetry.cluster.telemetry.set_subscription("all", metrics=["*"], interval_ms=100)
    subscription = await telemetry.subscribe()
    checks = [
        ({"client_instance_id": ZERO}, Error.INVALID_REQUEST),
        ({"subscription_id": subscription.subscription_id + 1}, Error.UNKNOWN_SUBSCRIPTION_ID),
        ({"compression_type": 9}, Error.UNSUPPORTED_COMPRESSION_TYPE),
        ({"metrics": b"x" * 101}, Error.TELEMETRY_TOO_LARGE),
        ({"compression_type": 1, "metrics": gzip.compress(b"x" * 1000)}, Error.TELEMETRY_TOO_LARGE),
        ({"compression_type": 1, "metrics": b"not gzip"}, Error.INVALID_RECORD),
    ]
    for changes, expected in checks:
        telemetry.clock.advance(0.1)
        assert await telemetry.push(subscription, **changes) == expected, changes
    assert telemetry.cluster.telemetry.pushes == []


async def test_a_changed_subscription_is_a_new_id_and_may_be_asked_for_at_once(
    telemetry: Telemetry,
) -> None:
    telemetry.cluster.telemetry.set_subscription("all", metrics=["*"], interval_ms=1000)
    first = await telemetry.subscribe()
    telemetry.cluster.telemetry.set_subscription("all", metrics=["org.apache."], interval_ms=1000)
    assert await telemetry.push(first) == Error.UNKNOWN_SUBSCRIPTION_ID
    telemetry.clock.advance(0.001)
    again = await telemetry.subscribe(first.client_instance_id)  # not throttled after that
    assert again.client_instance_id == first.client_instance_id
    assert again.subscription_id != first.subscription_id
    assert again.requested_metrics == ("org.apache.",)
    telemetry.clock.advance(0.001)
    assert await telemetry.push(again) == Error.NONE  # the first since the subscription
