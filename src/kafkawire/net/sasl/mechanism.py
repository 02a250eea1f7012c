"""What every SASL mechanism offers the connection: a name and fresh sans-IO sessions.

A :class:`SaslMechanism` holds configuration (credentials, a token provider) and may be shared
by many connections; :meth:`SaslMechanism.start` makes one :class:`SaslSession` per
authentication, because a session carries per-exchange state (a SCRAM nonce). Sessions do no
I/O: bytes from the server in, bytes for the server out. ``start`` is async only so that a
mechanism can fetch something first (OAUTHBEARER awaits its token provider).
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["SaslMechanism", "SaslSession"]


class SaslSession(Protocol):
    """One client-side SASL exchange."""

    def initial_response(self) -> bytes:
        """The client's first message (every mechanism kafkawire offers is client-first)."""
        ...

    def receive(self, challenge: bytes) -> bytes | None:
        """The server's next message in; the client's reply out, or ``None`` when done.

        Raises :class:`~kafkawire.net.errors.AuthenticationError` when the server's message
        is malformed, reports an error, or fails verification.
        """
        ...


class SaslMechanism(Protocol):
    """A configured SASL mechanism, named as Kafka's ``sasl.mechanism`` names it."""

    @property
    def name(self) -> str:
        """The mechanism's name as Kafka's ``sasl.mechanism`` gives it (``"PLAIN"``, ...)."""
        ...

    async def start(self) -> SaslSession:
        """A new exchange with the broker, for one connection."""
        ...
