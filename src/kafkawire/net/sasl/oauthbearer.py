"""SASL OAUTHBEARER (RFC 7628) with a token from an async provider the application supplies.

The client's one message is ``n,,\\x01auth=Bearer <token>\\x01\\x01``, with any SASL extensions
(KIP-342: ``key=value`` pairs such as Confluent Cloud's ``logicalCluster`` and
``identityPoolId``) between the token and the final separators. A broker that accepts the
token answers with nothing. One that rejects it sends an error document (JSON) as a
challenge; RFC 7628 section 3.2.3 has the client answer that with a single ``\\x01``, after which
the broker fails the exchange (Kafka: error SASL_AUTHENTICATION_FAILED with a message). Each
authentication (a connection's first, and each re-authentication) calls the provider once, so
the provider decides about caching and refreshing (:mod:`.tokens` has providers that do).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping

from kafkawire.net.errors import AuthenticationError

__all__ = ["OAuthBearer", "OAuthBearerClient", "TokenProvider", "encode_extensions"]

TokenProvider = Callable[[], Awaitable[str]]

# RFC 6750 section 2.1, b64token.
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
# RFC 7628 section 3.1 as Kafka checks it (OAuthBearerClientInitialResponse): "auth" is taken.
_EXTENSION_KEY = re.compile(r"[A-Za-z]+")
_EXTENSION_VALUE = re.compile(r"[\x21-\x7E \t\r\n]+")
_SEPARATOR = "\x01"


def encode_extensions(extensions: Mapping[str, str]) -> str:
    """The extensions as they follow the token in the message (each after a separator); a
    ``ValueError`` names one that RFC 7628 does not allow (never showing its value)."""
    for key, value in extensions.items():
        if not _EXTENSION_KEY.fullmatch(key) or key == "auth":
            raise ValueError(
                f"the SASL extension name {key!r} must be ASCII letters only, and not 'auth'"
            )
        if not _EXTENSION_VALUE.fullmatch(value):
            raise ValueError(
                f"the SASL extension {key} must be printable ASCII (spaces, tabs and line"
                " breaks allowed), and not empty"
            )
    return "".join(f"{_SEPARATOR}{key}={value}" for key, value in extensions.items())


class OAuthBearer:
    """OAUTHBEARER with ``token_provider``, awaited once per authentication, and SASL
    ``extensions`` sent with every token (a ``ValueError`` names one RFC 7628 does not allow)."""

    name = "OAUTHBEARER"

    def __init__(
        self, token_provider: TokenProvider, *, extensions: Mapping[str, str] | None = None
    ) -> None:
        self._token_provider = token_provider
        self._extensions = encode_extensions(extensions or {})

    async def start(self) -> OAuthBearerClient:
        """A new exchange for one connection, with a token from the provider."""
        return OAuthBearerClient(await self._token_provider(), self._extensions)


class OAuthBearerClient:
    """One OAUTHBEARER exchange for one token (``extensions`` as :class:`OAuthBearer` makes
    them)."""

    def __init__(self, token: str, extensions: str = "") -> None:
        if not _B64TOKEN.fullmatch(token):
            raise AuthenticationError(
                "the OAUTHBEARER token provider returned a string that is not an RFC 6750 token"
            )
        self._token = token
        self._extensions = extensions
        self._server_error: str | None = None
        self._done = False

    def initial_response(self) -> bytes:
        message = f"n,,{_SEPARATOR}auth=Bearer {self._token}{self._extensions}"
        return f"{message}{_SEPARATOR}{_SEPARATOR}".encode()

    def receive(self, challenge: bytes) -> bytes | None:
        if self._done:
            raise AuthenticationError("unexpected OAUTHBEARER message after the exchange ended")
        if self._server_error is not None:
            raise AuthenticationError(f"the server rejected the token: {self._server_error}")
        if challenge:
            self._server_error = challenge.decode(errors="replace")
            return _SEPARATOR.encode()
        self._done = True
        return None
