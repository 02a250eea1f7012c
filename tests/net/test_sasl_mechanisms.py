"""PLAIN and OAUTHBEARER state machines (SCRAM has its own file)."""

from __future__ import annotations

import pytest

from kafkawire.net import AuthenticationError, OAuthBearer, Plain


async def test_plain() -> None:
    session = await Plain("alice", "pässword").start()
    assert session.initial_response() == b"\0alice\0p\xc3\xa4ssword"
    assert session.receive(b"") is None
    with pytest.raises(AuthenticationError, match="expects none"):
        session.receive(b"surprise")


@pytest.mark.parametrize(("user", "password"), [("", "p"), ("a\0b", "p"), ("a", "p\0")])
def test_plain_refuses_bad_credentials(user: str, password: str) -> None:
    with pytest.raises(ValueError, match="NUL"):
        Plain(user, password)


async def _token() -> str:
    return "eyJhbGciOi.eyJzdWIi.c2ln-_"


async def test_oauthbearer_initial_response_and_success() -> None:
    session = await OAuthBearer(_token).start()
    assert session.initial_response() == b"n,,\x01auth=Bearer eyJhbGciOi.eyJzdWIi.c2ln-_\x01\x01"
    assert session.receive(b"") is None
    with pytest.raises(AuthenticationError, match="after the exchange"):
        session.receive(b"")


async def test_oauthbearer_error_challenge_is_acknowledged_then_fails() -> None:
    session = await OAuthBearer(_token).start()
    session.initial_response()
    assert session.receive(b'{"status":"invalid_token"}') == b"\x01"
    with pytest.raises(AuthenticationError, match="invalid_token"):
        session.receive(b"")


@pytest.mark.parametrize("token", ["", "has space", "a\x01b"])
async def test_oauthbearer_refuses_malformed_tokens(token: str) -> None:
    async def provider() -> str:
        return token

    with pytest.raises(AuthenticationError, match="RFC 6750"):
        await OAuthBearer(provider).start()
