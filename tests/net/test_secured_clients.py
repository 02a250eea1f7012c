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
import contextlib
import logging
import traceback
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
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


@dataclass
class Secured:
    """The fake cluster behind the front, and the settings a client needs for it."""

    cluster: FakeCluster
    front: SecureFront
    pki: Pki
    token_url: str

    def settings(self, mechanism: str, *, fast: bool = True, **changes: str) -> Any:
        given = java_settings(mechanism, self.pki, self.token_url, **changes)
        return given | FAST if fast else given

    def principals(self, mechanism: str) -> set[str | None]:
        assert self.front.sessions
        assert {s.mechanism for s in self.front.sessions} == {mechanism}
        return {s.principal for s in self.front.sessions}


@contextlib.asynccontextmanager
async def _secured(
    pki: Pki, token_url: str = "", cert: Any = None, **front: Any
) -> AsyncIterator[Secured]:
    cert = cert or (pki.server_cert, pki.server_key)
    sessions = lambda: SaslSession(token_check=unexpired_jwt)  # noqa: E731
    async with FakeCluster(num_brokers=1) as cluster:
        cluster.create_topic(TOPIC, partitions=1)
        ports = [int(address.rsplit(":", 1)[1]) for address in cluster.bootstrap.split(",")]
        async with SecureFront(ports, ssl=server_context(*cert), sasl=sessions, **front) as fronted:
            yield Secured(cluster, fronted, pki, token_url)


@pytest.fixture
async def secured(pki: Pki, token_endpoint: TokenEndpoint) -> AsyncIterator[Secured]:
    async with _secured(pki, token_endpoint.url) as each:
        yield each


def _principal(mechanism: str) -> str:
    return CLIENT_ID if mechanism == "OAUTHBEARER" else USER


@pytest.mark.parametrize("mechanism", MECHANISMS)
async def test_producer_then_consumer(
    mechanism: str, secured: Secured, token_endpoint: TokenEndpoint
) -> None:
    settings = secured.settings(mechanism)
    async with Producer(secured.front.bootstrap, **settings) as producer:
        await producer.send_and_wait(TOPIC, b"over SASL_SSL")
    async with Consumer(
        TOPIC, bootstrap_servers=secured.front.bootstrap, auto_offset_reset="earliest", **settings
    ) as consumer:
        batches = await consumer.getmany(timeout_ms=5000)
    assert [r.value for records in batches.values() for r in records] == [b"over SASL_SSL"]
    assert secured.principals(mechanism) == {_principal(mechanism)}
    if mechanism == "OAUTHBEARER":  # one token for every connection of a client
        grants = token_endpoint.requests
        assert len(grants) == 2
        assert all(g["credentials_ok"] for g in grants)
        assert {g["scope"] for g in grants} == {"kafka"}


@pytest.mark.parametrize("mechanism", MECHANISMS)
async def test_admin(mechanism: str, secured: Secured) -> None:
    async with Admin(secured.front.bootstrap, **secured.settings(mechanism)) as admin:
        assert TOPIC in await admin.list_topics()
    assert secured.principals(mechanism) == {_principal(mechanism)}


@pytest.mark.parametrize("mechanism", MECHANISMS)
async def test_kafka_client(mechanism: str, secured: Secured) -> None:
    settings = secured.settings(mechanism, fast=False)
    async with KafkaClient(secured.front.bootstrap, **settings) as client:
        await client.produce(TOPIC, 0, [b"low level"])
        fetched = await client.fetch(TOPIC, 0, 0)
    assert [r.value for r in fetched.records] == [b"low level"]
    assert secured.principals(mechanism) == {_principal(mechanism)}


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
    mechanism: str, secured: Secured, caplog: pytest.LogCaptureFixture
) -> None:
    settings = secured.settings(mechanism, password=WRONG_PASSWORD)
    with pytest.raises(AuthenticationError, match=f"SASL {mechanism} authentication") as failure:
        async with Producer(secured.front.bootstrap, **settings):
            pass
    assert failure.value.error_code == 58  # SASL_AUTHENTICATION_FAILED, the broker's word
    assert "Authentication failed" in str(failure.value)
    assert len(secured.front.sessions) == 1  # refused for good: not tried again
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert "refused the connection: SASL" in warning
    assert "trying again" not in warning


async def test_an_expired_token_is_one_clear_error(
    secured: Secured, token_endpoint: TokenEndpoint
) -> None:
    token_endpoint.lifetime = -60
    settings = secured.settings("OAUTHBEARER")
    with pytest.raises(AuthenticationError, match=r"the token from .* expired at .*before it"):
        async with Consumer(TOPIC, bootstrap_servers=secured.front.bootstrap, **settings):
            pass
    assert not any(s.authenticated for s in secured.front.sessions)


async def test_an_untrusted_certificate_is_one_clear_error(pki: Pki) -> None:
    other = (pki.other_server_cert, pki.other_server_key)
    async with _secured(pki, cert=other) as secured:
        with pytest.raises(SslAuthenticationError, match="certificate is not trusted"):
            async with Admin(secured.front.bootstrap, **secured.settings("PLAIN")) as admin:
                await admin.list_topics()


@pytest.mark.parametrize("mechanism", MECHANISMS)
async def test_no_secret_is_logged_or_raised(
    mechanism: str, secured: Secured, every_log_line: list[str]
) -> None:
    secrets = {PASSWORD, WRONG_PASSWORD, CLIENT_SECRET, "wrong-" + CLIENT_SECRET}
    wrong = (
        {"client_secret": "wrong-" + CLIENT_SECRET}
        if mechanism == "OAUTHBEARER"
        else {"password": WRONG_PASSWORD}
    )
    async with Producer(secured.front.bootstrap, **secured.settings(mechanism)) as producer:
        await producer.send_and_wait(TOPIC, b"x")  # a good run logs too
        said = [repr(producer.settings)]
    with pytest.raises(AuthenticationError) as failure:
        async with Producer(secured.front.bootstrap, **secured.settings(mechanism, **wrong)):
            pass
    everything = "\n".join([*said, _everything_said(failure.value, every_log_line)])
    assert every_log_line  # the run did log (at DEBUG)
    assert not [secret for secret in secrets if secret in everything]


async def test_a_producer_reauthenticates_when_the_broker_asks(
    pki: Pki, token_endpoint: TokenEndpoint
) -> None:
    async with _secured(pki, token_endpoint.url, session_lifetime_ms=200) as secured:
        front = secured.front
        async with Producer(front.bootstrap, **secured.settings("OAUTHBEARER")) as producer:
            await producer.send_and_wait(TOPIC, b"before")
            opened = len(front.sessions)
            async with asyncio.timeout(5):
                while front.handshakes < 2 * opened:  # each connection, once more
                    await asyncio.sleep(0.02)
            await producer.send_and_wait(TOPIC, b"after")
        assert len(front.sessions) == opened  # on the same connections
        assert [r.value for r in secured.cluster.records(TOPIC, 0)] == [b"before", b"after"]
