"""SASL for Kafka connections: PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER.

Each mechanism is a sans-IO state machine in its own module; :func:`authenticate` drives one
over SaslHandshake and SaslAuthenticate requests. OAUTHBEARER's tokens come from a provider:
:mod:`.tokens` keeps and refreshes them, :mod:`.oidc` fetches them from an OIDC token
endpoint; :mod:`.jaas` reads Java's ``sasl.jaas.config``.
"""

from .exchange import authenticate
from .jaas import JaasLogin, parse_jaas_config
from .mechanism import SaslMechanism, SaslSession
from .oauthbearer import OAuthBearer, TokenProvider
from .oidc import client_credentials
from .plain import Plain
from .scram import Scram
from .tokens import RefreshingTokens, Token, unsecured_login

__all__ = [
    "JaasLogin",
    "OAuthBearer",
    "Plain",
    "RefreshingTokens",
    "SaslMechanism",
    "SaslSession",
    "Scram",
    "Token",
    "TokenProvider",
    "authenticate",
    "client_credentials",
    "parse_jaas_config",
    "unsecured_login",
]
