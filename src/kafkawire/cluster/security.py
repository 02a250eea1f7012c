"""How a client secures its connections, by name as Java, librdkafka and aiokafka users write it.

:class:`SecuritySettings` is the base of :class:`~kafkawire.cluster.ConnectionSettings`: the
objects (``ssl_context``, ``sasl``) and, beside them, the settings by name::

    Producer(bootstrap, security_protocol="SASL_SSL", sasl_mechanism="SCRAM-SHA-512",
             sasl_plain_username="alice", sasl_plain_password=secret)

:meth:`SecuritySettings.security` turns them into the ``ssl.SSLContext`` and the SASL mechanism
a connection takes (:mod:`._tls_settings`, :mod:`._sasl_settings`); the files named are read
then. Settings that contradict each other (an ``ssl_*`` setting with a protocol without TLS,
a password with OAUTHBEARER, an object and settings for the same thing) are refused on
construction, naming them. Secrets (passwords, the JAAS line, the client secret, the key) are
left out of ``repr`` and out of every message.
"""

from __future__ import annotations

import ssl
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypedDict

import attrs

from kafkawire.net.sasl import SaslMechanism, TokenProvider

from ._sasl_settings import check_sasl, sasl_mechanism
from ._tls_settings import check_tls, tls_context
from .validators import (
    Check,
    function,
    one_of,
    optional,
    optional_sasl_mechanism,
    optional_ssl_context,
    secret,
    text,
)

__all__ = [
    "EndpointIdentification",
    "NamedSecurityOptions",
    "SaslMechanismName",
    "SecurityOptions",
    "SecurityProtocol",
    "SecuritySettings",
    "StoreType",
]

SecurityProtocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
"""``security_protocol``: whether connections use TLS, SASL, both or neither."""
SaslMechanismName = Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]
"""``sasl_mechanism``: the SASL mechanisms kafkawire speaks."""
StoreType = Literal["PEM", "JKS", "PKCS12"]
"""``ssl_truststore_type`` and ``ssl_keystore_type``: only PEM is read; JKS and PKCS12 are
refused with the command that converts them."""
EndpointIdentification = Literal["https", ""]
"""``ssl_endpoint_identification_algorithm``: ``"https"`` checks that the certificate names the
host; ``""`` checks the chain only."""

_TEXT = optional(text)
_SECRET = secret(optional(text))
_STORE_TYPE = optional(one_of(*typing.get_args(StoreType)))


def _is_extensions(value: object) -> bool:
    return isinstance(value, Mapping) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


_EXTENSIONS = optional(Check("a mapping of str to str", _is_extensions))
_IDENTIFICATION = one_of(*typing.get_args(EndpointIdentification))


def _check_together(
    settings: SecuritySettings, attribute: attrs.Attribute[Any], value: object
) -> None:
    """The last field's validator: attrs runs validators once every field is set, so this
    sees them all (subclasses' ``__attrs_post_init__`` would not chain to one here)."""
    _IDENTIFICATION(settings, attribute, value)
    check_tls(settings, settings.protocol)
    check_sasl(settings, settings.protocol)


@attrs.frozen(kw_only=True)
class SecuritySettings:
    """TLS and SASL, as objects or by name (Java's names in snake_case)."""

    security_protocol: SecurityProtocol | None = attrs.field(
        default=None, validator=optional(one_of(*typing.get_args(SecurityProtocol)))
    )
    """PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL. Needed by every setting by name below;
    without it, what ``ssl_context`` and ``sasl`` imply (none: PLAINTEXT)."""

    ssl_context: ssl.SSLContext | None = attrs.field(default=None, validator=optional_ssl_context)
    """TLS as an object (see :func:`kafkawire.net.client_context`), or use the ``ssl_*``
    settings."""

    sasl: SaslMechanism | None = attrs.field(default=None, validator=optional_sasl_mechanism)
    """SASL as an object (``Plain``, ``Scram``, ``OAuthBearer``), or use the ``sasl_*``
    settings."""

    sasl_mechanism: SaslMechanismName | None = attrs.field(
        default=None, validator=optional(one_of(*typing.get_args(SaslMechanismName)))
    )
    sasl_plain_username: str | None = attrs.field(default=None, validator=_TEXT)
    """The user of PLAIN and SCRAM (librdkafka's ``sasl.username``)."""

    sasl_plain_password: str | None = attrs.field(default=None, validator=_SECRET, repr=False)
    sasl_jaas_config: str | None = attrs.field(default=None, validator=_SECRET, repr=False)
    """Java's login module line: ``PlainLoginModule``, ``ScramLoginModule`` (username,
    password) or ``OAuthBearerLoginModule`` (clientId, clientSecret, scope, extension_*, or
    the unsecuredLogin* options)."""

    sasl_oauthbearer_token_endpoint_url: str | None = attrs.field(default=None, validator=_TEXT)
    """The OIDC token endpoint (https://) for the client credentials grant, or a token file
    (file://)."""

    sasl_oauthbearer_client_id: str | None = attrs.field(default=None, validator=_TEXT)
    sasl_oauthbearer_client_secret: str | None = attrs.field(
        default=None, validator=_SECRET, repr=False
    )
    sasl_oauthbearer_scope: str | None = attrs.field(default=None, validator=_TEXT)
    sasl_oauthbearer_extensions: Mapping[str, str] | None = attrs.field(
        default=None, validator=_EXTENSIONS
    )
    """SASL extensions sent with the token (Confluent Cloud: ``logicalCluster``,
    ``identityPoolId``)."""

    sasl_oauthbearer_token_provider: TokenProvider | None = attrs.field(
        default=None, validator=optional(function)
    )
    """Tokens from your code: an async function returning one (it caches as it likes)."""

    ssl_cafile: str | None = attrs.field(default=None, validator=_TEXT)
    """The PEM file of the CAs to trust (default: the system's)."""

    ssl_certfile: str | None = attrs.field(default=None, validator=_TEXT)
    ssl_keyfile: str | None = attrs.field(default=None, validator=_TEXT)
    ssl_password: str | None = attrs.field(default=None, validator=_SECRET, repr=False)
    """The password of the client's private key (Java's ``ssl.key.password``)."""

    ssl_truststore_type: StoreType | None = attrs.field(default=None, validator=_STORE_TYPE)
    """PEM (JKS and PKCS12 are refused, with how to convert them); without it, a PEM file is
    taken as PEM."""

    ssl_truststore_location: str | None = attrs.field(default=None, validator=_TEXT)
    ssl_truststore_certificates: str | None = attrs.field(default=None, validator=_TEXT)
    """The trusted CAs as PEM text."""

    ssl_truststore_password: str | None = attrs.field(default=None, validator=_SECRET, repr=False)
    ssl_keystore_type: StoreType | None = attrs.field(default=None, validator=_STORE_TYPE)
    ssl_keystore_location: str | None = attrs.field(default=None, validator=_TEXT)
    """A PEM file holding the client's private key and certificate chain."""

    ssl_keystore_certificate_chain: str | None = attrs.field(default=None, validator=_TEXT)
    ssl_keystore_key: str | None = attrs.field(default=None, validator=_SECRET, repr=False)
    ssl_keystore_password: str | None = attrs.field(default=None, validator=_SECRET, repr=False)
    ssl_key_password: str | None = attrs.field(default=None, validator=_SECRET, repr=False)
    ssl_endpoint_identification_algorithm: EndpointIdentification = attrs.field(
        default="https", validator=_check_together
    )
    """``"https"``: the broker's certificate must name the host connected to; ``""``: the
    chain is checked, not the name."""

    @property
    def protocol(self) -> SecurityProtocol:
        """``security_protocol``, or what ``ssl_context`` and ``sasl`` imply."""
        if self.security_protocol is not None:
            return self.security_protocol
        if self.sasl is not None:
            return "SASL_SSL" if self.ssl_context is not None else "SASL_PLAINTEXT"
        return "SSL" if self.ssl_context is not None else "PLAINTEXT"

    def security(self) -> tuple[ssl.SSLContext | None, SaslMechanism | None]:
        """The TLS context and the SASL mechanism of every connection (``None``: none).

        Reads the files named; a file that is missing or not what it should be raises
        ``ValueError`` naming the setting.
        """
        protocol = self.protocol
        context = tls_context(self) if protocol in ("SSL", "SASL_SSL") else None
        mechanism = sasl_mechanism(self) if protocol.startswith("SASL") else None
        return context, mechanism


class NamedSecurityOptions(TypedDict, total=False):
    """The settings by name of :class:`SecuritySettings`, as keyword arguments."""

    security_protocol: SecurityProtocol | None
    sasl_mechanism: SaslMechanismName | None
    sasl_plain_username: str | None
    sasl_plain_password: str | None
    sasl_jaas_config: str | None
    sasl_oauthbearer_token_endpoint_url: str | None
    sasl_oauthbearer_client_id: str | None
    sasl_oauthbearer_client_secret: str | None
    sasl_oauthbearer_scope: str | None
    sasl_oauthbearer_extensions: Mapping[str, str] | None
    sasl_oauthbearer_token_provider: TokenProvider | None
    ssl_cafile: str | None
    ssl_certfile: str | None
    ssl_keyfile: str | None
    ssl_password: str | None
    ssl_truststore_type: StoreType | None
    ssl_truststore_location: str | None
    ssl_truststore_certificates: str | None
    ssl_truststore_password: str | None
    ssl_keystore_type: StoreType | None
    ssl_keystore_location: str | None
    ssl_keystore_certificate_chain: str | None
    ssl_keystore_key: str | None
    ssl_keystore_password: str | None
    ssl_key_password: str | None
    ssl_endpoint_identification_algorithm: EndpointIdentification


class SecurityOptions(NamedSecurityOptions, total=False):
    """:class:`SecuritySettings`' fields as keyword arguments (a test keeps the two equal)."""

    ssl_context: ssl.SSLContext | None
    sasl: SaslMechanism | None
