"""OAUTHBEARER tokens from an OIDC token endpoint (KIP-768), against one on loopback over TLS.

Tokens are kept until 80% of their lifetime has passed (a clock the test moves), fetched once
for callers that ask together, and every failure says which endpoint and why, never the secret.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkawire.net import AuthenticationError, ConnectError, client_context
from kafkawire.net.sasl import client_credentials
from kafkawire.net.sasl.tokens import jwt_claims, unsecured_jwt

from .pki import Pki
from .secured import server_context
from .token_endpoint import CLIENT_ID, CLIENT_SECRET, TokenEndpoint


@pytest.fixture
def endpoint(pki: Pki) -> Iterator[TokenEndpoint]:
    with TokenEndpoint(server_context(pki.server_cert, pki.server_key), lifetime=100) as served:
        yield served


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def _tokens(
    endpoint: TokenEndpoint, pki: Pki, clock: Clock | None = None, **changes: str
) -> object:
    options = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "scope": "kafka"}
    return client_credentials(
        endpoint.url,
        **(options | changes),
        ssl_context=client_context(cafile=str(pki.ca)),
        timeout=5,
        **({"clock": clock} if clock else {}),
    )


async def test_a_token_is_kept_until_80_percent_of_its_lifetime(
    endpoint: TokenEndpoint, pki: Pki
) -> None:
    clock = Clock()
    tokens = _tokens(endpoint, pki, clock)
    first = await tokens()  # type: ignore[operator]
    claims = jwt_claims(first)
    assert claims is not None
    assert claims["sub"] == CLIENT_ID
    assert claims["scope"] == "kafka"
    assert endpoint.requests == [
        {"grant_type": "client_credentials", "scope": "kafka", "credentials_ok": True}
    ]
    clock.now += 79  # of 100 s
    assert await tokens() == first  # type: ignore[operator]
    assert len(endpoint.requests) == 1
    clock.now += 2
    await tokens()  # type: ignore[operator]
    assert len(endpoint.requests) == 2


async def test_callers_asking_together_share_one_fetch(endpoint: TokenEndpoint, pki: Pki) -> None:
    tokens = _tokens(endpoint, pki)
    got = await asyncio.gather(*(tokens() for _ in range(5)))  # type: ignore[operator]
    assert len(set(got)) == 1
    assert len(endpoint.requests) == 1


async def test_refused_credentials_are_an_authentication_error(
    endpoint: TokenEndpoint, pki: Pki
) -> None:
    tokens = _tokens(endpoint, pki, client_secret="wrong-secret")
    with pytest.raises(AuthenticationError, match="refused the client credentials") as error:
        await tokens()  # type: ignore[operator]
    message = str(error.value)
    assert f"{endpoint.url}" in message
    assert "HTTP 401: invalid_client (bad)" in message
    assert "wrong-secret" not in message
    assert CLIENT_SECRET not in message


async def test_an_expired_token_is_refused_before_any_broker_sees_it(
    endpoint: TokenEndpoint, pki: Pki
) -> None:
    endpoint.lifetime = -30
    with pytest.raises(AuthenticationError, match=r"expired at .*, \d+ s before it arrived"):
        await _tokens(endpoint, pki)()  # type: ignore[operator]


async def test_an_untrusted_endpoint_is_refused(pki: Pki) -> None:
    other = server_context(pki.other_server_cert, pki.other_server_key)
    with (
        TokenEndpoint(other) as endpoint,
        pytest.raises(AuthenticationError, match="certificate that is not trusted"),
    ):
        await _tokens(endpoint, pki)()  # type: ignore[operator]


async def test_an_endpoint_that_is_down_is_retriable(pki: Pki) -> None:
    with TokenEndpoint(server_context(pki.server_cert, pki.server_key)) as endpoint:
        url = endpoint.url
    tokens = client_credentials(
        url,
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        ssl_context=client_context(cafile=str(pki.ca)),
        timeout=5,
    )
    with pytest.raises(ConnectError, match="cannot be reached") as error:
        await tokens()
    assert error.value.retriable


async def test_a_token_file(tmp_path: Path) -> None:
    path = tmp_path / "token.jwt"
    token = unsecured_jwt({"sub": "workload", "exp": int(time.time()) + 600})
    path.write_text(token + "\n")
    assert await client_credentials(path.as_uri())() == token
    path.write_text("not-a-jwt")
    with pytest.raises(AuthenticationError, match="without a lifetime"):
        await client_credentials(path.as_uri(), clock=lambda: time.time() + 10_000)()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://idp.example/token", "must be https://"),
        ("ftp://idp.example/token", "must be an https:// or a file:// URL"),
    ],
)
def test_urls_that_cannot_be_used(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        client_credentials(url, client_id="a", client_secret="b")
