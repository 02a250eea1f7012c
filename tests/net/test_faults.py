"""Faults between the connection and a real Tansu broker, injected by a loopback proxy.

Whatever the fault (delay, dropped responses, a cut, corrupted bytes), every request ends,
with its response or a kafkawire error, within the bound; none hangs, and a new connection
afterwards works.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafkawire.errors import ConnectionClosedError, DecodeError, KafkawireError
from kafkawire.messages import request_type
from kafkawire.net import Connection, RequestTimeoutError
from kafkawire.protocol import encode_response

from .fakebroker import WAIT
from .proxy import Proxy

pytestmark = pytest.mark.integration


async def _open(port: int, **options: Any) -> Connection:
    return await Connection.open("127.0.0.1", port, connect_timeout=WAIT, **options)


def _send_many(conn: Connection, count: int, **options: Any) -> list[asyncio.Task[Any]]:
    metadata = request_type(3, conn.version_for(3))(topics=None)
    return [asyncio.create_task(conn.send(metadata, **options)) for _ in range(count)]


async def _outcomes(tasks: list[asyncio.Task[Any]]) -> list[Any]:
    """Every task's result or error, within WAIT (a hang fails the test here)."""
    results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), WAIT)
    for result in results:
        assert isinstance(result, KafkawireError) or hasattr(result, "brokers"), result
    return results


async def _works(port: int) -> None:
    async with await _open(port) as conn:
        response = await conn.send(request_type(3, conn.version_for(3))(topics=None))
        assert response.brokers


async def test_a_delay_times_out_closes_and_a_new_connection_works(tansu: tuple[str, int]) -> None:
    async with Proxy(tansu[1]) as proxy, await _open(proxy.port, request_timeout=0.1) as conn:
        proxy.delay = 0.3
        results = await _outcomes(_send_many(conn, 10))
        # The first to time out closes the connection; the rest fail with it, all retriable.
        assert any(isinstance(r, RequestTimeoutError) for r in results)
        assert all(isinstance(r, RequestTimeoutError | ConnectionClosedError) for r in results)
        assert all(r.retriable for r in results)
        assert conn.closed
        proxy.delay = 0.0
        await _works(proxy.port)


async def test_dropped_responses_then_cut(tansu: tuple[str, int]) -> None:
    async with Proxy(tansu[1]) as proxy:
        conn = await _open(proxy.port)
        try:
            proxy.drop = True
            tasks = _send_many(conn, 20)
            await asyncio.sleep(0.1)
            assert not any(task.done() for task in tasks)
            proxy.cut()
            results = await _outcomes(tasks)
            assert all(isinstance(r, ConnectionClosedError) and r.retriable for r in results)
        finally:
            await conn.close()
        proxy.drop = False
        await _works(proxy.port)


async def test_cut_in_the_middle_of_a_response(tansu: tuple[str, int]) -> None:
    async with Proxy(tansu[1]) as proxy:
        async with await _open(proxy.port) as conn:
            response = await conn.send(request_type(3, conn.version_for(3))(topics=None))
            size = len(encode_response(response, correlation_id=0))
            # Two whole responses, then half of the third.
            proxy.cut_after = proxy.response_bytes + size * 5 // 2
            results = await _outcomes(_send_many(conn, 50))
            assert [hasattr(r, "brokers") for r in results] == [True] * 2 + [False] * 48
            assert all(isinstance(r, ConnectionClosedError) for r in results[2:])
            assert conn.closed
        proxy.cut_after = None
        await _works(proxy.port)


@pytest.mark.parametrize(
    ("corrupt", "reason"),
    [
        (lambda data: bytes(b ^ 0xFF for b in data), "negative"),
        (lambda data: b"\x7f" + data[1:], "exceeds the limit"),
        (lambda data: data[:4] + b"\x55\x55\x55\x55" + data[8:], "matches no request"),
        (lambda data: data[:9] + b"\xff" * (len(data) - 9), "did not decode"),
    ],
    ids=["inverted", "2gb-prefix", "correlation-id", "body"],
)
async def test_corrupted_responses(tansu: tuple[str, int], corrupt: Any, reason: str) -> None:
    async with Proxy(tansu[1]) as proxy:
        async with await _open(proxy.port) as conn:
            proxy.corrupt = corrupt
            results = await _outcomes(_send_many(conn, 20))
            closed = [r for r in results if isinstance(r, ConnectionClosedError)]
            assert closed, results
            assert all(reason in str(r) for r in closed), [str(r) for r in closed]
            assert all(isinstance(r, ConnectionClosedError | DecodeError) for r in results)
            assert conn.closed
        proxy.corrupt = None
        await _works(proxy.port)
