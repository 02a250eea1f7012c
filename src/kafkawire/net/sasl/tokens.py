"""OAUTHBEARER token providers that keep a token and fetch a new one before it expires.

:class:`RefreshingTokens` is a :data:`~.oauthbearer.TokenProvider`: it hands out the token it
holds until 80% of the token's lifetime has passed (Java's ``sasl.login.refresh.window.factor``
default), then fetches a new one; connections asking at once share one fetch. A token that is
already expired when it arrives is refused with an error that says so, rather than sent to a
broker that will refuse it with less to go on. Where tokens come from is a ``fetch``
coroutine: an OIDC token endpoint or a token file (:mod:`.oidc`), or :func:`unsecured_login`
(Kafka's ``unsecuredLoginStringClaim_sub``, for brokers that take unsigned tokens, as
development clusters do).

The lifetime of a JWT is its ``exp`` claim; nothing here checks its signature (the broker
does).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import datetime
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkawire.net.errors import AuthenticationError

__all__ = [
    "REFRESH_FACTOR",
    "RefreshingTokens",
    "Token",
    "jwt_claims",
    "unsecured_jwt",
    "unsecured_login",
]

REFRESH_FACTOR = 0.8
_UNSECURED_LIFETIME = 3600.0  # Kafka's unsecuredLoginLifetimeSeconds default


@dataclass(frozen=True, slots=True)
class Token:
    """A token, and when it was issued and expires (seconds since the epoch)."""

    value: str
    issued_at: float
    expires_at: float


class RefreshingTokens:
    """A token provider over ``fetch``; ``source`` names where tokens come from in errors
    (never a secret), ``clock`` is the wall clock (seconds since the epoch)."""

    def __init__(
        self,
        fetch: Callable[[], Awaitable[Token]],
        *,
        source: str,
        refresh_factor: float = REFRESH_FACTOR,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._fetch = fetch
        self.source = source
        self._refresh_factor = refresh_factor
        self._clock = clock
        self._token: Token | None = None
        self._refresh_at = 0.0
        self._pending: asyncio.Task[str] | None = None

    async def __call__(self) -> str:
        if self._token is not None and self._clock() < self._refresh_at:
            return self._token.value
        loop = asyncio.get_running_loop()
        pending = self._pending
        # One fetch per event loop at a time; a task of another loop cannot be awaited here.
        if pending is None or pending.done() or pending.get_loop() is not loop:
            pending = loop.create_task(self._refresh(), name=f"kafkawire-token {self.source}")
            pending.add_done_callback(_seen)
            self._pending = pending
        # Shielded: a connection that gives up does not cancel the fetch others wait on.
        return await asyncio.shield(pending)

    async def _refresh(self) -> str:
        token = await self._fetch()
        now = self._clock()
        if token.expires_at <= now:
            raise AuthenticationError(
                f"the token from {self.source} expired at {_iso(token.expires_at)},"
                f" {now - token.expires_at:.0f} s before it arrived: check the clocks, and the"
                " lifetime the identity provider gives tokens"
            )
        self._token = token
        lifetime = token.expires_at - token.issued_at
        self._refresh_at = token.issued_at + self._refresh_factor * lifetime
        return token.value


def _seen(task: asyncio.Task[str]) -> None:
    if not task.cancelled():
        task.exception()  # a fetch nobody awaited any more is not an error "never retrieved"


def _iso(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).isoformat(timespec="seconds")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt_claims(token: str) -> dict[str, Any] | None:
    """The claims of a JWT (its middle part), unverified; ``None`` if ``token`` is not one."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
        claims = json.loads(payload)
    except (binascii.Error, ValueError):
        return None
    return claims if isinstance(claims, dict) else None


def unsecured_jwt(claims: Mapping[str, Any]) -> str:
    """An unsigned JWT (``"alg": "none"``, empty signature) with ``claims``."""
    header = _b64url(json.dumps({"alg": "none"}).encode())
    return f"{header}.{_b64url(json.dumps(dict(claims)).encode())}."


def unsecured_login(
    claims: Mapping[str, str],
    *,
    lifetime: float = _UNSECURED_LIFETIME,
    clock: Callable[[], float] = time.time,
) -> RefreshingTokens:
    """Unsigned tokens with the string ``claims`` (``sub`` among them), as Kafka's
    ``OAuthBearerUnsecuredLoginCallbackHandler`` makes them: for brokers that validate with
    Kafka's unsecured validator, never for production."""

    async def fetch() -> Token:
        now = clock()
        value = unsecured_jwt({**claims, "iat": int(now), "exp": int(now + lifetime)})
        return Token(value, now, now + lifetime)

    return RefreshingTokens(fetch, source="the unsecured login", clock=clock)
