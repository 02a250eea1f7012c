"""The SCRAM client state machine: RFC vectors, an independent server, and GNU SASL."""

from __future__ import annotations

import base64

import pytest

from kafkawire.net import AuthenticationError, Scram
from kafkawire.net.sasl.saslprep import saslprep
from kafkawire.net.sasl.scram import ScramClient

from .gsasl import GSASL, GsaslServer
from .scram_server import ScramServer


def test_rfc5802_sha1_vector() -> None:
    client = ScramClient("sha1", "user", "pencil", nonce="fyko+d2lbbFgONRv9qkxdawL")
    assert client.initial_response() == b"n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"
    final = client.receive(
        b"r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096"
    )
    assert final == (
        b"c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts="
    )
    assert client.receive(b"v=rmF9pqV8S7suAoZWja4dJRkFsKQ=") is None


RFC7677_SERVER_FIRST = (
    b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
)


def test_rfc7677_sha256_vector() -> None:
    client = ScramClient("sha256", "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    assert client.initial_response() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    assert client.receive(RFC7677_SERVER_FIRST) == (
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert client.receive(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=") is None


def test_rfc7677_wrong_server_signature_is_refused() -> None:
    client = ScramClient("sha256", "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    client.initial_response()
    client.receive(RFC7677_SERVER_FIRST)
    bad = base64.b64encode(bytes(32)).decode()
    with pytest.raises(AuthenticationError, match="signature does not verify"):
        client.receive(f"v={bad}".encode())


def _run(client: ScramClient, server: ScramServer, client_first: bytes | None = None) -> None:
    server_first = server.first(client_first or client.initial_response())
    client_final = client.receive(server_first)
    assert client_final is not None
    assert client.receive(server.final(client_final)) is None


@pytest.mark.parametrize(
    ("mechanism", "hash_name"), [("SCRAM-SHA-256", "sha256"), ("SCRAM-SHA-512", "sha512")]
)
async def test_round_trip_against_independent_server(mechanism: str, hash_name: str) -> None:
    server = ScramServer(hash_name, {"alice,=x": "s3cret"})
    client = await Scram(mechanism, "alice,=x", "s3cret").start()
    client_first = client.initial_response()
    assert client_first.startswith(b"n,,n=alice=2C=3Dx,r=")
    _run(client, server, client_first)


async def test_nonces_are_fresh_per_session() -> None:
    scram = Scram("SCRAM-SHA-512", "u", "p")
    first, second = await scram.start(), await scram.start()
    assert first.initial_response() != second.initial_response()


async def test_tampered_server_signature_is_refused() -> None:
    server = ScramServer("sha512", {"u": "p"}, tamper_signature=True)
    with pytest.raises(AuthenticationError, match="does not verify"):
        _run(await Scram("SCRAM-SHA-512", "u", "p").start(), server)


@pytest.mark.parametrize(
    ("server_first", "match"),
    [
        (b"r=OTHERsrv,s=c2FsdA==,i=4096", "nonce"),
        (b"r=CLIENT,s=c2FsdA==,i=4096", "nonce"),
        (b"r=CLIENTsrv,s=c2FsdA==,i=4095", "iteration count"),
        (b"r=CLIENTsrv,s=c2FsdA==,i=999999999", "iteration count"),
        (b"r=CLIENTsrv,s=c2FsdA==,i=-1", "iteration count"),
        ("r=CLIENTsrv,s=c2FsdA==,i=4096\u00b2".encode(), "iteration count"),
        (b"r=CLIENTsrv,s=!!,i=4096", "base64"),
        (b"m=ext,r=CLIENTsrv,s=c2FsdA==,i=4096", "attributes"),
        (b"r=CLIENTsrv,i=4096", "attributes"),
        (b"garbage", "malformed"),
        (b"\xff\xfe", "UTF-8"),
    ],
)
def test_bad_server_first_is_refused(server_first: bytes, match: str) -> None:
    client = ScramClient("sha256", "u", "p", nonce="CLIENT")
    client.initial_response()
    with pytest.raises(AuthenticationError, match=match):
        client.receive(server_first)


def test_server_error_and_out_of_order_messages() -> None:
    client = ScramClient("sha256", "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    with pytest.raises(AuthenticationError, match="outside the exchange"):
        client.receive(b"r=x")
    client.initial_response()
    with pytest.raises(AuthenticationError, match="already started"):
        client.initial_response()
    client.receive(RFC7677_SERVER_FIRST)
    with pytest.raises(AuthenticationError, match="server error: invalid-proof"):
        client.receive(b"e=invalid-proof")


def test_unknown_mechanism_and_prohibited_characters() -> None:
    with pytest.raises(ValueError, match="SCRAM-SHA-1"):
        Scram("SCRAM-SHA-1", "u", "p")
    with pytest.raises(ValueError, match=r"U\+0007"):
        Scram("SCRAM-SHA-256", "u", "bell\x07")


@pytest.mark.parametrize(
    ("raw", "prepared"),
    [
        # RFC 4013 section 3's examples.
        ("I\u00adX", "IX"),
        ("user", "user"),
        ("USER", "USER"),
        ("\u00aa", "a"),
        ("\u2168", "IX"),
        # Non-ASCII space maps to SPACE.
        ("a\u00a0b", "a b"),
    ],
)
def test_saslprep(raw: str, prepared: str) -> None:
    assert saslprep(raw) == prepared


@pytest.mark.parametrize(
    ("raw", "match"), [("\u0007", "U\\+0007"), ("\u0627\u0031", "right-to-left")]
)
def test_saslprep_refuses(raw: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        saslprep(raw)


@pytest.mark.skipif(GSASL is None, reason="needs GNU SASL's gsasl command (Debian: gsasl)")
async def test_sha256_against_gsasl() -> None:
    server = await GsaslServer.start("user", "pencil")
    try:
        client = await Scram("SCRAM-SHA-256", "user", "pencil").start()
        client_final = client.receive(await server.exchange(client.initial_response()))
        assert client_final is not None
        assert client.receive(await server.exchange(client_final)) is None
    finally:
        await server.stop()


@pytest.mark.skipif(GSASL is None, reason="needs GNU SASL's gsasl command (Debian: gsasl)")
async def test_wrong_password_refused_by_gsasl() -> None:
    server = await GsaslServer.start("user", "pencil")
    client = await Scram("SCRAM-SHA-256", "user", "wrong").start()
    client_final = client.receive(await server.exchange(client.initial_response()))
    assert client_final is not None
    assert server.process.stdin is not None
    server.process.stdin.write(base64.b64encode(client_final) + b"\n")
    await server.process.stdin.drain()
    stderr = await server.stop()
    assert server.process.returncode != 0
    assert b"Error authenticating user" in stderr
