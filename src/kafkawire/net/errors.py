"""Errors of the connection layer, all under :class:`kafkawire.errors.KafkawireError`.

Which are retriable (a new attempt, possibly on a new connection, may succeed):

- :class:`ConnectError`: yes; the broker may be restarting or briefly unreachable.
- :class:`RequestTimeoutError`: yes; the connection stays open and the late response, if it
  ever comes, is discarded.
- :class:`kafkawire.errors.ConnectionClosedError` (raised for every request in flight when a
  connection closes or breaks): yes, on a new connection.
- :class:`NoCommonVersionError`: no; the broker will not grow a new API version by itself.
- :class:`AuthenticationError`: no; credentials or broker configuration must change first.
  :class:`SslAuthenticationError` is one: the TLS handshake failed on a certificate (Java's
  ``SslAuthenticationException``), which no new attempt changes.
"""

from __future__ import annotations

from kafkawire.errors import KafkawireError

__all__ = [
    "AuthenticationError",
    "ConnectError",
    "NoCommonVersionError",
    "RequestTimeoutError",
    "SslAuthenticationError",
]


class ConnectError(KafkawireError):
    """A connection could not be set up: TCP connect, TLS handshake, or the setup deadline."""

    retriable = True


class RequestTimeoutError(KafkawireError, TimeoutError):
    """No response arrived within the request's timeout; the connection stays usable."""

    retriable = True


class NoCommonVersionError(KafkawireError):
    """The broker cannot serve a request: it lacks the API, or the version asked for.

    ``api_key`` names the API; ``broker_versions`` is the range the broker announced in
    ApiVersions (``None`` if it does not offer the API at all).
    """

    def __init__(self, message: str, *, api_key: int, broker_versions: range | None) -> None:
        super().__init__(message)
        self.api_key = api_key
        self.broker_versions = broker_versions


class AuthenticationError(KafkawireError):
    """SASL authentication failed; the message is the broker's own where it gave one.

    ``error_code`` is the broker's Kafka error code (for example 58,
    SASL_AUTHENTICATION_FAILED), or ``None`` when kafkawire itself refused to go on (for
    example a SCRAM server signature that does not verify).
    """

    def __init__(self, message: str, *, error_code: int | None = None) -> None:
        super().__init__(message)
        self.error_code = error_code


class SslAuthenticationError(AuthenticationError):
    """The TLS handshake failed on a certificate: the broker's is not trusted or does not name
    the host, or the broker refused the client's. The message says which setting to look at."""
