"""Producers whose every connection goes through the loopback fault proxy (tests/net/proxy.py),
whatever address the metadata gives: so the proxy can freeze, cut or re-point them."""

from __future__ import annotations

from typing import Any

from kafkawire.net import Connection
from kafkawire.producer import Producer
from tests.net.proxy import Proxy


def proxied_producer(proxy: Proxy, *, connect_timeout: float = 5, **options: Any) -> Producer:
    async def through_proxy(host: str, _: int) -> Connection:
        return await Connection.open(host, proxy.port, connect_timeout=connect_timeout)

    return Producer(f"127.0.0.1:{proxy.port}", connect=through_proxy, **options)
