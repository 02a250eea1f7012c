"""Metadata that names only brokers the client cannot reach does not strand it: it goes back
to the bootstrap addresses (Java's ``metadata.recovery.strategy=rebootstrap``, issue 19)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kafkawire.cluster import Backoff, Cluster, ClusterMetadata, ConnectionSettings, _search
from kafkawire.cluster._pool import ConnectionPool
from kafkawire.cluster._search import BrokerSearch
from kafkawire.cluster.metadata import BrokerAddress
from kafkawire.errors import KafkawireError
from kafkawire.net import Connection
from kafkawire.testing.fake import FakeCluster
from kafkawire.testing.fake.faults import metadata_brokers
from tests.net.fakebroker import WAIT

from .stopped_clock import StoppedClock
from .test_faults import offsets_of

FAST = Backoff(initial=0.01, maximum=0.02)
# Broker 0 (the leader of t) and broker 1 at addresses no connection can be opened to.
UNUSABLE = [(0, "127.0.0.1", 70000), (1, "a\x00b", 9092)]


@pytest.fixture
async def first_answer_unusable() -> AsyncIterator[FakeCluster]:
    """One broker whose first Metadata answer names only brokers at unusable addresses, and
    whose later ones name itself as broker 0, the leader of t (5 records)."""
    async with FakeCluster(1) as fake:
        fake.create_topic("t")
        fake.produce("t", 0, [b"v"] * 5)
        fake.control(metadata_brokers(UNUSABLE, only=True), api_key="Metadata")
        yield fake


async def test_metadata_naming_only_unusable_brokers_falls_back_to_the_bootstrap_address(
    first_answer_unusable: FakeCluster, caplog: pytest.LogCaptureFixture
) -> None:
    fake = first_answer_unusable
    caplog.set_level(logging.INFO, logger="kafkawire.cluster")
    async with Cluster(fake.bootstrap, backoff=FAST) as cluster:
        assert cluster.current_metadata is not None
        assert set(cluster.current_metadata.brokers) == {0, 1}  # none of them usable
        response = await asyncio.wait_for(cluster.send(offsets_of(0)), WAIT)
        assert response.topics[0].partitions[0].offset == 5
        known = cluster.current_metadata.brokers[0]
        assert f"{known.host}:{known.port}" == fake.address(0)
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert any(
        m.startswith("rebootstrapping: none of the brokers the metadata names")
        and fake.address(0) in m
        for m in said
    ), said


async def test_with_strategy_none_the_client_keeps_to_the_brokers_it_was_told_of(
    first_answer_unusable: FakeCluster,
) -> None:
    fake = first_answer_unusable
    async with Cluster(
        fake.bootstrap, backoff=FAST, retry_timeout=0.3, metadata_recovery_strategy="none"
    ) as cluster:
        with pytest.raises(KafkawireError):
            await asyncio.wait_for(cluster.send(offsets_of(0)), WAIT)
    assert len(fake.requests.of("Metadata")) == 1


def search_of(pool: ConnectionPool, trigger: float = 300.0) -> tuple[BrokerSearch, Any]:
    search = BrokerSearch([("127.0.0.1", 2)], pool, trigger=trigger)
    metadata = ClusterMetadata(
        brokers={1: BrokerAddress(1, "127.0.0.1", 1)}, topics={}, controller_id=1, cluster_id=None
    )
    return search, metadata


async def never_connects(host: str, port: int) -> Connection:
    raise AssertionError("not connected in this test")


KNOWN, BOOTSTRAP = 1, ("127.0.0.1", 2)


def first(search: BrokerSearch, metadata: Any) -> Any:
    """The broker a search tries first (taking more would mean the first failed)."""
    return next(search.candidates(metadata))[0]


def test_known_brokers_first_then_the_bootstrap_addresses_first_once_none_can_be_used() -> None:
    pool = ConnectionPool(never_connects, Backoff(initial=30, maximum=30))
    search, metadata = search_of(pool)
    assert [key for key, _, _ in search.candidates(metadata)] == [KNOWN, BOOTSTRAP]
    pool.failed(KNOWN, "refused")  # in its backoff, with no open connection
    assert [key for key, _, _ in search.candidates(metadata)] == [BOOTSTRAP, KNOWN]
    pool.answered(KNOWN)
    assert first(search, metadata) == KNOWN
    # A bootstrap address that is a known broker's adds nothing to try.
    same = BrokerSearch([("127.0.0.1", 1)], pool)
    assert [key for key, _, _ in same.candidates(metadata)] == [KNOWN]


def test_metadata_sought_for_longer_than_the_trigger_rebootstraps(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.INFO, logger="kafkawire.cluster")
    clock = StoppedClock()
    monkeypatch.setattr(_search, "time", clock)
    search, metadata = search_of(ConnectionPool(never_connects), trigger=0.01)
    search.seeking()
    assert first(search, metadata) == KNOWN
    clock.now += 0.01
    assert first(search, metadata) == KNOWN  # not past it yet
    clock.now += 0.001
    assert first(search, metadata) == BOOTSTRAP
    assert first(search, metadata) == KNOWN  # the trigger counts again from there
    search.found()
    assert [r.getMessage() for r in caplog.records] == [
        "rebootstrapping: no metadata for 0.01 s; asking the bootstrap addresses "
        "(127.0.0.1:2) for metadata",
        "metadata found again: back to the brokers it names",
    ]


def test_the_java_options_reach_the_cluster_layer_with_javas_defaults() -> None:
    defaults = ConnectionSettings(bootstrap_servers="h:1").client_settings(call_timeout_ms=1)
    assert (defaults.reconnect_backoff.initial, defaults.reconnect_backoff.maximum) == (0.05, 1)
    assert defaults.metadata_recovery_strategy == "rebootstrap"
    assert defaults.metadata_recovery_rebootstrap_trigger == 300
    given = ConnectionSettings(
        bootstrap_servers="h:1",
        reconnect_backoff_ms=10,
        reconnect_backoff_max_ms=5000,
        metadata_recovery_strategy="none",
        metadata_recovery_rebootstrap_trigger_ms=1500,
    ).client_settings(call_timeout_ms=1)
    assert (given.reconnect_backoff.initial, given.reconnect_backoff.maximum) == (0.01, 5)
    assert given.metadata_recovery_strategy == "none"
    assert given.metadata_recovery_rebootstrap_trigger == 1.5
    with pytest.raises(ValueError, match="metadata_recovery_strategy"):
        ConnectionSettings(bootstrap_servers="h:1", metadata_recovery_strategy="never")  # type: ignore[arg-type]
