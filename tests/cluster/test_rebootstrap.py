"""Metadata that names only brokers the client cannot reach does not strand it: it goes back
to the bootstrap addresses (Java's ``metadata.recovery.strategy=rebootstrap``, issue 19)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from kafkawire.cluster import Backoff, Cluster, ClusterMetadata, ConnectionSettings, _search
from kafkawire.cluster._pool import ConnectionPool
from kafkawire.cluster._search import BrokerSearch
from kafkawire.cluster.metadata import BrokerAddress
from kafkawire.errors import KafkawireError
from kafkawire.net import Connection
from tests.net.fakebroker import WAIT, FakeBroker, FakeClient

from .hostile import metadata_answer
from .stopped_clock import StoppedClock
from .test_faults import answer_offsets, offsets_of

FAST = Backoff(initial=0.01, maximum=0.02)
UNUSABLE = [(1, "127.0.0.1", 70000), (2, "a\x00b", 9092)]


class FirstAnswerUnusable:
    """A broker whose first Metadata answer names only brokers at unusable addresses, and
    whose later ones name itself as broker 1, the leader of t."""

    def __init__(self) -> None:
        self.broker = FakeBroker(self.handle)
        self.metadata_answers = 0

    async def handle(self, client: FakeClient, header: Any, request: Any) -> Any:
        if header.request_api_key != 3:
            return answer_offsets(request, header)
        self.metadata_answers += 1
        good = [(1, "127.0.0.1", self.broker.port)]
        brokers = UNUSABLE if self.metadata_answers == 1 else good
        return metadata_answer(header.request_api_version, brokers)


async def test_metadata_naming_only_unusable_brokers_falls_back_to_the_bootstrap_address(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = FirstAnswerUnusable()
    caplog.set_level(logging.INFO, logger="kafkawire.cluster")
    async with fake.broker, Cluster(f"127.0.0.1:{fake.broker.port}", backoff=FAST) as cluster:
        assert cluster.current_metadata is not None
        assert set(cluster.current_metadata.brokers) == {1, 2}  # none of them usable
        response = await asyncio.wait_for(cluster.send(offsets_of(0)), WAIT)
        assert response.topics[0].partitions[0].offset == 5
        assert cluster.current_metadata.brokers[1].port == fake.broker.port
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert any(
        m.startswith("rebootstrapping: none of the brokers the metadata names")
        and f"127.0.0.1:{fake.broker.port}" in m
        for m in said
    ), said


async def test_with_strategy_none_the_client_keeps_to_the_brokers_it_was_told_of() -> None:
    fake = FirstAnswerUnusable()
    async with (
        fake.broker,
        Cluster(
            f"127.0.0.1:{fake.broker.port}",
            backoff=FAST,
            retry_timeout=0.3,
            metadata_recovery_strategy="none",
        ) as cluster,
    ):
        with pytest.raises(KafkawireError):
            await asyncio.wait_for(cluster.send(offsets_of(0)), WAIT)
    assert fake.metadata_answers == 1


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
