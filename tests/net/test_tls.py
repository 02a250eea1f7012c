"""TLS: a TLS-terminating loopback proxy (self-signed certificate) in front of a broker.

Tansu 0.6.0's own ``--cert``/``--key`` could not be used: it refuses the two together ("the
argument '--cert <CERT>' cannot be used with '--key <KEY>'"), and with either alone (a PEM
holding both, RSA or EC, tcp:// or tls:// listener) it accepts TCP but never answers a
ClientHello (``openssl s_client`` waits until killed), so TLS is terminated by the proxy.
"""

from __future__ import annotations

import ssl
from typing import Any

import pytest

from kafkawire.messages import request_type
from kafkawire.net import AuthenticationError, Connection, client_context
from kafkawire.net.errors import SslAuthenticationError

from .conftest import Certificate
from .fakebroker import WAIT, FakeBroker, echo_handler, names, request
from .proxy import Proxy


def server_context(certificate: Certificate) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certificate.cert, certificate.key)
    return context


async def _open(port: int, **options: Any) -> Connection:
    return await Connection.open("127.0.0.1", port, connect_timeout=WAIT, **options)


@pytest.mark.parametrize("server_hostname", [None, "localhost"])
async def test_tls_to_fake_broker(certificate: Certificate, server_hostname: str | None) -> None:
    trusted = client_context(cafile=str(certificate.cert))
    async with (
        FakeBroker(echo_handler) as broker,
        Proxy(broker.port, ssl=server_context(certificate)) as proxy,
        await _open(proxy.port, ssl=trusted, server_hostname=server_hostname) as conn,
    ):
        assert names(await conn.send(request("over-tls"))) == ["over-tls"]
        assert conn._transport.get_extra_info("ssl_object").version() in ("TLSv1.2", "TLSv1.3")


async def test_certificate_for_another_name_is_refused(certificate: Certificate) -> None:
    trusted = client_context(cafile=str(certificate.cert))
    async with FakeBroker() as broker, Proxy(broker.port, ssl=server_context(certificate)) as proxy:
        with pytest.raises(
            SslAuthenticationError, match=r"does not name.*Hostname mismatch"
        ) as info:
            await _open(proxy.port, ssl=trusted, server_hostname="broker.example")
        assert isinstance(info.value.__cause__, ssl.SSLCertVerificationError)
        assert not info.value.retriable  # no new attempt mends a certificate
        # Verification of the chain without the name check accepts it.
        unnamed = client_context(cafile=str(certificate.cert), check_hostname=False)
        async with await _open(proxy.port, ssl=unnamed, server_hostname="broker.example"):
            pass


async def test_untrusted_certificate_is_refused(certificate: Certificate) -> None:
    async with FakeBroker() as broker, Proxy(broker.port, ssl=server_context(certificate)) as proxy:
        with pytest.raises(AuthenticationError, match=r"not trusted .*set ssl_cafile") as info:
            await _open(proxy.port, ssl=client_context())
        assert not info.value.retriable


@pytest.mark.integration
async def test_tls_to_tansu(certificate: Certificate, tansu: tuple[str, int]) -> None:
    trusted = client_context(cafile=str(certificate.cert))
    async with Proxy(tansu[1], ssl=server_context(certificate)) as proxy:
        async with await _open(proxy.port, ssl=trusted) as conn:
            version = conn.version_for(3)
            response = await conn.send(request_type(3, version)(topics=None))
            assert [b.node_id for b in response.brokers] == [111]
        assert proxy.connections == 1
