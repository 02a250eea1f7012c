"""The ``sasl_*`` settings: which go together (checked on construction), and the mechanism made.

PLAIN and SCRAM take ``sasl_plain_username`` and ``sasl_plain_password``, or the same from
``sasl_jaas_config`` (``PlainLoginModule``, ``ScramLoginModule``). OAUTHBEARER takes one source
of tokens: ``sasl_oauthbearer_token_provider`` (your code), ``sasl_oauthbearer_token_endpoint_url``
(OIDC client credentials, with the client id, secret and scope as settings or as the JAAS
line's ``clientId``, ``clientSecret`` and ``scope``; or a token file), or the JAAS line's
``unsecuredLoginStringClaim_sub`` (unsigned tokens, for development brokers); SASL extensions
come from ``sasl_oauthbearer_extensions`` or the JAAS line's ``extension_<name>`` options.
A JAAS login module kafkawire does not have (Kerberos, AWS's IAM module) is refused, saying
what to use instead.

The token endpoint's certificate is checked against the system's CAs and the CAs of the
``ssl_*`` settings, so a private CA serves both the brokers and the identity provider.
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING

from kafkawire.net.sasl import (
    JaasLogin,
    OAuthBearer,
    Plain,
    SaslMechanism,
    Scram,
    TokenProvider,
    client_credentials,
    parse_jaas_config,
    unsecured_login,
)
from kafkawire.net.sasl.jaas import (
    OAUTHBEARER_LOGIN_MODULE,
    PLAIN_LOGIN_MODULE,
    SCRAM_LOGIN_MODULE,
)
from kafkawire.net.sasl.oauthbearer import encode_extensions
from kafkawire.net.sasl.oidc import token_endpoint_problem

if TYPE_CHECKING:
    from .security import SecurityProtocol, SecuritySettings

__all__ = ["check_sasl", "sasl_mechanism"]

_PASSWORD_SETTINGS = ("sasl_plain_username", "sasl_plain_password")
_OAUTHBEARER_SETTINGS = (
    "sasl_oauthbearer_token_endpoint_url",
    "sasl_oauthbearer_client_id",
    "sasl_oauthbearer_client_secret",
    "sasl_oauthbearer_scope",
    "sasl_oauthbearer_extensions",
    "sasl_oauthbearer_token_provider",
)
_MODULE_OF = {
    "PLAIN": PLAIN_LOGIN_MODULE,
    "SCRAM-SHA-256": SCRAM_LOGIN_MODULE,
    "SCRAM-SHA-512": SCRAM_LOGIN_MODULE,
    "OAUTHBEARER": OAUTHBEARER_LOGIN_MODULE,
}
_NOT_HERE = {
    "com.sun.security.auth.module.Krb5LoginModule": (
        "Kerberos (GSSAPI) is not supported by kafkawire"
    ),
    "software.amazon.msk.auth.iam.IAMLoginModule": (
        "AWS_MSK_IAM is a Java login module: with kafkawire, set sasl_mechanism='OAUTHBEARER'"
        " and sasl_oauthbearer_token_provider to a function calling the aws-msk-iam-sasl-signer"
        " package (README, Security)"
    ),
}
_UNSECURED_CLAIM = "unsecuredLoginStringClaim_"
_EXTENSION = "extension_"


def _named(settings: SecuritySettings) -> list[str]:
    names = ("sasl_mechanism", "sasl_jaas_config", *_PASSWORD_SETTINGS, *_OAUTHBEARER_SETTINGS)
    return [name for name in names if getattr(settings, name) is not None]


def _login(settings: SecuritySettings, mechanism: str) -> JaasLogin | None:
    """The JAAS line, parsed and checked against ``mechanism``."""
    if settings.sasl_jaas_config is None:
        return None
    login = parse_jaas_config(settings.sasl_jaas_config)
    if login.module in _NOT_HERE:
        raise ValueError(f"sasl_jaas_config names {login.module}: {_NOT_HERE[login.module]}")
    if login.module not in _MODULE_OF.values():
        raise ValueError(
            f"sasl_jaas_config names the login module {login.module}, which kafkawire does not"
            f" have; it has {PLAIN_LOGIN_MODULE}, {SCRAM_LOGIN_MODULE} and"
            f" {OAUTHBEARER_LOGIN_MODULE}"
        )
    wanted = _MODULE_OF[mechanism]
    if login.module != wanted:
        raise ValueError(
            f"sasl_jaas_config names {login.module.rsplit('.', 1)[1]}, which is not for"
            f" sasl_mechanism {mechanism!r} ({wanted.rsplit('.', 1)[1]} is)"
        )
    return login


def check_sasl(settings: SecuritySettings, protocol: SecurityProtocol) -> None:
    """Refuse ``sasl_*`` settings that do not go together, or that the protocol would ignore."""
    named = _named(settings)
    uses_sasl = protocol.startswith("SASL")
    if settings.sasl is not None:
        if named:
            raise ValueError(f"give sasl or the sasl_* settings, not both ({named[0]})")
        if not uses_sasl:
            raise ValueError(f"sasl is given, but security_protocol {protocol!r} has no SASL")
        return
    if not named:
        if uses_sasl:
            raise ValueError(
                f"security_protocol {protocol!r} needs sasl_mechanism (PLAIN, SCRAM-SHA-256,"
                " SCRAM-SHA-512 or OAUTHBEARER; Java's default, GSSAPI, is not supported)"
            )
        return
    if settings.security_protocol is None:
        raise ValueError(f"{named[0]} needs security_protocol 'SASL_SSL' or 'SASL_PLAINTEXT'")
    if not uses_sasl:
        raise ValueError(
            f"{named[0]} is for SASL, which security_protocol {protocol!r} does not use"
            " ('SASL_SSL' or 'SASL_PLAINTEXT' do)"
        )
    mechanism = settings.sasl_mechanism
    if mechanism is None:
        raise ValueError(
            f"{named[0]} needs sasl_mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER)"
        )
    login = _login(settings, mechanism)
    if mechanism == "OAUTHBEARER":
        _check_oauthbearer(settings, login)
    else:
        _password_login(settings, login)


def _not_for(settings: SecuritySettings, names: tuple[str, ...]) -> None:
    for name in names:
        if getattr(settings, name) is not None:
            raise ValueError(f"{name} is not for sasl_mechanism {settings.sasl_mechanism!r}")


def _password_login(settings: SecuritySettings, login: JaasLogin | None) -> tuple[str, str]:
    """The user and password of PLAIN or SCRAM."""
    _not_for(settings, _OAUTHBEARER_SETTINGS)
    if login is not None:
        if any(getattr(settings, name) is not None for name in _PASSWORD_SETTINGS):
            raise ValueError(
                "give sasl_jaas_config or sasl_plain_username and sasl_plain_password, not both"
            )
        if login.options.get("tokenauth", "false").lower() == "true":
            raise ValueError("sasl_jaas_config: delegation tokens (tokenauth) are not supported")
        user, password = login.options.get("username"), login.options.get("password")
        if not user or password is None:
            raise ValueError("sasl_jaas_config needs the options username and password")
        return user, password
    user, password = settings.sasl_plain_username, settings.sasl_plain_password
    if not user or password is None:
        raise ValueError(
            f"sasl_mechanism {settings.sasl_mechanism!r} needs sasl_plain_username and"
            " sasl_plain_password (or sasl_jaas_config)"
        )
    return user, password


def _check_oauthbearer(settings: SecuritySettings, login: JaasLogin | None) -> None:
    _not_for(settings, _PASSWORD_SETTINGS)
    options = login.options if login is not None else {}
    sources = [
        name
        for name, given in (
            ("sasl_oauthbearer_token_provider", settings.sasl_oauthbearer_token_provider),
            ("sasl_oauthbearer_token_endpoint_url", settings.sasl_oauthbearer_token_endpoint_url),
            ("sasl_jaas_config's unsecuredLogin options", _unsecured_claims(options)),
        )
        if given
    ]
    if len(sources) != 1:
        got = f"got {' and '.join(sources)}" if sources else "none is given"
        raise ValueError(
            "OAUTHBEARER needs one source of tokens: sasl_oauthbearer_token_endpoint_url,"
            " sasl_oauthbearer_token_provider, or sasl_jaas_config's"
            f" unsecuredLoginStringClaim_sub; {got}"
        )
    url = settings.sasl_oauthbearer_token_endpoint_url
    client = _client_credentials(settings, options)
    if url is not None:
        problem = token_endpoint_problem(url)
        if problem is not None:
            raise ValueError(f"sasl_oauthbearer_token_endpoint_url cannot be used: {problem}")
        if url.startswith("https:") and not (client[0] and client[1]):
            raise ValueError(
                "sasl_oauthbearer_token_endpoint_url needs sasl_oauthbearer_client_id and"
                " sasl_oauthbearer_client_secret (or clientId and clientSecret in"
                " sasl_jaas_config)"
            )
    elif any(client):
        raise ValueError("a client id, secret or scope needs sasl_oauthbearer_token_endpoint_url")
    if _unsecured_claims(options) and "sub" not in _unsecured_claims(options):
        raise ValueError("sasl_jaas_config's unsecured login needs unsecuredLoginStringClaim_sub")
    encode_extensions(_extensions(settings, options))


def _client_credentials(
    settings: SecuritySettings, options: dict[str, str]
) -> tuple[str | None, str | None, str | None]:
    """The client id, secret and scope, as settings or from the JAAS line (not both)."""
    pairs = (
        ("sasl_oauthbearer_client_id", "clientId"),
        ("sasl_oauthbearer_client_secret", "clientSecret"),
        ("sasl_oauthbearer_scope", "scope"),
    )
    values = []
    for setting, option in pairs:
        if getattr(settings, setting) is not None and option in options:
            raise ValueError(f"give {setting} or sasl_jaas_config's {option}, not both")
        values.append(getattr(settings, setting) or options.get(option))
    return values[0], values[1], values[2]


def _unsecured_claims(options: dict[str, str]) -> dict[str, str]:
    return {
        name.removeprefix(_UNSECURED_CLAIM): value
        for name, value in options.items()
        if name.startswith(_UNSECURED_CLAIM)
    }


def _extensions(settings: SecuritySettings, options: dict[str, str]) -> dict[str, str]:
    from_jaas = {
        name.removeprefix(_EXTENSION): value
        for name, value in options.items()
        if name.startswith(_EXTENSION)
    }
    if from_jaas and settings.sasl_oauthbearer_extensions is not None:
        raise ValueError(
            "give sasl_oauthbearer_extensions or sasl_jaas_config's extension_* options, not both"
        )
    return from_jaas or dict(settings.sasl_oauthbearer_extensions or {})


def sasl_mechanism(settings: SecuritySettings) -> SaslMechanism:
    """The mechanism the settings make (``sasl`` as given, if it was)."""
    if settings.sasl is not None:
        return settings.sasl
    mechanism = settings.sasl_mechanism
    assert mechanism is not None  # check_sasl refused SASL without one
    login = _login(settings, mechanism)
    if mechanism == "PLAIN":
        return Plain(*_password_login(settings, login))
    if mechanism != "OAUTHBEARER":
        return Scram(mechanism, *_password_login(settings, login))
    options = login.options if login is not None else {}
    return OAuthBearer(_tokens(settings, options), extensions=_extensions(settings, options))


def _tokens(settings: SecuritySettings, options: dict[str, str]) -> TokenProvider:
    if settings.sasl_oauthbearer_token_provider is not None:
        return settings.sasl_oauthbearer_token_provider
    url = settings.sasl_oauthbearer_token_endpoint_url
    if url is None:
        lifetime = options.get("unsecuredLoginLifetimeSeconds", "3600")
        if not lifetime.isdigit():
            raise ValueError("sasl_jaas_config's unsecuredLoginLifetimeSeconds must be a number")
        return unsecured_login(_unsecured_claims(options), lifetime=float(lifetime))
    client_id, client_secret, scope = _client_credentials(settings, options)
    return client_credentials(
        url,
        client_id=client_id,
        client_secret=client_secret,
        scope=scope,
        ssl_context=_endpoint_context(settings),
    )


def _endpoint_context(settings: SecuritySettings) -> ssl.SSLContext:
    """The system's CAs, and those the ``ssl_*`` settings name (for a private CA)."""
    context = ssl.create_default_context()
    cafile = settings.ssl_cafile or settings.ssl_truststore_location
    if cafile is not None or settings.ssl_truststore_certificates is not None:
        context.load_verify_locations(cafile=cafile, cadata=settings.ssl_truststore_certificates)
    return context
