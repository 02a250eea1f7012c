"""TLS for Kafka connections: build the client ``ssl.SSLContext`` that ``Connection.open`` takes.

The context is handed to ``asyncio.open_connection`` as is, so any ``SSLContext`` works; this
helper only sets the defaults a Kafka client wants. Host name checking: the certificate is
matched against ``server_hostname`` if ``Connection.open`` is given one, else against the host
connected to (an IP address is matched against the certificate's IP address entries; no SNI is
sent for it). Brokers reached through an address their certificate does not name (a tunnel, a
load balancer) need ``server_hostname`` set to a name the certificate holds.

:func:`certificate_problem` tells a handshake that failed on a certificate (which no retry
mends: Java's ``SslAuthenticationException``) from one the network broke.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["certificate_problem", "client_context", "load_client_certificate"]


def client_context(
    *,
    cafile: str | None = None,
    cadata: str | None = None,
    certfile: str | None = None,
    keyfile: str | None = None,
    password: str | None = None,
    certdata: str | None = None,
    keydata: str | None = None,
    check_hostname: bool = True,
) -> ssl.SSLContext:
    """A client context: TLS 1.2 or newer, the broker's certificate verified.

    ``cafile``/``cadata`` (PEM) name the trusted CAs; without either the system's trust store is
    used. ``certfile``/``keyfile``/``password`` add a client certificate (mutual TLS), or
    ``certdata``/``keydata``: the same as PEM text (Java's ``ssl.keystore.certificate.chain``
    and ``ssl.keystore.key``). ``check_hostname=False`` still verifies the chain but accepts any
    name in it.
    """
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cafile, cadata=cadata)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = check_hostname
    load_client_certificate(
        context,
        certfile=certfile,
        keyfile=keyfile,
        password=password,
        certdata=certdata,
        keydata=keydata,
    )
    return context


def load_client_certificate(
    context: ssl.SSLContext,
    *,
    certfile: str | None = None,
    keyfile: str | None = None,
    password: str | None = None,
    certdata: str | None = None,
    keydata: str | None = None,
) -> None:
    """Add the client's certificate to ``context``: from files, or from PEM text.

    An encrypted key without ``password`` raises ``ValueError`` (OpenSSL would ask for the
    password on the terminal, and wait).
    """
    secret: str | Callable[[], str] = _no_password if password is None else password
    if certfile is not None:
        context.load_cert_chain(certfile, keyfile, secret)
    elif certdata is not None:
        _load_chain_text(context, certdata, keydata, secret)


def _no_password() -> str:
    raise ValueError("the private key is encrypted, and no password is given for it")


def _load_chain_text(
    context: ssl.SSLContext, chain: str, key: str | None, password: str | Callable[[], str]
) -> None:
    """Python's ssl loads a certificate chain only from files: write the PEM text to a private
    directory (mode 0700) for the moment of loading, and remove it at once."""
    with tempfile.TemporaryDirectory(prefix="kafkawire-tls-") as directory:
        chain_file = Path(directory, "chain.pem")
        chain_file.write_text(chain)
        key_file = None
        if key is not None:
            key_file = Path(directory, "key.pem")
            # Created readable by the owner only, before the key is written into it.
            descriptor = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as out:
                out.write(key)
        context.load_cert_chain(chain_file, key_file, password)


# OpenSSL's reasons for an alert a server sends when it refuses the client's certificate.
_REFUSED_CLIENT_CERTIFICATE = {
    "SSLV3_ALERT_BAD_CERTIFICATE",
    "SSLV3_ALERT_CERTIFICATE_UNKNOWN",
    "SSLV3_ALERT_CERTIFICATE_EXPIRED",
    "SSLV3_ALERT_CERTIFICATE_REVOKED",
    "TLSV1_ALERT_UNKNOWN_CA",
    "TLSV1_ALERT_ACCESS_DENIED",
    "TLSV13_ALERT_CERTIFICATE_REQUIRED",
}


def certificate_problem(error: BaseException | None) -> str | None:
    """What to change when ``error`` is a TLS failure over a certificate, else ``None``."""
    if isinstance(error, ssl.SSLCertVerificationError):
        reason = error.verify_message or error.reason or str(error)
        if "mismatch" in reason.lower() or "not valid for" in reason.lower():
            return (
                f"the broker's certificate does not name the host connected to ({reason}):"
                " connect by a name it holds, or set ssl_endpoint_identification_algorithm to"
                ' "" to check the chain only'
            )
        return (
            f"the broker's certificate is not trusted ({reason}): set ssl_cafile or"
            " ssl_truststore_location to the PEM file of the CA that signed it"
        )
    if isinstance(error, ssl.SSLError) and error.reason in _REFUSED_CLIENT_CERTIFICATE:
        return (
            f"the broker refused the client's certificate ({error.reason}): set ssl_certfile"
            " and ssl_keyfile (or ssl_keystore_location) to a certificate its CA signed"
        )
    return None
