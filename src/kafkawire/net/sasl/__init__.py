"""SASL for Kafka connections: PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER.

Each mechanism is a sans-IO state machine in its own module; :func:`authenticate` drives one
over SaslHandshake and SaslAuthenticate requests.
"""

from .exchange import authenticate
from .mechanism import SaslMechanism, SaslSession
from .oauthbearer import OAuthBearer, TokenProvider
from .plain import Plain
from .scram import Scram

__all__ = [
    "OAuthBearer",
    "Plain",
    "SaslMechanism",
    "SaslSession",
    "Scram",
    "TokenProvider",
    "authenticate",
]
