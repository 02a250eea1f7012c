"""KIP-714 against real brokers: Tansu 0.6.0 serves none of it (no request, no noise), and
librdkafka's mock cluster serves GetTelemetrySubscriptions and PushTelemetry v0 and decodes
the pushed OTLP with its own decoder."""

from __future__ import annotations

import logging

import pytest

from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.operations.telemetry import TelemetryState
from kafkawire.producer import Producer
from kafkawire.testing import fresh_topic
from kafkawire.testing.pytest_plugin import Broker
from tests.consumer.helpers import eventually

from .kip714 import CONSUMER_REQUIRED, PRODUCER_REQUIRED
from .rdkafka_mock import rdkafka_mock

pytestmark = pytest.mark.asyncio(loop_scope="session")
GET_SUBSCRIPTIONS, PUSH = 71, 72


async def test_tansu_asks_for_no_metrics_and_the_clients_say_nothing_of_it(
    tansu_broker: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    """Tansu 0.6.0 answers GetTelemetrySubscriptions (an instance id, no metrics, every 5 s)
    and does not serve PushTelemetry."""
    topic = await fresh_topic(tansu_broker)
    with caplog.at_level(logging.DEBUG, logger="kafkawire"):
        async with Producer(tansu_broker.bootstrap) as producer:
            await producer.send_and_wait(topic, b"v")
            assert await producer.client_instance_id() is not None
            assert producer._telemetry.state is TelemetryState.SUBSCRIPTION_NEEDED
    telemetry = [r for r in caplog.records if r.name.startswith("kafkawire.operations.telemetry")]
    assert [r.levelno for r in telemetry] == [logging.DEBUG]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_the_mock_cluster_gives_an_instance_id_and_asks_for_no_metrics(
    mock_cluster: Broker,
) -> None:
    async with Producer(mock_cluster.bootstrap) as producer:
        instance = await producer.client_instance_id()
        assert instance is not None
        assert instance.int != 0
        assert producer._telemetry.state is TelemetryState.SUBSCRIPTION_NEEDED  # none asked


async def test_the_mock_cluster_decodes_what_a_producer_and_a_consumer_push(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with rdkafka_mock(["org.apache.kafka."], push_interval_ms=100) as mock:
        with caplog.at_level(logging.WARNING, logger="kafkawire"):
            async with Producer(mock.bootstrap) as producer:
                await producer.send_and_wait("t", b"v", partition=0)
                await eventually(lambda: mock.api_keys().count(PUSH) >= 2)
                assert producer._telemetry.state is not TelemetryState.SUBSCRIPTION_NEEDED
            async with Consumer(
                bootstrap_servers=mock.bootstrap, group_id="g", group_protocol="consumer"
            ) as consumer:
                consumer.assign([TopicPartition("t", 0)])
                await consumer.getmany(timeout_ms=100)
                before = mock.api_keys().count(PUSH)
                await eventually(lambda: mock.api_keys().count(PUSH) >= before + 2)
        assert mock.pushed_names >= PRODUCER_REQUIRED
        assert mock.pushed_names >= CONSUMER_REQUIRED
        assert mock.api_keys().count(GET_SUBSCRIPTIONS) == 2  # one per client: no errors
    assert not caplog.records
