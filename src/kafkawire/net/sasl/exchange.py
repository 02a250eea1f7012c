"""How Kafka carries SASL: SaslHandshake names the mechanism, SaslAuthenticate carries its bytes.

Only SaslHandshake v1+ is supported (Kafka 1.0+, KIP-152): after it, every SASL message travels
in a SaslAuthenticate request, so authentication uses the connection's ordinary request path.
With v0 the SASL tokens would follow as bare size-prefixed frames without Kafka headers, which
the connection's correlation-id matching cannot carry; such a broker gets a clear error.

The caller sends requests through ``send``; this module decides which, in what order, and turns
every refusal into :class:`~kafkawire.net.errors.AuthenticationError`. It returns the session
lifetime the broker gave (SaslAuthenticate v1+, KIP-368): the connection authenticates again
before it ends, with the same exchange.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from kafkawire.errors import UnsupportedSaslMechanismError, error_for_code
from kafkawire.messages import request_type
from kafkawire.messages.sasl_authenticate import v0 as sasl_authenticate
from kafkawire.messages.sasl_handshake import v0 as sasl_handshake
from kafkawire.net.errors import AuthenticationError
from kafkawire.net.versions import BrokerVersions

from .mechanism import SaslMechanism

__all__ = ["authenticate"]

_log = logging.getLogger(__name__)

SASL_HANDSHAKE = sasl_handshake.SaslHandshakeRequest.__api_key__
SASL_AUTHENTICATE = sasl_authenticate.SaslAuthenticateRequest.__api_key__


async def authenticate(
    mechanism: SaslMechanism, versions: BrokerVersions, send: Callable[[Any], Awaitable[Any]]
) -> int:
    """Authenticate with ``mechanism``; once the broker and the mechanism agree, return the
    session's lifetime in ms (0: the broker does not end sessions)."""
    handshake_version = versions.version_for(SASL_HANDSHAKE)
    if handshake_version < 1:
        raise AuthenticationError(
            f"the broker at {versions.peer} supports only SaslHandshake v0 (SASL frames without"
            " Kafka headers, before Kafka 1.0), which kafkawire does not implement"
        )
    handshake = request_type(SASL_HANDSHAKE, handshake_version)(mechanism=mechanism.name)
    response = await send(handshake)
    cause = error_for_code(response.error_code)
    if isinstance(cause, UnsupportedSaslMechanismError):
        raise AuthenticationError(
            f"the broker at {versions.peer} does not enable SASL mechanism {mechanism.name};"
            f" it enables: {', '.join(response.mechanisms) or 'none'}",
            error_code=response.error_code,
        ) from cause
    if cause is not None:
        raise AuthenticationError(
            f"SaslHandshake at {versions.peer} failed: {cause}", error_code=response.error_code
        ) from cause
    authenticate_cls = request_type(SASL_AUTHENTICATE, versions.version_for(SASL_AUTHENTICATE))
    session = await mechanism.start()
    message: bytes | None = session.initial_response()
    lifetime_ms = 0
    while message is not None:
        response = await send(authenticate_cls(auth_bytes=message))
        if response.error_code != 0:
            cause = error_for_code(response.error_code, response.error_message)
            raise AuthenticationError(
                f"SASL {mechanism.name} authentication at {versions.peer} failed: {cause}",
                error_code=response.error_code,
            ) from cause
        message = session.receive(response.auth_bytes)
        lifetime_ms = getattr(response, "session_lifetime_ms", 0)  # v1+
    _log.debug("authenticated at %s with SASL %s", versions.peer, mechanism.name)
    return lifetime_ms
