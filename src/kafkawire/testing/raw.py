"""One-shot protocol calls for test set-up: connect, send one request, read its answer, close.

``kafkawire.testing`` must work before (and independently of) the client it helps test, so it
talks to brokers with the sans-IO protocol layer and a bare asyncio stream instead of
``kafkawire.net``: readiness probes, the capability survey and topic creation need nothing more.
Every call is bounded by a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from typing import Any, NamedTuple

from kafkawire import cluster
from kafkawire.errors import ProtocolError, raise_for_code
from kafkawire.messages.api_versions import v0 as api_versions_v0
from kafkawire.messages.create_topics import v5 as create_topics_v5
from kafkawire.protocol import decode_response, encode_request, read_frame, write_frame

__all__ = [
    "Address",
    "ApiRange",
    "api_versions",
    "create_topic",
    "parse_bootstrap",
    "send_request",
]

_CLIENT_ID = "kafkawire-testing"
_CORRELATION_ID = 1


class Address(NamedTuple):
    """A broker's host and port; ``str()`` gives ``"host:port"``."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


class ApiRange(NamedTuple):
    """The versions of one API a broker serves, both ends included."""

    min_version: int
    max_version: int


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_bootstrap(bootstrap: str) -> list[Address]:
    """``"host:port,host:port"`` as addresses; tests only talk to loopback, so others are refused.

    The loopback rule keeps a stray ``KAFKAWIRE_BOOTSTRAP`` (or a broker that advertises a
    public address) from turning a test run into traffic to another machine.
    """
    addresses = [Address(host, port) for host, port in cluster.parse_bootstrap(bootstrap)]
    for address in addresses:
        if not _is_loopback(address.host):
            raise ValueError(f"{address.host}: kafkawire's tests only talk to loopback addresses")
    return addresses


async def send_request(address: Address | str, request: object, *, timeout: float = 5.0) -> Any:
    """Send ``request`` (a generated request instance) on a fresh connection; return the response.

    Raises ``TimeoutError`` when connecting, sending and reading take longer than ``timeout``
    seconds, ``OSError`` when the connection fails, and ``ConnectionClosedError`` when the broker
    closes it instead of answering.
    """
    if isinstance(address, str):
        (address,) = parse_bootstrap(address)
    cls: Any = type(request)
    frame = encode_request(request, correlation_id=_CORRELATION_ID, client_id=_CLIENT_ID)
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_connection(address.host, address.port)
        try:
            await write_frame(writer, frame)
            payload = await read_frame(reader)
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
    header, response = decode_response(payload, cls.__api_key__, cls.__version__)
    if header.correlation_id != _CORRELATION_ID:
        raise ProtocolError(f"{address} answered correlation id {header.correlation_id}")
    return response


async def api_versions(address: Address | str, *, timeout: float = 5.0) -> dict[int, ApiRange]:
    """The API key -> version range table a broker advertises, asked with ApiVersions v0.

    Version 0 is the one every broker answers (a broker that does not know the version a
    client sent replies in v0 anyway), so it works before anything is negotiated.
    """
    response = await send_request(address, api_versions_v0.ApiVersionsRequest(), timeout=timeout)
    raise_for_code(response.error_code)
    return {
        api.api_key: ApiRange(api.min_version, api.max_version)
        for api in sorted(response.api_keys, key=lambda api: api.api_key)
    }


async def create_topic(
    bootstrap: str,
    name: str,
    *,
    partitions: int = 1,
    replication_factor: int = 1,
    timeout: float = 10.0,
) -> None:
    """Create topic ``name`` with CreateTopics v5 (Kafka 2.4+; Tansu serves v0-v7).

    Tests need it because brokers auto-create topics with their own partition count (Tansu: 4).
    Sent to the first bootstrap address, which any KRaft broker forwards to the controller.
    Raises the broker's error as a ``BrokerError`` (``TopicAlreadyExistsError`` and so on).
    """
    request = create_topics_v5.CreateTopicsRequest(
        topics=(
            create_topics_v5.CreatableTopic(
                name=name, num_partitions=partitions, replication_factor=replication_factor
            ),
        ),
        timeout_ms=int(timeout * 1000),
    )
    response = await send_request(parse_bootstrap(bootstrap)[0], request, timeout=timeout)
    for result in response.topics:
        raise_for_code(result.error_code, result.error_message)
