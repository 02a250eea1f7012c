"""SASL through the connection: SaslHandshake + SaslAuthenticate against a fake broker.

The fake broker's SASL side is written here (PLAIN, OAUTHBEARER) and in ``scram_server`` (SCRAM),
independently of the client code; one test relays SCRAM-SHA-256 to GNU SASL instead.
"""

from __future__ import annotations

from typing import Any

import pytest

from kafkawire.errors import ConnectionClosedError, SaslAuthenticationFailedError
from kafkawire.net import AuthenticationError, Connection, OAuthBearer, Plain, SaslMechanism, Scram

from .fakebroker import ALL_APIS, WAIT, FakeBroker, FakeClient, echo, messages, names, request
from .gsasl import GSASL, GsaslServer
from .sasl_server import GOOD_TOKEN, SaslSession, sasl_answer


def sasl_handler(**options: Any) -> Any:
    async def handler(client: FakeClient, header: Any, body: Any) -> Any:
        session = client.state.setdefault("sasl", SaslSession(**options))
        if header.request_api_key in (17, 36):
            return sasl_answer(session, header, body)
        if not session.authenticated:
            client.abort()  # what Kafka does to requests before authentication
            return None
        return echo(body)

    return handler


async def good_token() -> str:
    return GOOD_TOKEN


async def bad_token() -> str:
    return "expired.token"


async def _open(broker: FakeBroker, sasl: SaslMechanism) -> Connection:
    return await Connection.open("127.0.0.1", broker.port, sasl=sasl, connect_timeout=WAIT)


@pytest.mark.parametrize(
    "sasl",
    [
        Plain("alice", "wonderland"),
        Scram("SCRAM-SHA-256", "alice", "wonderland"),
        Scram("SCRAM-SHA-512", "alice", "wonderland"),
        OAuthBearer(good_token),
    ],
    ids=lambda sasl: sasl.name,
)
@pytest.mark.parametrize("authenticate_versions", [range(1), range(3)], ids=["v0", "v2"])
async def test_authentication_succeeds(sasl: SaslMechanism, authenticate_versions: range) -> None:
    table = ALL_APIS | {36: authenticate_versions}
    async with FakeBroker(sasl_handler(), api_versions=table) as broker:
        async with await _open(broker, sasl) as conn:
            assert names(await conn.send(request("t"))) == ["t"]
        sent = [(h.request_api_key, h.request_api_version) for h, _ in broker.clients[0].requests]
        assert sent[1] == (17, 1)
        assert (36, authenticate_versions.stop - 1) in sent


@pytest.mark.parametrize(
    "sasl",
    [
        Plain("alice", "wrong"),
        Scram("SCRAM-SHA-256", "alice", "wrong"),
        Scram("SCRAM-SHA-512", "mallory", "wonderland"),
        OAuthBearer(bad_token),
    ],
    ids=lambda sasl: sasl.name,
)
async def test_broker_refusal_carries_its_message(sasl: SaslMechanism) -> None:
    async with FakeBroker(sasl_handler()) as broker:
        with pytest.raises(AuthenticationError, match="Authentication failed") as info:
            await _open(broker, sasl)
    assert info.value.error_code == 58
    assert not info.value.retriable
    assert isinstance(info.value.__cause__, SaslAuthenticationFailedError)


async def test_oauthbearer_refusal_goes_through_the_rfc7628_error_step() -> None:
    async with FakeBroker(sasl_handler()) as broker:
        with pytest.raises(AuthenticationError, match="invalid token"):
            await _open(broker, OAuthBearer(bad_token))
        sent = [b.auth_bytes for h, b in broker.clients[0].requests if h.request_api_key == 36]
        assert sent[-1] == b"\x01"


async def test_server_that_cannot_prove_the_password_is_refused() -> None:
    async with FakeBroker(sasl_handler(tamper_signature=True)) as broker:
        with pytest.raises(AuthenticationError, match="signature does not verify") as info:
            await _open(broker, Scram("SCRAM-SHA-512", "alice", "wonderland"))
    assert info.value.error_code is None


async def test_mechanism_the_broker_does_not_enable() -> None:
    class Gssapi(Plain):
        name = "GSSAPI"

    async with FakeBroker(sasl_handler()) as broker:
        with pytest.raises(AuthenticationError, match="enables: PLAIN, SCRAM-SHA-256") as info:
            await _open(broker, Gssapi("a", "b"))
    assert info.value.error_code == 33


async def test_other_handshake_errors_are_named() -> None:
    async def illegal_state(client: FakeClient, header: Any, body: Any) -> Any:
        return messages(17, header.request_api_version).SaslHandshakeResponse(error_code=34)

    async with FakeBroker(illegal_state) as broker:
        with pytest.raises(AuthenticationError, match=r"SaslHandshake .* ILLEGAL_SASL_STATE"):
            await _open(broker, Plain("alice", "wonderland"))


async def test_saslhandshake_v0_only_is_refused_clearly() -> None:
    async with FakeBroker(sasl_handler(), api_versions=ALL_APIS | {17: range(1)}) as broker:
        with pytest.raises(AuthenticationError, match="only SaslHandshake v0"):
            await _open(broker, Plain("alice", "wonderland"))


async def test_unauthenticated_request_is_cut_off() -> None:
    async with (
        FakeBroker(sasl_handler()) as broker,
        await Connection.open("127.0.0.1", broker.port, connect_timeout=WAIT) as conn,
    ):
        with pytest.raises(ConnectionClosedError, match="the broker closed the connection"):
            await conn.send(request("t"), timeout=WAIT)


@pytest.mark.skipif(GSASL is None, reason="needs GNU SASL's gsasl command (Debian: gsasl)")
async def test_scram_sha256_against_gsasl_through_the_connection() -> None:
    gsasl = await GsaslServer.start("alice", "wonderland")

    async def relay(client: FakeClient, header: Any, body: Any) -> Any:
        version = header.request_api_version
        if header.request_api_key == 17:
            return messages(17, version).SaslHandshakeResponse(mechanisms=("SCRAM-SHA-256",))
        if header.request_api_key == 36:
            reply = await gsasl.exchange(body.auth_bytes)
            return messages(36, version).SaslAuthenticateResponse(auth_bytes=reply)
        return echo(body)

    try:
        async with (
            FakeBroker(relay) as broker,
            await _open(broker, Scram("SCRAM-SHA-256", "alice", "wonderland")) as conn,
        ):
            assert names(await conn.send(request("t"))) == ["t"]
    finally:
        await gsasl.stop()
