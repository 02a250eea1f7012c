"""Every client against a SASL_SSL cluster, with the settings by name a Java user writes.

The cluster is the fake cluster behind :class:`~.secure_front.SecureFront`: TLS with a
throwaway CA, and SASL PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER (tokens from a loopback OIDC
token endpoint, checked as Kafka's unsecured validator checks them). Each client gets the same
settings: ``security_protocol``, ``sasl_mechanism``, ``sasl_jaas_config`` (and the test CA).
A wrong password, an expired token and an untrusted certificate each end in one error that
says which, and no log record or error shows a secret.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from kafkawire.admin import Admin
from kafkawire.client import KafkaClient
from kafkawire.consumer import Consumer
from kafkawire.net import AuthenticationError, SslAuthenticationError
from kafkawire.producer import Producer
from kafkawire.testing.fake import FakeCluster

from .pki import Pki
from .sasl_server import SaslSession, unexpired_jwt
from .secure_front import SecureFront
from .secured import MECHANISMS, PASSWORD, USER, WRONG_PASSWORD, java_settings, server_context
from .token_endpoint import CLIENT_ID, CLIENT_SECRET, TokenEndpoint

TOPIC = "secured"
FAST = {"request_timeout_ms": 5000, "socket_connection_setup_timeout_ms": 5000}


@pytest.fixture
def token_endpoint(pki: Pki) -> Iterator[TokenEndpoint]:
    with TokenEndpoint(server_context(pki.server_cert, pki.server_key)) as endpoint:
        yield endpoint


async def _secured(pki: Pki, cert: Any = None) -> AsyncIterator[tuple[FakeCluster, SecureFront]]:
    cert = cert or (pki.server_cert, pki.server_key)
    async with FakeCluster(num_brokers=1) as cluster:
        cluster.create_topic(TOPIC, partitions=1)
        ports = [int(address.rsplit(":", 1)[1]) for address in cluster.bootstrap.split(",")]
        sessions = lambda: SaslSession(token_check=unexpired_jwt)  # noqa: E731
        async with SecureFront(ports, ssl=server_context(*cert), sasl=sessions) as front:
            yield cluster, front


@pytest.fixture
async def secured(pki: Pki) -> AsyncIterator[tuple[FakeCluster, SecureFront]]:
    async for pair in _secured(pki):
        yield pair


def _principals(front: SecureFront, mechanism: str) -> set[str | None]:
    assert front.sessions
    assert {s.mechanism for s in front.sessions} == {mechanism}
    return {s.principal for s in front.sessions}


def _expected_principal(mechanism: str) -> str:
    return CLIENT_ID if mechanism == "OAUTHBEARER" else USER


@pytest.mark.parametrize("mechanism", MECHANISMS)
async def test_producer_then_consumer(
    mechanism: str,
    secured: tuple[FakeCluster, SecureFront],
    pki: Pki,
    token_endpoint: TokenEndpoint,
) -> None:
    _, front = secured
    settings: Any = java_settings(mechanism, pki, token_endpoint.url) | FAST
    async with Producer(front.bootstrap, **settings) as producer:
        await producer.send_and_wait(TOPIC, b"over SASL_SSL")
    async with Consumer(
        TOPIC, bootstrap_servers=front.bootstrap, auto_offset_reset="earliest", **settings
    ) as consumer:
        batches = await consumer.getmany(timeout_ms=5000)
    assert [r.value for records in batches.values() for r in records] == [b"over SASL_SSL"]
    assert _principals(front, mechanism) == {_expected_principal(mechanism)}
    if mechanism == "OAUTHBEARER":  # one token for every connection of a client
        grants = token_endpoint.requests
        assert len(grants) == 2
        assert all(g["credentials_ok"] for g in grants)
        assert {g["scope"] for g in grants} == {"kafka"}


@pytest.mark.parametrize("mechanism", MECHANISMS)
async def test_admin(
    mechanism: str,
    secured: tuple[FakeCluster, SecureFront],
    pki: Pki,
    token_endpoint: TokenEndpoint,
) -> None:
    _, front = secured
    settings: Any = java_settings(mechanism, pki, token_endpoint.url) | FAST
    async with Admin(front.bootstrap, **settings) as admin:
        assert TOPIC in await admin.list_topics()
    assert _principals(front, mechanism) == {_expected_principal(mechanism)}


@pytest.mark.parametrize("mechanism", MECHANISMS)
async def test_kafka_client(
    mechanism: str,
    secured: tuple[FakeCluster, SecureFront],
    pki: Pki,
    token_endpoint: TokenEndpoint,
) -> None:
    _, front = secured
    settings: Any = java_settings(mechanism, pki, token_endpoint.url)
    async with KafkaClient(front.bootstrap, **settings) as client:
        await client.produce(TOPIC, 0, [b"low level"])
        fetched = await client.fetch(TOPIC, 0, 0)
    assert [r.value for r in fetched.records] == [b"low level"]
    assert _principals(front, mechanism) == {_expected_principal(mechanism)}


class _Everything(logging.Handler):
    """Every record of every logger, formatted (arguments and tracebacks included)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def every_log_line() -> Iterator[list[str]]:
    handler = _Everything()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler.lines
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def _everything_said(error: BaseException, log: list[str]) -> str:
    """The error's traceback with its causes and contexts, each exception's repr, and the log."""
    said = ["".join(traceback.format_exception(error)), *log]
    seen: BaseException | None = error
    while seen is not None:
        said.append(repr(seen))
        seen = seen.__cause__ or seen.__context__
    return "\n".join(said)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
async def test_a_wrong_password_is_one_clear_error_that_shows_no_secret(
    mechanism: str,
    secured: tuple[FakeCluster, SecureFront],
    pki: Pki,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, front = secured
    settings: Any = java_settings(mechanism, pki, password=WRONG_PASSWORD) | FAST
    with pytest.raises(AuthenticationError, match=f"SASL {mechanism} authentication") as failure:
        async with Producer(front.bootstrap, **settings):
            pass
    assert failure.value.error_code == 58  # SASL_AUTHENTICATION_FAILED, the broker's word
    assert "Authentication failed" in str(failure.value)
    assert len(front.sessions) == 1  # refused for good: not tried again
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert "refused the connection: SASL" in warning
    assert "trying again" not in warning


async def test_an_expired_token_is_one_clear_error(
    secured: tuple[FakeCluster, SecureFront], pki: Pki, token_endpoint: TokenEndpoint
) -> None:
    _, front = secured
    token_endpoint.lifetime = -60
    settings: Any = java_settings("OAUTHBEARER", pki, token_endpoint.url) | FAST
    with pytest.raises(AuthenticationError, match=r"the token from .* expired at .*before it"):
        async with Consumer(TOPIC, bootstrap_servers=front.bootstrap, **settings):
            pass
    assert not front.sessions or not any(s.authenticated for s in front.sessions)


async def test_an_untrusted_certificate_is_one_clear_error(pki: Pki) -> None:
    other = (pki.other_server_cert, pki.other_server_key)
    async for _, front in _secured(pki, other):
        settings: Any = java_settings("PLAIN", pki) | FAST
        with pytest.raises(SslAuthenticationError, match="certificate is not trusted"):
            async with Admin(front.bootstrap, **settings) as admin:
                await admin.list_topics()


@pytest.mark.parametrize("mechanism", MECHANISMS)
async def test_no_secret_is_logged_or_raised(
    mechanism: str,
    secured: tuple[FakeCluster, SecureFront],
    pki: Pki,
    token_endpoint: TokenEndpoint,
    every_log_line: list[str],
) -> None:
    _, front = secured
    secrets = {PASSWORD, WRONG_PASSWORD, CLIENT_SECRET, "wrong-" + CLIENT_SECRET}
    wrong = (
        {"client_secret": "wrong-" + CLIENT_SECRET}
        if mechanism == "OAUTHBEARER"
        else {"password": WRONG_PASSWORD}
    )
    failing: Any = java_settings(mechanism, pki, token_endpoint.url, **wrong) | FAST
    working: Any = java_settings(mechanism, pki, token_endpoint.url) | FAST
    async with Producer(front.bootstrap, **working) as producer:  # a good run logs too
        await producer.send_and_wait(TOPIC, b"x")
        said = [repr(producer.settings)]
    with pytest.raises(AuthenticationError) as failure:
        async with Producer(front.bootstrap, **failing):
            pass
    everything = "\n".join([*said, _everything_said(failure.value, every_log_line)])
    assert every_log_line  # the run did log (at DEBUG)
    assert not [secret for secret in secrets if secret in everything]


async def test_a_producer_reauthenticates_when_the_broker_asks(
    pki: Pki, token_endpoint: TokenEndpoint
) -> None:
    async with FakeCluster(num_brokers=1) as cluster:
        cluster.create_topic(TOPIC, partitions=1)
        ports = [int(address.rsplit(":", 1)[1]) for address in cluster.bootstrap.split(",")]
        sessions = lambda: SaslSession(token_check=unexpired_jwt)  # noqa: E731
        tls = server_context(pki.server_cert, pki.server_key)
        async with SecureFront(ports, ssl=tls, sasl=sessions, session_lifetime_ms=200) as front:
            settings: Any = java_settings("OAUTHBEARER", pki, token_endpoint.url) | FAST
            async with Producer(front.bootstrap, **settings) as producer:
                await producer.send_and_wait(TOPIC, b"before")
                opened = len(front.sessions)
                async with asyncio.timeout(5):
                    while front.handshakes < 2 * opened:  # each connection, once more
                        await asyncio.sleep(0.02)
                await producer.send_and_wait(TOPIC, b"after")
            assert len(front.sessions) == opened  # on the same connections
    assert [r.value for r in cluster.records(TOPIC, 0)] == [b"before", b"after"]
