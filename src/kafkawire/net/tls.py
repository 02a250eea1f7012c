"""TLS for Kafka connections: build the client ``ssl.SSLContext`` that ``Connection.open`` takes.

The context is handed to ``asyncio.open_connection`` as is, so any ``SSLContext`` works; this
helper only sets the defaults a Kafka client wants. Host name checking: the certificate is
matched against ``server_hostname`` if ``Connection.open`` is given one, else against the host
connected to (an IP address is matched against the certificate's IP address entries; no SNI is
sent for it). Brokers reached through an address their certificate does not name (a tunnel, a
load balancer) need ``server_hostname`` set to a name the certificate holds.
"""

from __future__ import annotations

import ssl

__all__ = ["client_context"]


def client_context(
    *,
    cafile: str | None = None,
    cadata: str | None = None,
    certfile: str | None = None,
    keyfile: str | None = None,
    password: str | None = None,
    check_hostname: bool = True,
) -> ssl.SSLContext:
    """A client context: TLS 1.2 or newer, the broker's certificate verified.

    ``cafile``/``cadata`` (PEM) name the trusted CAs; without either the system's trust store is
    used. ``certfile``/``keyfile``/``password`` add a client certificate (mutual TLS).
    ``check_hostname=False`` still verifies the chain but accepts any name in it.
    """
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cafile, cadata=cadata)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = check_hostname
    if certfile is not None:
        context.load_cert_chain(certfile, keyfile, password)
    return context
