"""KIP-368: a connection authenticates again before the session the broker gave it ends.

The fake broker gives a session lifetime in SaslAuthenticate; the client must send SaslHandshake
and SaslAuthenticate again on the same connection, holding back the requests written meanwhile
(a broker takes only SASL during a re-authentication), and close the connection if the broker
refuses it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafkawire.errors import ConnectionClosedError
from kafkawire.net import AuthenticationError, Connection, OAuthBearer, Plain, Scram

from .fakebroker import WAIT, FakeBroker, FakeClient, echo, names, request
from .sasl_server import GOOD_TOKEN, SaslSession, sasl_answer

LIFETIME_MS = 100  # the client re-authenticates 85-95 ms after authenticating


def keys(client: FakeClient) -> list[int]:
    return [header.request_api_key for header, _ in client.requests]


class ReauthenticatingBroker:
    """Gives sessions of LIFETIME_MS; ``gate`` holds the answer to a re-authentication's
    SaslHandshake; ``refuse_again`` refuses every exchange after the first."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.gate.set()
        self.reauthenticating = asyncio.Event()
        self.reauthenticated = asyncio.Event()
        self.refuse_again = False

    async def handler(self, client: FakeClient, header: Any, body: Any) -> Any:
        session = client.state.setdefault("sasl", SaslSession())
        key = header.request_api_key
        if key == 17:
            again = client.state.get("authenticated_once", False)
            client.state["again"] = again
            if again:
                self.reauthenticating.set()
                await self.gate.wait()
                if self.refuse_again:
                    session.users = {}
        if key == 36:
            answer = sasl_answer(session, header, body, session_lifetime_ms=LIFETIME_MS)
            if session.authenticated:
                if client.state.get("again"):
                    self.reauthenticated.set()
                client.state["authenticated_once"] = True
            return answer
        if key in (17, 36):
            return sasl_answer(session, header, body)
        if not session.authenticated:
            client.abort()
            return None
        return echo(body)


async def _open(port: int, sasl: Any) -> Connection:
    return await Connection.open("127.0.0.1", port, sasl=sasl, connect_timeout=WAIT)


@pytest.mark.parametrize(
    "sasl",
    [Plain("alice", "wonderland"), Scram("SCRAM-SHA-256", "alice", "wonderland")],
    ids=lambda sasl: sasl.name,
)
async def test_the_connection_authenticates_again_before_its_session_ends(sasl: Any) -> None:
    broker = ReauthenticatingBroker()
    async with FakeBroker(broker.handler) as fake, await _open(fake.port, sasl) as conn:
        await asyncio.wait_for(broker.reauthenticated.wait(), WAIT)
        assert names(await conn.send(request("after"))) == ["after"]
        (client,) = fake.clients
        exchange = [17, 36] if sasl.name == "PLAIN" else [17, 36, 36]
        assert keys(client) == [18, *exchange, *exchange, 3]


async def test_requests_written_during_it_wait_behind_it_in_order() -> None:
    broker = ReauthenticatingBroker()
    async with (
        FakeBroker(broker.handler) as fake,
        await _open(fake.port, Plain("alice", "wonderland")) as conn,
    ):
        broker.gate.clear()
        await asyncio.wait_for(broker.reauthenticating.wait(), WAIT)
        pending = [conn.write(request(name)) for name in ("first", "second")]
        broker.gate.set()
        answers = [names(await answer) for answer in pending]
        assert answers == [["first"], ["second"]]
        (client,) = fake.clients
        # Written while the handshake was unanswered, they reached the broker after the exchange.
        assert keys(client)[-4:] == [17, 36, 3, 3]


async def test_a_refused_reauthentication_closes_the_connection() -> None:
    broker = ReauthenticatingBroker()
    broker.refuse_again = True
    broker.gate.clear()
    async with (
        FakeBroker(broker.handler) as fake,
        await _open(fake.port, Plain("alice", "wonderland")) as conn,
    ):
        await asyncio.wait_for(broker.reauthenticating.wait(), WAIT)
        waiting = conn.write(request("held"))
        broker.gate.set()
        with pytest.raises(ConnectionClosedError, match="re-authentication failed") as closed:
            await waiting
        assert isinstance(closed.value.__cause__, AuthenticationError)
        assert conn.closed


async def test_oauthbearer_asks_its_provider_again() -> None:
    asked = 0

    async def tokens() -> str:
        nonlocal asked
        asked += 1
        return GOOD_TOKEN

    broker = ReauthenticatingBroker()
    async with FakeBroker(broker.handler) as fake, await _open(fake.port, OAuthBearer(tokens)):
        await asyncio.wait_for(broker.reauthenticated.wait(), WAIT)
    assert asked >= 2


async def test_no_lifetime_no_reauthentication() -> None:
    async def handler(client: FakeClient, header: Any, body: Any) -> Any:
        session = client.state.setdefault("sasl", SaslSession())
        if header.request_api_key in (17, 36):
            return sasl_answer(session, header, body)  # session_lifetime_ms 0
        return echo(body)

    async with (
        FakeBroker(handler) as fake,
        await _open(fake.port, Plain("alice", "wonderland")) as conn,
    ):
        assert conn._reauthentication is None
