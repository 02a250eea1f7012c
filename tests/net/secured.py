"""What the secured-cluster tests share: the server's TLS context, and the client settings by
name for each SASL mechanism, as a Java user writes them (``security_protocol``,
``sasl_mechanism``, ``sasl_jaas_config``, and the test CA, which a real cluster's public CA
makes unneeded)."""

from __future__ import annotations

import ssl
from pathlib import Path

from kafkawire.net.sasl.jaas import (
    OAUTHBEARER_LOGIN_MODULE,
    PLAIN_LOGIN_MODULE,
    SCRAM_LOGIN_MODULE,
)

from .pki import Pki
from .sasl_server import USERS
from .token_endpoint import CLIENT_ID, CLIENT_SECRET

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
USER, PASSWORD = next(iter(USERS.items()))
WRONG_PASSWORD = "not-the-password-91c4"


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


def jaas(mechanism: str, *, password: str = PASSWORD, client_secret: str = CLIENT_SECRET) -> str:
    if mechanism == "OAUTHBEARER":
        return (
            f'{OAUTHBEARER_LOGIN_MODULE} required clientId="{CLIENT_ID}"'
            f' clientSecret="{client_secret}" scope="kafka";'
        )
    module = PLAIN_LOGIN_MODULE if mechanism == "PLAIN" else SCRAM_LOGIN_MODULE
    return f'{module} required username="{USER}" password="{password}";'


def java_settings(
    mechanism: str, pki: Pki, token_url: str | None = None, **changes: str
) -> dict[str, str]:
    """The client settings for ``mechanism``, Java's names in snake_case."""
    settings = {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": mechanism,
        "sasl_jaas_config": jaas(mechanism, **changes),
        "ssl_cafile": str(pki.ca),
    }
    if mechanism == "OAUTHBEARER":
        assert token_url is not None
        settings["sasl_oauthbearer_token_endpoint_url"] = token_url
    return settings
