"""KIP-714 against real brokers: Tansu 0.6.0 serves none of it (no request, no noise), and
librdkafka's mock cluster serves GetTelemetrySubscriptions and PushTelemetry v0 and decodes
the pushed OTLP with its own decoder."""

from __future__ import annotations

import asyncio
import logging

import pytest

from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.operations.telemetry import TelemetryState
from kafkawire.producer import Producer
from kafkawire.testing import MockCluster, fresh_topic
from kafkawire.testing.pytest_plugin import Broker

from .kip714 import CONSUMER_REQUIRED, PRODUCER_REQUIRED

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


@pytest.mark.integration  # starts a mock cluster of its own
async def test_the_mock_cluster_decodes_what_a_producer_and_a_consumer_push(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """On a mock of its own (the session's asks for no metrics, and must not start to)."""
    async with MockCluster(brokers=1) as mock:
        await mock.configure_telemetry(["org.apache.kafka."], push_interval_ms=100)
        await mock.track_requests()

        async def pushes_reach(count: int) -> None:
            async with asyncio.timeout(20):
                while (await mock.received_api_keys()).count(PUSH) < count:
                    await asyncio.sleep(0.05)

        with caplog.at_level(logging.WARNING, logger="kafkawire"):
            async with Producer(mock.bootstrap) as producer:
                await producer.send_and_wait("t", b"v", partition=0)
                await pushes_reach(2)
            async with Consumer(
                bootstrap_servers=mock.bootstrap, group_id="g", group_protocol="consumer"
            ) as consumer:
                consumer.assign([TopicPartition("t", 0)])
                await consumer.getmany(timeout_ms=100)
                await pushes_reach((await mock.received_api_keys()).count(PUSH) + 2)
        names = await mock.pushed_metric_names()
        assert names >= PRODUCER_REQUIRED
        assert names >= CONSUMER_REQUIRED
        assert (await mock.received_api_keys()).count(GET_SUBSCRIPTIONS) == 2  # one per client
    # The mock's trailing bytes after some responses are logged once per process (a known
    # quirk of the mock, docs/design.md): whether this test sees it depends on the tests before.
    assert not [r for r in caplog.records if r.name != "kafkawire.protocol.framing"]
