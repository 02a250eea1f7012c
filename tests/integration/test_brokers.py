"""What the embedded brokers serve, and the right answers where Tansu 0.6.0 gives wrong ones."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from kafkawire.errors import DecodeError, TopicAlreadyExistsError
from kafkawire.messages.metadata import v8 as metadata_v8
from kafkawire.messages.metadata import v9 as metadata_v9
from kafkawire.testing import create_topic, fresh_topic, parse_bootstrap, send_request, topic_name
from kafkawire.testing.capabilities import api_label, render_doc
from kafkawire.testing.pytest_plugin import (
    Broker,
    external_bootstrap,
    kafka_brokers,
    mock_cluster_bug,
    tansu_bug,
)

from .helpers import LATEST, list_offset, partition_leader, produce

pytestmark = pytest.mark.integration

DOC = Path(__file__).parents[2] / "docs" / "brokers.md"

# docs/design.md, "Tansu 0.6.0": APIs this Tansu build does not serve.
TANSU_MISSING = [
    "AlterConfigs",
    "ConsumerGroupHeartbeat",
    "CreatePartitions",
    "DeleteAcls",
    "DescribeProducers",
    "DescribeTransactions",
    "ListTransactions",
    "OffsetDelete",
    "OffsetForLeaderEpoch",
]
needs_embedded = pytest.mark.skipif(
    external_bootstrap() is not None, reason="facts about the embedded brokers"
)


async def test_every_broker_serves_the_basics(kafka_broker: Broker) -> None:
    for api in ("ApiVersions", "Metadata", "Produce", "Fetch", "ListOffsets"):
        assert kafka_broker.capabilities.missing(api) is None, api
    assert kafka_broker.capabilities.missing("ApiVersions", 0) is None


@needs_embedded
async def test_tansu_lacks_what_the_design_says(tansu_broker: Broker) -> None:
    assert tansu_broker.name == "Tansu 0.6.0"
    for api in TANSU_MISSING:
        reason = tansu_broker.capabilities.missing(api)
        assert reason is not None
        assert reason.startswith(f"Tansu 0.6.0 does not serve {api} (")
    assert tansu_broker.capabilities.missing("ApiVersions", 3) is None


@needs_embedded
async def test_mock_cluster_serves_api_versions_up_to_v2_and_no_create_topics(
    mock_cluster: Broker,
) -> None:
    caps = mock_cluster.capabilities
    assert re.fullmatch(r"librdkafka \S+ mock cluster", mock_cluster.name)
    assert caps.missing("ApiVersions", 2) is None
    assert caps.missing("ApiVersions", 3) == (
        f"{mock_cluster.name} serves ApiVersions (18) v0-v2, not v3"
    )
    assert caps.missing("CreateTopics") == f"{mock_cluster.name} does not serve CreateTopics (19)"
    assert caps.missing("ConsumerGroupHeartbeat") is None


@needs_embedded
async def test_mock_cluster_is_three_loopback_brokers(mock_cluster: Broker) -> None:
    addresses = parse_bootstrap(mock_cluster.bootstrap)  # refuses anything but loopback
    assert len(addresses) == 3
    metadata = await send_request(addresses[0], metadata_v8.MetadataRequest(topics=()))
    advertised = ",".join(f"{b.host}:{b.port}" for b in metadata.brokers)
    assert sorted(parse_bootstrap(advertised)) == sorted(addresses)


@needs_embedded
async def test_docs_brokers_md_is_what_the_brokers_serve(
    tansu_broker: Broker, mock_cluster: Broker
) -> None:
    expected = render_doc([tansu_broker.capabilities, mock_cluster.capabilities])
    committed = DOC.read_text()
    header = next(line for line in expected.splitlines() if line.startswith("| API |"))
    if header not in committed.splitlines():
        pytest.skip(f"docs/brokers.md describes other broker versions than {header!r}")
    assert committed == expected, "regenerate it: python -m kafkawire.testing > docs/brokers.md"


async def test_create_topic_makes_a_topic_with_the_partitions_asked(kafka_broker: Broker) -> None:
    kafka_broker.require_api("CreateTopics", 5)
    topic = topic_name()
    await create_topic(kafka_broker.bootstrap, topic, partitions=1)
    request = metadata_v9.MetadataRequest(
        topics=(metadata_v9.MetadataRequestTopic(name=topic),), allow_auto_topic_creation=False
    )
    metadata = await send_request(parse_bootstrap(kafka_broker.bootstrap)[0], request)
    assert [len(t.partitions) for t in metadata.topics] == [1]
    with pytest.raises(TopicAlreadyExistsError):
        await create_topic(kafka_broker.bootstrap, topic, partitions=1)


@kafka_brokers(
    mock_cluster=mock_cluster_bug(
        "flexible Metadata responses end in a stray byte (the top-level tagged fields"
        " are written twice)",
        raises=DecodeError,
    )
)
async def test_flexible_metadata_responses_decode_exactly(kafka_broker: Broker) -> None:
    request = metadata_v9.MetadataRequest(topics=())
    metadata = await send_request(parse_bootstrap(kafka_broker.bootstrap)[0], request)
    assert metadata.brokers


@kafka_brokers(tansu=tansu_bug("ListOffsets latest answers the last batch's base offset + 1"))
async def test_list_offsets_latest_is_the_end_of_the_log(kafka_broker: Broker) -> None:
    topic = await fresh_topic(kafka_broker)
    leader = await partition_leader(kafka_broker.bootstrap, topic, 0)
    assert await produce(leader, topic, 0, [b"a", b"b", b"c"]) == 0
    assert await produce(leader, topic, 0, [b"d", b"e"]) == 3
    assert await list_offset(leader, topic, 0, LATEST) == 5


def test_api_labels_name_the_api_and_its_key() -> None:
    assert api_label(19) == "CreateTopics (19)"
    assert api_label(9999) == "API 9999"


@kafka_brokers(
    tansu=tansu_bug("ListOffsets by timestamp answers offset 0"),
    mock_cluster=mock_cluster_bug("ListOffsets by timestamp is not implemented (answers -1)"),
)
async def test_list_offsets_by_timestamp_finds_the_first_record_at_or_after_it(
    kafka_broker: Broker,
) -> None:
    topic = await fresh_topic(kafka_broker)
    leader = await partition_leader(kafka_broker.bootstrap, topic, 0)
    now = int(time.time() * 1000)
    await produce(leader, topic, 0, [b"a", b"b", b"c"], timestamp=now - 60_000)
    await produce(leader, topic, 0, [b"d", b"e"], timestamp=now)
    assert await list_offset(leader, topic, 0, now - 30_000) == 3
