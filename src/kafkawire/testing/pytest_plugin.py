"""pytest fixtures for tests that need a broker: an embedded Tansu and a mock cluster per session.

Enable it with ``pytest_plugins = ["kafkawire.testing.pytest_plugin"]`` in a top-level
``conftest.py`` or ``-p kafkawire.testing.pytest_plugin``. Fixtures:

- ``tansu_broker``: a :class:`Broker` for an embedded Tansu (session scope);
- ``mock_cluster``: a :class:`Broker` for librdkafka's mock cluster (session scope);
- ``fake_broker``: a :class:`Broker` for kafkawire's fake cluster (session scope), three
  brokers on a thread of their own (:class:`~kafkawire.testing.fake.FakeClusterThread`), so
  any test can use it: synchronous ones, other event loops, subprocesses. It is Kafka's
  rules with short group timers allowed (``group.min.session.timeout.ms`` 100, KIP-848
  heartbeats every 100 ms), where the other two have bugs: a test that states Kafka's
  behaviour under a ``tansu_bug`` or ``mock_cluster_bug`` mark should pass on it;
- ``kafka_broker``: parametrized over the three (``"fake"``, ``"mock_cluster"``,
  ``"tansu"``), so a test runs once per broker; ``@kafka_brokers(tansu=tansu_bug("..."),
  mock_cluster=False)`` marks a broker's run (an expected failure where that broker has a
  bug) or leaves it out, and always keeps the fake's;
- ``fake_cluster``: a :class:`~kafkawire.testing.fake.FakeCluster` of three brokers, new for
  each test (it starts in about a millisecond), on the test's event loop (so a test using it
  runs in the default function-scoped loop);
- ``fresh_topic``: :func:`kafkawire.testing.fresh_topic`, the factory of new topics for any of
  the above: ``name = await fresh_topic(broker, partitions=2)``.

With ``KAFKAWIRE_BOOTSTRAP=host:port`` set, ``tansu_broker`` and ``mock_cluster`` yield that
(loopback) broker instead and nothing is started; the fake ones stay fakes. Tests that use the
session brokers (``kafka_broker`` included) are marked ``integration`` automatically (not tests
of ``fake_cluster``: it is in memory).

The broker processes belong to the session's event loop (``loop_scope="session"``); a test
only receives addresses, so it may run in its own loop and open its own connections.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Literal

import pytest
import pytest_asyncio

from ._embedded import EmbeddedBroker
from .capabilities import BrokerCapabilities, probe
from .fake import FakeCluster, FakeClusterThread
from .mock_cluster import MockCluster
from .raw import ApiRange, parse_bootstrap
from .tansu import TansuBroker
from .topics import fresh_topic as _fresh_topic

__all__ = [
    "FAKE_BROKER_NAME",
    "Broker",
    "external_bootstrap",
    "kafka_brokers",
    "mock_cluster_bug",
    "tansu_bug",
]

ENV_BOOTSTRAP = "KAFKAWIRE_BOOTSTRAP"
FAKE_BROKER_NAME = "kafkawire fake cluster"
"""The name the fake cluster gives itself in its capabilities (``Broker.name``)."""
_BROKER_FIXTURES = {"tansu": "tansu_broker", "mock_cluster": "mock_cluster", "fake": "fake_broker"}


@dataclass(frozen=True)
class Broker:
    """What a test gets: where the broker is, what it serves, and its pid if we started it."""

    bootstrap: str
    capabilities: BrokerCapabilities
    pid: int | None = None

    @property
    def name(self) -> str:
        """The broker's name, as its capabilities give it (``Tansu 0.6.0``, ...)."""
        return self.capabilities.broker

    def require_api(self, api: int | str, version: int | None = None) -> None:
        """Skip the calling test, naming the API and this broker, unless it serves ``api``."""
        reason = self.capabilities.missing(api, version)
        if reason is not None:
            pytest.skip(reason)


def external_bootstrap() -> str | None:
    """The broker named by ``KAFKAWIRE_BOOTSTRAP`` (checked to be loopback), or None."""
    bootstrap = os.environ.get(ENV_BOOTSTRAP, "").strip()
    if not bootstrap:
        return None
    parse_bootstrap(bootstrap)
    return bootstrap


def tansu_bug(reason: str, *, raises: type[BaseException] = AssertionError) -> pytest.MarkDecorator:
    """A strict xfail for a test that states Kafka's behaviour where Tansu 0.6.0 gets it wrong.

    Put it on the Tansu parameter of a test that runs on a broker that gets it right too.
    Strict, so a Tansu that fixes the bug turns the test red and the mark gets removed; and
    only ``raises`` counts as the expected failure, so an unrelated error still fails the test.
    Not applied when ``KAFKAWIRE_BOOTSTRAP`` names another broker, which should pass.
    """
    return _broker_bug(f"Tansu 0.6.0 bug: {reason}", raises)


def mock_cluster_bug(
    reason: str, *, raises: type[BaseException] = AssertionError
) -> pytest.MarkDecorator:
    """Like :func:`tansu_bug`, for librdkafka's mock cluster."""
    return _broker_bug(f"librdkafka mock cluster bug: {reason}", raises)


def kafka_brokers(
    *,
    tansu: pytest.MarkDecorator | Literal[False] | None = None,
    mock_cluster: pytest.MarkDecorator | Literal[False] | None = None,
) -> pytest.MarkDecorator:
    """Parametrize ``kafka_broker`` over the fake and the embedded brokers, with a mark on one
    broker's run (:func:`tansu_bug`, :func:`mock_cluster_bug`) or ``False`` to leave it out.

    The fake's run is always there: a test that states Kafka's behaviour where a broker has it
    wrong shows the right answer passing on the fake.
    """
    params = [pytest.param("fake")]
    for name, mark in (("mock_cluster", mock_cluster), ("tansu", tansu)):
        if mark is not False:
            params.append(pytest.param(name, marks=() if mark is None else mark))
    return pytest.mark.parametrize("kafka_broker", params, indirect=True)


def _broker_bug(reason: str, raises: type[BaseException]) -> pytest.MarkDecorator:
    return pytest.mark.xfail(
        external_bootstrap() is None, reason=reason, raises=raises, strict=True
    )


async def _session_broker(embedded: Callable[[], EmbeddedBroker]) -> AsyncIterator[Broker]:
    """The ``KAFKAWIRE_BOOTSTRAP`` broker if set, else an embedded one for as long as it is used."""
    bootstrap = external_bootstrap()
    if bootstrap is not None:
        name = f"the broker at {bootstrap} ({ENV_BOOTSTRAP})"
        yield Broker(bootstrap, await probe(bootstrap, name))
        return
    async with embedded() as broker:
        yield Broker(broker.bootstrap, await probe(broker.bootstrap, broker.name), broker.pid)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def tansu_broker() -> AsyncIterator[Broker]:
    """An embedded Tansu broker for the whole session (or the ``KAFKAWIRE_BOOTSTRAP`` broker)."""
    async for broker in _session_broker(TansuBroker):
        yield broker


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def mock_cluster() -> AsyncIterator[Broker]:
    """librdkafka's mock cluster for the whole session (or the ``KAFKAWIRE_BOOTSTRAP`` broker)."""
    async for broker in _session_broker(MockCluster):
        yield broker


@pytest.fixture(scope="session")
def fake_broker() -> Iterator[Broker]:
    """kafkawire's fake cluster as a session's broker, on a thread of its own (module docstring)."""
    with FakeClusterThread(
        group_min_session_timeout_ms=100, consumer_group_heartbeat_interval_ms=100
    ) as fake:
        apis = {
            key: ApiRange(versions.start, versions.stop - 1)
            for key, versions in fake.cluster.served.items()
        }
        yield Broker(fake.bootstrap, BrokerCapabilities(FAKE_BROKER_NAME, apis))


@pytest.fixture(params=sorted(_BROKER_FIXTURES))
def kafka_broker(request: pytest.FixtureRequest) -> Broker:
    """Each broker in turn; the parameter is ``"fake"``, ``"mock_cluster"`` or ``"tansu"``."""
    broker: Broker = request.getfixturevalue(_BROKER_FIXTURES[request.param])
    return broker


@pytest_asyncio.fixture
async def fake_cluster() -> AsyncIterator[FakeCluster]:
    """A fresh in-memory fake cluster of three brokers for one test."""
    async with FakeCluster() as cluster:
        yield cluster


@pytest.fixture
def fresh_topic() -> Callable[..., Awaitable[str]]:
    """``await fresh_topic(broker, partitions=1)``: a new topic on any broker fixture's broker."""
    return _fresh_topic


def pytest_configure(config: pytest.Config) -> None:
    # Registered here too, so projects that load the plugin keep --strict-markers happy.
    config.addinivalue_line(
        "markers", "integration: needs a broker (embedded Tansu, mock cluster, KAFKAWIRE_BOOTSTRAP)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses a broker fixture ``integration``, so ``-m`` can select them."""
    fixtures = {"kafka_broker", *_BROKER_FIXTURES.values()}
    for item in items:
        if fixtures.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)
