"""pytest fixtures for tests that need a broker: an embedded Tansu and a mock cluster per session.

Enable it with ``pytest_plugins = ["kafkawire.testing.pytest_plugin"]`` in a top-level
``conftest.py`` or ``-p kafkawire.testing.pytest_plugin``. Fixtures:

- ``tansu_broker``: a :class:`Broker` for an embedded Tansu (session scope);
- ``mock_cluster``: a :class:`Broker` for librdkafka's mock cluster (session scope);
- ``kafka_broker``: parametrized over both, so a test runs once per broker; override the
  parameters with ``@pytest.mark.parametrize("kafka_broker", [...], indirect=True)``;
- ``fake_cluster``: a :class:`~kafkawire.testing.fake.FakeCluster` of three brokers, new for
  each test (it starts in about a millisecond), on the test's event loop (so a test using it
  runs in the default function-scoped loop);
- ``fresh_topic``: :func:`kafkawire.testing.fresh_topic`, the factory of new topics for any of
  the above: ``name = await fresh_topic(broker, partitions=2)``.

With ``KAFKAWIRE_BOOTSTRAP=host:port`` set, every broker fixture but ``fake_cluster`` yields
that (loopback) broker instead and nothing is started. Tests that use those fixtures are
marked ``integration`` automatically (not tests of ``fake_cluster``: it is in memory).

The broker processes belong to the session's event loop (``loop_scope="session"``); a test
only receives addresses, so it may run in its own loop and open its own connections.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest
import pytest_asyncio

from ._embedded import EmbeddedBroker
from .capabilities import BrokerCapabilities, probe
from .fake import FakeCluster
from .mock_cluster import MockCluster
from .raw import parse_bootstrap
from .tansu import TansuBroker
from .topics import fresh_topic as _fresh_topic

__all__ = ["Broker", "external_bootstrap", "mock_cluster_bug", "tansu_bug"]

ENV_BOOTSTRAP = "KAFKAWIRE_BOOTSTRAP"
_BROKER_FIXTURES = {"tansu": "tansu_broker", "mock_cluster": "mock_cluster"}


@dataclass(frozen=True)
class Broker:
    """What a test gets: where the broker is, what it serves, and its pid if we started it."""

    bootstrap: str
    capabilities: BrokerCapabilities
    pid: int | None = None

    @property
    def name(self) -> str:
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


@pytest.fixture(params=sorted(_BROKER_FIXTURES))
def kafka_broker(request: pytest.FixtureRequest) -> Broker:
    """Each embedded broker in turn; the parameter is ``"tansu"`` or ``"mock_cluster"``."""
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
