"""Talking to the fake cluster on the wire, below kafkawire's clients: one connection that
sends any request at the version its class has and reads the answers in order."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import Any, TypeVar

from kafkawire.messages import RequestMessage
from kafkawire.producer import Producer
from kafkawire.protocol import decode_response, encode_request, read_frame
from kafkawire.records import RecordBatchBuilder
from kafkawire.testing.fake import FakeCluster

R = TypeVar("R")
WAIT = 5.0


class Wire:
    """``async with Wire(cluster, node_id) as wire: response = await wire.send(request)``."""

    def __init__(self, cluster: FakeCluster, node_id: int = 0) -> None:
        self.address = cluster.address(node_id)
        self._ids = itertools.count(1)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def __aenter__(self) -> Wire:
        host, port = self.address.split(":")
        self.reader, self.writer = await asyncio.open_connection(host, int(port))
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.writer is not None
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()

    def write(self, request: Any) -> int:
        """Send without waiting; the correlation id."""
        assert self.writer is not None
        correlation_id = next(self._ids)
        self.writer.write(encode_request(request, correlation_id=correlation_id, client_id="wire"))
        return correlation_id

    async def read(self, request: Any) -> Any:
        """The next answer, decoded as the answer to ``request``."""
        assert self.reader is not None
        payload = await asyncio.wait_for(read_frame(self.reader), WAIT)
        cls: Any = type(request)
        _, response = decode_response(payload, cls.__api_key__, cls.__version__)
        return response

    async def send(self, request: RequestMessage[R]) -> R:
        self.write(request)
        return await self.read(request)  # type: ignore[no-any-return]

    async def closed(self) -> bool:
        """Whether the broker closed the connection (within the wait)."""
        assert self.reader is not None
        return await asyncio.wait_for(self.reader.read(1), WAIT) == b""


async def commit_then_abort(producer: Producer, topic: str) -> None:
    """On partition 0 of ``topic``, in two transactions: ``b"kept"`` committed, then
    ``b"dropped"`` aborted (offsets 0-3 with their markers, on an empty partition)."""
    async with producer.transaction():
        await producer.send(topic, b"kept", partition=0)
    producer.begin_transaction()
    await producer.send_and_wait(topic, b"dropped", partition=0)
    await producer.abort_transaction()


def batch(
    *values: bytes,
    producer_id: int = -1,
    epoch: int = -1,
    sequence: int = -1,
    transactional: bool = False,
    timestamp: int = 1000,
) -> bytes:
    """One record batch of ``values`` as a producer sends it."""
    builder = RecordBatchBuilder(
        producer_id=producer_id,
        producer_epoch=epoch,
        base_sequence=sequence,
        transactional=transactional,
    )
    for value in values:
        builder.append(None, value, timestamp=timestamp)
    return builder.build()
