"""SASL OAUTHBEARER (RFC 7628) with a token from an async provider the application supplies.

The client's one message is ``n,,\\x01auth=Bearer <token>\\x01\\x01``. A broker that accepts
the token answers with nothing. One that rejects it sends an error document (JSON) as a
challenge; RFC 7628 section 3.2.3 has the client answer that with a single ``\\x01``, after which
the broker fails the exchange (Kafka: error SASL_AUTHENTICATION_FAILED with a message). Each
connection calls the provider once, so the provider decides about caching and refreshing.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from kafkawire.net.errors import AuthenticationError

__all__ = ["OAuthBearer", "OAuthBearerClient", "TokenProvider"]

TokenProvider = Callable[[], Awaitable[str]]

# RFC 6750 section 2.1, b64token.
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


class OAuthBearer:
    """OAUTHBEARER with ``token_provider``, awaited once per authentication."""

    name = "OAUTHBEARER"

    def __init__(self, token_provider: TokenProvider) -> None:
        self._token_provider = token_provider

    async def start(self) -> OAuthBearerClient:
        return OAuthBearerClient(await self._token_provider())


class OAuthBearerClient:
    """One OAUTHBEARER exchange for one token."""

    def __init__(self, token: str) -> None:
        if not _B64TOKEN.fullmatch(token):
            raise AuthenticationError(
                "the OAUTHBEARER token provider returned a string that is not an RFC 6750 token"
            )
        self._token = token
        self._server_error: str | None = None
        self._done = False

    def initial_response(self) -> bytes:
        return f"n,,\x01auth=Bearer {self._token}\x01\x01".encode()

    def receive(self, challenge: bytes) -> bytes | None:
        if self._done:
            raise AuthenticationError("unexpected OAUTHBEARER message after the exchange ended")
        if self._server_error is not None:
            raise AuthenticationError(f"the server rejected the token: {self._server_error}")
        if challenge:
            self._server_error = challenge.decode(errors="replace")
            return b"\x01"
        self._done = True
        return None
