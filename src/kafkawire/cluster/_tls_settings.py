"""The ``ssl_*`` settings: which go together (checked on construction), and the context they make.

Trust: ``ssl_cafile``, ``ssl_truststore_location`` or ``ssl_truststore_certificates`` (one of
them; none: the system's CAs). The client's certificate: ``ssl_certfile`` with
``ssl_keyfile``, ``ssl_keystore_location`` (a PEM file holding both), or
``ssl_keystore_certificate_chain`` with ``ssl_keystore_key`` (PEM text); its key's password is
``ssl_password`` or ``ssl_key_password``. Java's stores come as PEM only: a JKS or PKCS12 store
is refused with the command that converts it, and so is a PEM store with a store password,
as Java refuses it.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, cast

from kafkawire.net import client_context
from kafkawire.net.tls import load_client_certificate

if TYPE_CHECKING:
    from .security import SecurityProtocol, SecuritySettings

__all__ = ["check_tls", "tls_context"]

_TLS_SETTINGS = (
    "ssl_cafile",
    "ssl_certfile",
    "ssl_keyfile",
    "ssl_password",
    "ssl_truststore_type",
    "ssl_truststore_location",
    "ssl_truststore_certificates",
    "ssl_truststore_password",
    "ssl_keystore_type",
    "ssl_keystore_location",
    "ssl_keystore_certificate_chain",
    "ssl_keystore_key",
    "ssl_keystore_password",
    "ssl_key_password",
)
_CONVERT = {
    ("truststore", "JKS"): "keytool -list -rfc -keystore FILE > ca.pem",
    ("truststore", "PKCS12"): "openssl pkcs12 -in FILE -nokeys -out ca.pem",
    ("keystore", "JKS"): (
        "keytool -importkeystore -srckeystore FILE -destkeystore client.p12"
        " -deststoretype PKCS12, then openssl pkcs12 -in client.p12 -out client.pem"
    ),
    ("keystore", "PKCS12"): "openssl pkcs12 -in FILE -out client.pem",
}


def _given(settings: SecuritySettings) -> list[str]:
    named = [name for name in _TLS_SETTINGS if getattr(settings, name) is not None]
    if settings.ssl_endpoint_identification_algorithm != "https":
        named.append("ssl_endpoint_identification_algorithm")
    return named


def _at_most_one(settings: SecuritySettings, *names: str) -> None:
    given = [name for name in names if getattr(settings, name) is not None]
    if len(given) > 1:
        raise ValueError(f"give one of {', '.join(names)}, not {' and '.join(given)}")


def _needs(settings: SecuritySettings, name: str, needed: str) -> None:
    if getattr(settings, name) is not None and getattr(settings, needed) is None:
        raise ValueError(f"{name} needs {needed}")


def _store_type(settings: SecuritySettings, store: str) -> None:
    kind = getattr(settings, f"ssl_{store}_type")
    if kind in ("JKS", "PKCS12"):
        raise ValueError(
            f"ssl_{store}_type {kind} is not supported: convert the store to PEM"
            f" ({_CONVERT[store, kind]}) and set ssl_{store}_type='PEM'"
        )
    if getattr(settings, f"ssl_{store}_password") is not None:
        instead = " (the key's password is ssl_key_password)" if store == "keystore" else ""
        raise ValueError(f"ssl_{store}_password is for JKS and PKCS12 stores, not PEM{instead}")


def check_tls(settings: SecuritySettings, protocol: SecurityProtocol) -> None:
    """Refuse ``ssl_*`` settings that do not go together, or that the protocol would ignore."""
    given = _given(settings)
    if settings.ssl_context is not None and protocol not in ("SSL", "SASL_SSL"):
        raise ValueError(f"ssl_context is given, but security_protocol {protocol!r} has no TLS")
    if not given:
        return
    if settings.ssl_context is not None:
        raise ValueError(f"give ssl_context or the ssl_* settings, not both ({given[0]})")
    if settings.security_protocol is None:
        raise ValueError(f"{given[0]} needs security_protocol 'SSL' or 'SASL_SSL'")
    if protocol not in ("SSL", "SASL_SSL"):
        raise ValueError(
            f"{given[0]} is for TLS, which security_protocol {protocol!r} does not use"
            " ('SSL' or 'SASL_SSL' do)"
        )
    _store_type(settings, "truststore")
    _store_type(settings, "keystore")
    _at_most_one(settings, "ssl_cafile", "ssl_truststore_location", "ssl_truststore_certificates")
    _at_most_one(
        settings, "ssl_certfile", "ssl_keystore_location", "ssl_keystore_certificate_chain"
    )
    _at_most_one(settings, "ssl_password", "ssl_key_password")
    _needs(settings, "ssl_keyfile", "ssl_certfile")
    _needs(settings, "ssl_keystore_key", "ssl_keystore_certificate_chain")
    _needs(settings, "ssl_keystore_certificate_chain", "ssl_keystore_key")
    key = ("ssl_certfile", "ssl_keystore_location", "ssl_keystore_certificate_chain")
    for password in ("ssl_password", "ssl_key_password"):
        if getattr(settings, password) is not None and all(
            getattr(settings, name) is None for name in key
        ):
            raise ValueError(f"{password} is the client key's password, but no key is given")


def _trust_file(settings: SecuritySettings) -> tuple[str, str] | None:
    """The setting and path of the PEM file of trusted CAs, if one is named."""
    if settings.ssl_cafile is not None:
        return "ssl_cafile", settings.ssl_cafile
    location = settings.ssl_truststore_location
    if location is None:
        return None
    if settings.ssl_truststore_type is None and not _is_pem(location):
        raise ValueError(
            f"ssl_truststore_location {location} is not PEM (a JKS or PKCS12 store?): convert"
            f" it ({_CONVERT['truststore', 'JKS']}, or {_CONVERT['truststore', 'PKCS12']})"
            " and set ssl_truststore_type='PEM'"
        )
    return "ssl_truststore_location", location


def _is_pem(path: str) -> bool:
    try:
        with open(path, "rb") as file:
            return b"-----BEGIN " in file.read(1 << 16)
    except OSError as exc:
        raise ValueError(f"ssl_truststore_location {path}: {exc.strerror}") from None


def tls_context(settings: SecuritySettings) -> ssl.SSLContext:
    """The context the settings make (``ssl_context`` as given, if it was)."""
    if settings.ssl_context is not None:
        return settings.ssl_context
    trust_name, trust_file = _trust_file(settings) or ("ssl_truststore_certificates", None)
    own_name, own_file = (
        ("ssl_certfile", settings.ssl_certfile)
        if settings.ssl_certfile is not None
        else ("ssl_keystore_location", settings.ssl_keystore_location)
    )
    for name, path in ((trust_name, trust_file), (own_name, own_file)):
        if path is not None and not Path(path).is_file():
            raise ValueError(f"{name} {path}: no such file")
    if settings.ssl_keyfile is not None and not Path(settings.ssl_keyfile).is_file():
        raise ValueError(f"ssl_keyfile {settings.ssl_keyfile}: no such file")
    with _naming(trust_name, _reason):
        context = client_context(
            cafile=trust_file,
            cadata=settings.ssl_truststore_certificates,
            check_hostname=settings.ssl_endpoint_identification_algorithm == "https",
        )
    if own_file is None and settings.ssl_keystore_certificate_chain is not None:
        own_name = "ssl_keystore_certificate_chain"
    password = settings.ssl_password or settings.ssl_key_password
    with _naming(own_name, lambda exc: _key_reason(exc, password is not None)):
        load_client_certificate(
            context,
            certfile=own_file,
            keyfile=settings.ssl_keyfile,
            password=password,
            certdata=settings.ssl_keystore_certificate_chain,
            keydata=settings.ssl_keystore_key,
        )
    return context


def _reason(error: ssl.SSLError) -> str:
    return str(error.reason or error.strerror or error)


def _key_reason(error: ssl.SSLError, password: bool) -> str:
    """What went wrong with the client's certificate and key (OpenSSL says "PEM lib")."""
    reason = cast("str | None", error.reason)  # None for "PEM lib", whatever typeshed says
    if reason == "KEY_VALUES_MISMATCH":
        return "the private key does not belong to the certificate"
    if reason is None and password:
        return "the private key could not be read: is its password (ssl_password) right?"
    if reason is None:
        return "no private key found: name it (ssl_keyfile), or put it in the same PEM file"
    return _reason(error)


@contextlib.contextmanager
def _naming(name: str, explain: Callable[[ssl.SSLError], str]) -> Iterator[None]:
    """An ``ssl.SSLError`` as a ``ValueError`` naming the setting whose file or text failed
    (OpenSSL's reasons never quote a password or a key)."""
    try:
        yield
    except ssl.SSLError as exc:
        raise ValueError(f"{name} could not be loaded: {explain(exc)}") from None
    except ValueError as exc:  # an encrypted key without a password
        raise ValueError(f"{name} could not be loaded: {exc} (ssl_password)") from None
