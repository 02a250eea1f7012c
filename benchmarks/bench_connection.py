"""Connection overhead: Metadata round trips against aiokafka's connection, same server, same run.

The server is an in-process loopback stub that answers every request at once with a canned,
empty response of the requested API and version (encoded once by kafkawire), so the time is
the clients' own: encoding, framing, correlation-id matching, decoding and the event loop.
Two shapes: sequential (one request in flight) and pipelined (batches of 100 in flight).
Each client sends the Metadata version it negotiates (kafkawire v13, aiokafka its newest).
The ``via Cluster`` rows send the same request through kafkawire's cluster layer (routing,
the call's deadline, retries, broker health: what every client's request goes through), so
the cost of that layer over a bare connection shows; their ratio is to aiokafka's connection.
"""

from __future__ import annotations

import asyncio
import importlib
import struct
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiokafka.conn import create_conn
from aiokafka.protocol.metadata import MetadataRequest as AiokafkaMetadataRequest

from kafkawire.cluster import Cluster
from kafkawire.errors import KafkawireError
from kafkawire.messages import APIS, request_type, response_type
from kafkawire.net import Connection
from kafkawire.protocol import encode_response, read_frame

SEQUENTIAL = 2_000
PIPELINED = 20_000
BATCH = 100
REPEATS = 5


def _canned(api_key: int, version: int) -> bytes:
    if api_key == 18:
        cls = response_type(18, version)
        module = importlib.import_module(cls.__module__)
        entries = tuple(
            module.ApiVersion(api_key=k, min_version=i.versions.start, max_version=i.versions[-1])
            for k, i in APIS.items()
        )
        return encode_response(cls(api_keys=entries), correlation_id=0)
    return encode_response(response_type(api_key, version)(), correlation_id=0)


class StubBroker:
    def __init__(self) -> None:
        self.cache: dict[tuple[int, int], bytes] = {}
        self.writers: list[asyncio.StreamWriter] = []
        self.tasks: list[asyncio.Task[Any]] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        task = asyncio.current_task()
        assert task is not None
        self.tasks.append(task)
        try:
            while True:
                payload = await read_frame(reader)
                api_key, version, correlation_id = struct.unpack_from(">hhi", payload)
                key = (api_key, version)
                if key not in self.cache:
                    self.cache[key] = _canned(*key)
                frame = self.cache[key]
                writer.write(frame[:4] + struct.pack(">i", correlation_id) + frame[8:])
        except (OSError, ConnectionError, EOFError, KafkawireError):
            writer.close()  # the benchmark client went away


async def _best(run: Callable[[], Awaitable[None]], count: int) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        await run()
        best = min(best, time.perf_counter() - start)
    return count / best


async def _rates(send: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    """Requests per second, one ``send()`` at a time and in batches of ``BATCH``."""

    async def sequential() -> None:
        for _ in range(SEQUENTIAL):
            await send()

    async def pipelined() -> None:
        for _ in range(PIPELINED // BATCH):
            await asyncio.gather(*(send() for _ in range(BATCH)))

    return await _best(sequential, SEQUENTIAL), await _best(pipelined, PIPELINED)


async def _kafkawire(port: int) -> tuple[float, float]:
    async with await Connection.open("127.0.0.1", port) as conn:
        metadata = request_type(3, conn.version_for(3))(topics=None)
        return await _rates(lambda: conn.send(metadata))


async def _kafkawire_cluster(port: int) -> tuple[float, float]:
    async with Cluster(f"127.0.0.1:{port}") as cluster:
        conn = await cluster.any_connection()
        metadata = request_type(3, conn.version_for(3))(topics=None)
        return await _rates(lambda: cluster.send(metadata))


async def _aiokafka(port: int) -> tuple[float, float]:
    conn: Any = await create_conn("127.0.0.1", port)
    try:
        metadata = AiokafkaMetadataRequest([])
        return await _rates(lambda: conn.send(metadata))
    finally:
        conn.close()


async def _main() -> None:
    stub = StubBroker()
    server = await asyncio.start_server(stub.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        ours = await _kafkawire(port)
        layered = await _kafkawire_cluster(port)
        theirs = await _aiokafka(port)
    finally:
        for writer in stub.writers:
            writer.close()
        await asyncio.gather(*stub.tasks)
        server.close()
        await server.wait_closed()
    shapes = ("sequential", "pipelined")
    rows = [(shape, a, b) for shape, a, b in zip(shapes, ours, theirs, strict=True)]
    rows += [
        (f"{shape} via Cluster", a, b) for shape, a, b in zip(shapes, layered, theirs, strict=True)
    ]
    width = max(len(shape) for shape, _, _ in rows) + 2
    print(f"{'shape':<{width}}{'kafkawire':>14}{'aiokafka':>14}{'ratio':>8}")
    for shape, a, b in rows:
        print(f"{shape:<{width}}{a:>10,.0f} r/s{b:>10,.0f} r/s{a / b:>7.2f}x")


def main() -> None:
    asyncio.run(_main())


if __name__ == "__main__":
    main()
