"""The connection layer: one asyncio connection per broker, with TLS and SASL.

``Connection.open`` connects, negotiates API versions and authenticates; ``send`` pipelines
requests. Everything here sits on the sans-IO ``kafkawire.protocol`` and never the reverse.
"""

from .connection import Connection
from .errors import (
    AuthenticationError,
    ConnectError,
    NoCommonVersionError,
    RequestTimeoutError,
    SslAuthenticationError,
)
from .sasl import OAuthBearer, Plain, SaslMechanism, Scram
from .tls import client_context
from .versions import BrokerVersions

__all__ = [
    "AuthenticationError",
    "BrokerVersions",
    "ConnectError",
    "Connection",
    "NoCommonVersionError",
    "OAuthBearer",
    "Plain",
    "RequestTimeoutError",
    "SaslMechanism",
    "Scram",
    "SslAuthenticationError",
    "client_context",
]
