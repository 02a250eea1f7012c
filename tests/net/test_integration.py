"""The connection against real brokers: Tansu 0.6.0 and librdkafka's mock cluster.

The brokers come from ``kafkawire.testing`` (or ``KAFKAWIRE_BOOTSTRAP``). What each serves is
also probed there, independently of this package (a raw ApiVersions v0 request), and the
negotiated table is checked against that probe.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import pytest

from kafkawire.messages import APIS, request_type
from kafkawire.net import Connection, NoCommonVersionError
from kafkawire.testing.pytest_plugin import Broker, kafka_brokers, mock_cluster_bug, tansu_bug
from kafkawire.testing.raw import Address, parse_bootstrap

from .fakebroker import WAIT

pytestmark = pytest.mark.integration

DROPPED_ACKS_0 = "dropped an answer to Produce with acks=0"


async def _open(address: Address, **options: Any) -> Connection:
    return await Connection.open(
        address.host, address.port, connect_timeout=WAIT, request_timeout=WAIT, **options
    )


def _metadata(conn: Connection, version: int | None = None) -> Any:
    return request_type(3, conn.version_for(3) if version is None else version)(topics=None)


async def test_negotiated_table_matches_the_brokers_own(kafka_broker: Broker) -> None:
    address = parse_bootstrap(kafka_broker.bootstrap)[0]
    served = kafka_broker.capabilities.apis
    async with await _open(address) as conn:
        assert conn.api_versions.ranges == {
            key: range(r.min_version, r.max_version + 1) for key, r in served.items()
        }
        for api_key, broker in conn.api_versions.ranges.items():
            if api_key not in APIS:
                continue
            ours = APIS[api_key].versions
            if max(broker.start, ours.start) < min(broker.stop, ours.stop):
                assert conn.version_for(api_key) == min(broker.stop, ours.stop) - 1
            else:
                # The mock cluster serves ShareGroupHeartbeat v1 only; kafkawire knows v0.
                with pytest.raises(NoCommonVersionError, match="no version in common"):
                    conn.version_for(api_key)
        absent = 37 if 37 not in served else next(key for key in APIS if key not in served)
        message = f"the broker at {address} does not support {APIS[absent].name} (API key {absent})"
        with pytest.raises(NoCommonVersionError, match=re.escape(message)):
            conn.version_for(absent)


async def test_tansu_specifics(tansu_broker: Broker, tansu: Address) -> None:
    if tansu_broker.pid is None:
        pytest.skip("states facts of the embedded Tansu 0.6.0 (KAFKAWIRE_BOOTSTRAP is set)")
    async with await _open(tansu) as conn:
        # ApiVersions v4 (kafkawire's newest) was answered as such; Metadata stops at v12.
        assert conn.api_versions.ranges[18] == range(5)
        assert conn.version_for(3) == 12
        with pytest.raises(NoCommonVersionError, match="versions 0-12, not version 13"):
            await conn.send(_metadata(conn, 13))
        response = await conn.send(_metadata(conn))
        assert [(b.node_id, b.host, b.port) for b in response.brokers] == [(111, *tansu)]
        assert not conn.closed


async def test_metadata_at_negotiated_version(kafka_broker: Broker) -> None:
    # On the mock cluster this also covers the stray byte after its flexible Metadata
    # responses, which the connection ignores (tests/integration shows the bug itself).
    addresses = parse_bootstrap(kafka_broker.bootstrap)
    async with await _open(addresses[0]) as conn:
        response = await conn.send(_metadata(conn))
        assert type(response).__version__ == conn.version_for(3)
        assert {(b.host, b.port) for b in response.brokers} >= {tuple(addresses[0])}


async def test_pipelining(tansu: Address) -> None:
    async with await _open(tansu) as conn:
        requests = [_metadata(conn) if i % 2 else _metadata(conn, 1 + i % 12) for i in range(200)]
        responses = await asyncio.wait_for(asyncio.gather(*(conn.send(r) for r in requests)), WAIT)
        assert [type(r).__version__ for r in responses] == [type(r).__version__ for r in requests]


async def _acks_0_then_metadata(address: Address) -> None:
    async with await _open(address) as conn:
        request = request_type(0, conn.version_for(0))(acks=0, timeout_ms=1000)
        assert await conn.send(request) == request.__response__()  # nothing came back
        # Metadata v8, not flexible: the mock cluster's flexible Metadata is malformed (above).
        await conn.send(_metadata(conn, 8))
        await conn.send(_metadata(conn, 8))
        assert not conn.closed


async def test_acks_0_leaves_the_connection_usable(kafka_broker: Broker) -> None:
    await _acks_0_then_metadata(parse_bootstrap(kafka_broker.bootstrap)[0])


@kafka_brokers(
    tansu=tansu_bug("it answers Produce with acks=0"),
    mock_cluster=mock_cluster_bug("it answers Produce with acks=0"),
)
async def test_broker_sends_no_answer_to_acks_0(
    kafka_broker: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    """Kafka answers nothing (the fake broker in test_connection shows the client side)."""
    caplog.set_level(logging.DEBUG, logger="kafkawire.net.connection")
    await _acks_0_then_metadata(parse_bootstrap(kafka_broker.bootstrap)[0])
    assert not any(DROPPED_ACKS_0 in record.getMessage() for record in caplog.records)


async def test_mock_cluster_apiversions_fallback(
    mock_cluster: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    if mock_cluster.pid is None:
        pytest.skip("states facts of the embedded mock cluster (KAFKAWIRE_BOOTSTRAP is set)")
    caplog.set_level(logging.DEBUG, logger="kafkawire.net.versions")
    addresses = parse_bootstrap(mock_cluster.bootstrap)
    for address in addresses:
        async with await _open(address) as conn:
            assert conn.api_versions.ranges[18] == range(3)
            assert conn.version_for(3) == min(13, APIS[3].versions.stop - 1)
            response = await conn.send(_metadata(conn, 4))
            assert len(response.brokers) == len(addresses)
    # It answers v4 with error 35 and a body valid at no version, so the retry is at v0.
    retries = [r.getMessage() for r in caplog.records if "retrying" in r.getMessage()]
    assert retries == [
        f"broker at {address} does not serve ApiVersions v4; retrying at v0"
        for address in addresses
    ]
