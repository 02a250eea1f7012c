"""SASL PLAIN (RFC 4616): one message, ``authzid NUL authcid NUL passwd``, no server reply.

Use it only over TLS: the password crosses the wire as is. The authorization identity is left
empty, so the broker authorizes as the authenticated user.
"""

from __future__ import annotations

from kafkawire.net.errors import AuthenticationError

__all__ = ["Plain"]


class Plain:
    """PLAIN credentials; stateless, so the mechanism is its own session."""

    name = "PLAIN"

    def __init__(self, username: str, password: str) -> None:
        if not username or "\0" in username or "\0" in password:
            raise ValueError("PLAIN needs a non-empty username; neither may contain NUL")
        self._message = b"\0" + username.encode() + b"\0" + password.encode()

    async def start(self) -> Plain:
        """The exchange for one connection: PLAIN's single message needs no state of its own."""
        return self

    def initial_response(self) -> bytes:
        """The client's only message: the user name and password."""
        return self._message

    def receive(self, challenge: bytes) -> bytes | None:
        """The broker's answer, which must be empty: PLAIN is done after one message."""
        if challenge:
            raise AuthenticationError("the server answered PLAIN with data; PLAIN expects none")
        return None
