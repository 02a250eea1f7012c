"""The connection against an in-process fake broker: pipelining, timeouts, closing, bad input."""

from __future__ import annotations

import asyncio
import logging
import struct
from typing import Any

import pytest

from kafkawire.errors import (
    ConnectionClosedError,
    DecodeError,
    EncodeError,
    EventLoopError,
    FrameError,
    KafkawireError,
    ProtocolError,
)
from kafkawire.messages.produce import v9 as produce
from kafkawire.net import (
    ConnectError,
    Connection,
    NoCommonVersionError,
    RequestTimeoutError,
)
from kafkawire.protocol import encode_response
from tests.cluster.hostile import (
    Answer,
    SilentServer,
    answer_garbage,
    close_at_once,
    send_2gb_frame,
)

from .fakebroker import ALL_APIS, WAIT, FakeBroker, FakeClient, echo, echo_handler, names, request


async def open_to(broker: FakeBroker, **options: Any) -> Connection:
    return await Connection.open("127.0.0.1", broker.port, connect_timeout=WAIT, **options)


async def test_open_negotiates_and_sends() -> None:
    async with FakeBroker(echo_handler) as broker, await open_to(broker) as conn:
        assert conn.version_for(3) == 13
        assert names(await conn.send(request("a"))) == ["a"]
        header, first = broker.clients[0].requests[0]
        assert header.request_api_key == 18
        assert header.client_id == "kafkawire"
        assert first.client_software_name == "kafkawire"


async def test_pipelined_requests_with_responses_in_reverse_order() -> None:
    count = 200

    async def reverse(client: FakeClient, header: Any, body: Any) -> None:
        held = client.state.setdefault("held", [])
        held.append((header, body))
        if len(held) == count:
            for held_header, held_body in reversed(held):
                client.respond(held_header, echo(held_body))

    async with FakeBroker(reverse) as broker, await open_to(broker) as conn:
        sends = [conn.send(request(f"t{i}")) for i in range(count)]
        responses = await asyncio.wait_for(asyncio.gather(*sends), WAIT)
        assert [names(r) for r in responses] == [[f"t{i}"] for i in range(count)]
        ids = [h.correlation_id for h, _ in broker.clients[0].requests[1:]]
        assert len(set(ids)) == count


async def test_write_puts_requests_on_the_wire_in_call_order() -> None:
    async with FakeBroker(echo_handler) as broker, await open_to(broker) as conn:
        first, second = conn.write(request("first")), conn.write(request("second"))
        assert names(await second) == ["second"]  # awaited first, written second
        assert names(await first) == ["first"]
        assert [names(body) for _, body in broker.clients[0].requests[1:]] == [
            ["first"],
            ["second"],
        ]


async def test_correlation_ids_wrap_around_and_skip_ids_in_use() -> None:
    async with FakeBroker(echo_handler) as broker, await open_to(broker) as conn:
        conn._next_id = 2**31 - 2
        conn._abandoned.add(0)
        results = await asyncio.gather(*(conn.send(request(str(i))) for i in range(4)))
        assert [names(r) for r in results] == [["0"], ["1"], ["2"], ["3"]]
        ids = [h.correlation_id for h, _ in broker.clients[0].requests[-4:]]
        assert ids == [2**31 - 2, 2**31 - 1, 1, 2]


async def test_acks_0_completes_on_write_and_others_get_answers() -> None:
    async def handler(client: FakeClient, header: Any, body: Any) -> Any:
        if header.request_api_key == 0:
            return produce.ProduceResponse() if body.acks != 0 else None
        return echo(body)

    async with FakeBroker(handler) as broker, await open_to(broker) as conn:
        sent = await asyncio.wait_for(conn.send(produce.ProduceRequest(acks=0)), WAIT)
        assert sent == produce.ProduceResponse()  # nothing came back: an empty response
        assert await conn.send(produce.ProduceRequest(acks=-1)) == produce.ProduceResponse()
        assert names(await conn.send(request("after"))) == ["after"]
        acks = [b.acks for h, b in broker.clients[0].requests if h.request_api_key == 0]
        assert acks == [0, -1]


async def test_a_timeout_closes_the_connection_and_fails_the_requests_behind_it() -> None:
    async def slow_first(client: FakeClient, header: Any, body: Any) -> Any:
        if body.topics[0].name == "slow":
            await asyncio.sleep(0.3)
        return echo(body)

    async with FakeBroker(slow_first) as broker, await open_to(broker, request_timeout=0.1) as conn:
        queued = asyncio.create_task(conn.send(request("queued"), timeout=WAIT))
        with pytest.raises(
            RequestTimeoutError, match=r"Metadata v12 request .* within 0\.1 s"
        ) as info:
            await conn.send(request("slow"))
        assert info.value.retriable
        assert isinstance(info.value, TimeoutError)
        # As in Kafka's Java client: a broker late with one answer is not trusted with the
        # next, and what was queued behind it fails at once, retriable on a new connection.
        assert conn.closed
        with pytest.raises(ConnectionClosedError, match=r"within 0\.1 s") as closed:
            await queued
        assert closed.value.retriable
        assert not closed.value.by_peer
        with pytest.raises(ConnectionClosedError):
            await conn.send(request("next"), timeout=WAIT)


async def test_a_shorter_timeout_sent_later_rings_first() -> None:
    """One deadline timer per connection: set again for a request due sooner than the one
    it was set for, and again for the next one once the soonest was answered."""

    async def slow(client: FakeClient, header: Any, body: Any) -> Any:
        if body.topics[0].name != "quick":
            await asyncio.sleep(WAIT)
        return echo(body)

    async with FakeBroker(slow) as broker:
        async with await open_to(broker) as conn:
            patient = asyncio.create_task(conn.send(request("patient"), timeout=WAIT))
            await asyncio.sleep(0)
            with pytest.raises(RequestTimeoutError, match=r"within 0\.1 s"):
                await asyncio.wait_for(conn.send(request("hasty"), timeout=0.1), WAIT / 2)
            with pytest.raises(ConnectionClosedError):
                await patient
        async with await open_to(broker) as conn:
            assert names(await conn.send(request("quick"), timeout=0.05)) == ["quick"]
            with pytest.raises(RequestTimeoutError, match=r"within 0\.2 s"):
                await asyncio.wait_for(conn.send(request("late"), timeout=0.2), WAIT / 2)


async def test_submit_returns_the_future_the_answer_resolves() -> None:
    async with FakeBroker(echo_handler) as broker, await open_to(broker) as conn:
        futures = [conn.submit(request(f"t{i}")) for i in range(3)]
        assert all(isinstance(f, asyncio.Future) for f in futures)
        done = await asyncio.wait_for(asyncio.gather(*futures), WAIT)
        assert [names(r) for r in done] == [["t0"], ["t1"], ["t2"]]
        acks_0 = conn.submit(produce.ProduceRequest(acks=0))
        assert await asyncio.wait_for(acks_0, WAIT) == produce.ProduceResponse()


async def test_submit_tells_then_as_the_answer_is_read_and_survives_its_bugs() -> None:
    told: list[Any] = []

    def then(future: asyncio.Future[Any]) -> None:
        told.append(names(future.result()))
        raise RuntimeError("a bug in the caller's callback")

    reported: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda loop, context: reported.append(context))
    async with FakeBroker(echo_handler) as broker, await open_to(broker) as conn:
        future = conn.submit(request("a"), then=then)
        await asyncio.wait_for(asyncio.shield(future), WAIT)
        assert told == [["a"]]
        assert [type(c["exception"]) for c in reported] == [RuntimeError]
        assert names(await conn.send(request("b"))) == ["b"]  # the connection goes on
    closed: list[BaseException | None] = []
    async with FakeBroker(lambda *args: asyncio.sleep(WAIT)) as broker:
        conn = await open_to(broker)
        conn.submit(request("c"), then=lambda future: closed.append(future.exception()))
        await conn.close()
    assert [type(e) for e in closed] == [ConnectionClosedError]


async def test_corked_frames_go_out_in_one_write_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    writes: list[int] = []  # the client's writes (the broker's answers are written too)
    write = asyncio.selector_events._SelectorSocketTransport.write  # type: ignore[attr-defined]

    def counted(transport: Any, data: bytes) -> None:
        if transport.get_extra_info("peername")[1] == broker.port:
            writes.append(len(data))
        write(transport, data)

    async with FakeBroker(echo_handler) as broker, await open_to(broker) as conn:
        monkeypatch.setattr(asyncio.selector_events._SelectorSocketTransport, "write", counted)  # type: ignore[attr-defined]
        conn.cork()
        futures = [conn.submit(request(f"t{i}")) for i in range(3)]
        assert writes == []  # registered (their deadlines run), not written yet
        assert conn.uncork() == 3
        assert len(writes) == 1
        done = await asyncio.wait_for(asyncio.gather(*futures), WAIT)
        assert [names(r) for r in done] == [["t0"], ["t1"], ["t2"]]
        assert conn.uncork() == 0  # not corked: nothing kept
        assert names(await conn.send(request("after"))) == ["after"]  # written at once again
        assert len(writes) == 2


async def test_closing_a_corked_connection_fails_its_kept_requests_and_writes_nothing() -> None:
    async with FakeBroker(echo_handler) as broker:
        conn = await open_to(broker)
        conn.cork()
        future = conn.submit(request("kept"))
        await conn.close()
        assert conn.uncork() == 0
        with pytest.raises(ConnectionClosedError):
            await asyncio.wait_for(future, WAIT)
    assert [names(body) for _, body in broker.clients[0].requests[1:]] == []


async def test_a_submitted_request_times_out_and_closes_the_connection() -> None:
    async def silent(client: FakeClient, header: Any, body: Any) -> None:
        return None

    async with FakeBroker(silent) as broker, await open_to(broker) as conn:
        future = conn.submit(request("x"), timeout=0.1)
        with pytest.raises(RequestTimeoutError, match=r"Metadata v12 request .* within 0\.1 s"):
            await asyncio.wait_for(future, WAIT)
        assert conn.closed


async def test_a_cancelled_submitted_request_is_abandoned_at_its_deadline() -> None:
    async def slow(client: FakeClient, header: Any, body: Any) -> Any:
        if body.topics[0].name == "x":
            await asyncio.sleep(0.3)
        return echo(body)

    async with FakeBroker(slow) as broker, await open_to(broker) as conn:
        future = conn.submit(request("x"), timeout=0.1)
        future.cancel()
        await asyncio.sleep(0.2)  # its deadline passed: dropped, not a timeout
        assert not conn._in_flight
        assert conn._abandoned
        assert not conn.closed
        await asyncio.sleep(0.2)  # its late answer is read and dropped
        assert not conn._abandoned
        assert names(await conn.send(request("y"), timeout=WAIT)) == ["y"]


async def test_cancelled_request_is_abandoned_like_a_timeout() -> None:
    async def slow(client: FakeClient, header: Any, body: Any) -> Any:
        await asyncio.sleep(0.2)
        return echo(body)

    async with FakeBroker(slow) as broker, await open_to(broker) as conn:
        task = asyncio.create_task(conn.send(request("x")))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert names(await conn.send(request("y"), timeout=WAIT)) == ["y"]
        assert not conn.closed


async def test_answer_arriving_as_its_caller_is_cancelled_is_dropped() -> None:
    # Cancelling a caller cancels the future it awaits at once, but its cleanup runs only
    # when it is next scheduled. Feeding the answer first puts the reader task ahead of it,
    # so the reader meets an entry whose future is already cancelled.
    async with FakeBroker() as broker, await open_to(broker) as conn:
        task = asyncio.create_task(conn.send(request("x")))
        await asyncio.sleep(0.05)
        [correlation_id] = conn._in_flight
        conn._stream.data_received(
            encode_response(echo(request("x")), correlation_id=correlation_id)
        )
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.05)
        assert not conn.closed
        assert not conn._in_flight
        assert not conn._abandoned


async def test_too_many_abandoned_requests_close_the_connection() -> None:
    async with FakeBroker() as broker, await open_to(broker) as conn:
        conn._abandoned.update(range(100_000, 101_024))
        task = asyncio.create_task(conn.send(request("x")))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert conn.closed
        with pytest.raises(ConnectionClosedError, match="1025 requests went unanswered"):
            await conn.send(request("y"))


async def _pending(conn: Connection, count: int) -> list[asyncio.Task[Any]]:
    tasks = [asyncio.create_task(conn.send(request(str(i)))) for i in range(count)]
    await asyncio.sleep(0.05)
    assert not any(task.done() for task in tasks)
    return tasks


async def _all_fail(tasks: list[asyncio.Task[Any]], error: type[BaseException]) -> list[Any]:
    results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), WAIT)
    assert all(isinstance(r, error) for r in results), results
    return results


async def test_close_fails_every_pending_request() -> None:
    async with FakeBroker() as broker:
        conn = await open_to(broker)
        tasks = await _pending(conn, 20)
        await asyncio.wait_for(conn.close(), WAIT)
        results = await _all_fail(tasks, ConnectionClosedError)
        assert all(r.retriable and "closed by the client" in str(r) for r in results)
        with pytest.raises(ConnectionClosedError, match="closed by the client"):
            await conn.send(request("late"))
        await conn.close()  # idempotent


async def test_broker_closing_fails_every_pending_request() -> None:
    async with FakeBroker() as broker, await open_to(broker) as conn:
        tasks = await _pending(conn, 20)
        broker.clients[0].abort()
        results = await _all_fail(tasks, ConnectionClosedError)
        assert "the broker closed the connection" in str(results[0])
        assert conn.closed


async def _bad_input(payload: bytes, match: str, cause: type[BaseException]) -> None:
    async def handler(client: FakeClient, header: Any, body: Any) -> None:
        if body.topics[0].name == "trigger":
            client.write(payload.replace(b"CID!", struct.pack(">i", header.correlation_id)))

    async with FakeBroker(handler) as broker, await open_to(broker) as conn:
        tasks = await _pending(conn, 5)
        trigger = asyncio.create_task(conn.send(request("trigger")))
        results = await _all_fail(tasks, ConnectionClosedError)
        assert match in str(results[0])
        assert isinstance(results[0].__cause__, cause)
        with pytest.raises(KafkawireError):
            await asyncio.wait_for(trigger, WAIT)
        assert conn.closed


async def test_2gb_size_prefix_closes_without_allocating() -> None:
    await _bad_input(b"\x7f\xff\xff\xff", "exceeds the limit", FrameError)


async def test_negative_size_prefix_closes() -> None:
    await _bad_input(b"\xff\xff\xff\xff", "negative", FrameError)


async def test_unknown_correlation_id_closes() -> None:
    frame = encode_response(echo(request("x")), correlation_id=999_999)
    await _bad_input(frame, "correlation id 999999, which matches no request", ProtocolError)


async def test_garbage_body_fails_its_request_with_decode_error_and_closes() -> None:
    async def handler(client: FakeClient, header: Any, body: Any) -> None:
        if body.topics[0].name == "trigger":
            garbage = b"\xde\xad\xbe\xef" * 3
            client.write(struct.pack(">ii", 4 + len(garbage), header.correlation_id) + garbage)

    async with FakeBroker(handler) as broker, await open_to(broker) as conn:
        tasks = await _pending(conn, 3)
        with pytest.raises(DecodeError, match="ResponseHeader"):
            await asyncio.wait_for(conn.send(request("trigger")), WAIT)
        results = await _all_fail(tasks, ConnectionClosedError)
        assert "the response to Metadata v12 did not decode" in str(results[0])


async def test_encode_error_registers_nothing() -> None:
    async with FakeBroker(echo_handler) as broker, await open_to(broker) as conn:
        with pytest.raises(EncodeError, match="timeout_ms"):
            await conn.send(produce.ProduceRequest(acks=1, timeout_ms=2**40))
        assert not conn._in_flight
        assert names(await conn.send(request("ok"))) == ["ok"]


async def test_kip511_fallback_against_a_broker_with_apiversions_v2() -> None:
    table = dict(ALL_APIS) | {18: range(3), 3: range(9)}
    async with (
        FakeBroker(echo_handler, api_versions=table) as broker,
        await open_to(broker) as conn,
    ):
        sent = [h.request_api_version for h, _ in broker.clients[0].requests]
        assert sent == [4, 2]
        assert conn.api_versions.ranges[18] == range(3)
        assert conn.version_for(3) == 8
        with pytest.raises(NoCommonVersionError, match="versions 0-8, not version 12"):
            await conn.send(request("x"))
        assert not conn.closed


async def test_version_for_names_an_api_the_broker_lacks() -> None:
    table = {k: v for k, v in ALL_APIS.items() if k != 37}
    async with FakeBroker(api_versions=table) as broker, await open_to(broker) as conn:
        with pytest.raises(
            NoCommonVersionError,
            match=f"broker at 127.0.0.1:{broker.port} does not support CreatePartitions",
        ):
            conn.version_for(37)


async def test_connect_refused_and_setup_deadline() -> None:
    async with FakeBroker() as broker:
        port = broker.port
    with pytest.raises(ConnectError, match="TCP connect") as info:
        await Connection.open("127.0.0.1", port, connect_timeout=WAIT)
    assert info.value.retriable

    # A broker that accepts but never answers ApiVersions.
    accepted: list[asyncio.StreamWriter] = []
    server = await asyncio.start_server(lambda r, w: accepted.append(w), "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        with pytest.raises(ConnectError, match=r"ApiVersions took over 0\.2 s"):
            await Connection.open("127.0.0.1", port, connect_timeout=0.2)
    finally:
        for writer in accepted:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_broker_closing_during_setup_is_a_connect_error() -> None:
    async def close_on_accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(close_on_accept, "127.0.0.1", 0)
    try:
        port = server.sockets[0].getsockname()[1]
        with pytest.raises(ConnectError, match="ApiVersions") as info:
            await Connection.open("127.0.0.1", port, connect_timeout=WAIT)
        assert isinstance(info.value.__cause__, ConnectionClosedError)
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize(
    "answer",
    [close_at_once, send_2gb_frame, answer_garbage],
    ids=["closes-at-once", "2gb-frame", "garbage-api-versions"],
)
async def test_a_peer_breaking_the_protocol_during_setup_is_a_connect_error(
    answer: Answer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="kafkawire")
    async with SilentServer(answer) as server:
        with pytest.raises(ConnectError, match=f"127.0.0.1:{server.port} \\(ApiVersions\\)"):
            await Connection.open("127.0.0.1", server.port, connect_timeout=WAIT)
    # The pool says so once per broker: not a WARNING per attempt here.
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


async def test_stray_answer_to_acks_0_is_dropped() -> None:
    async def answer_everything(client: FakeClient, header: Any, body: Any) -> Any:
        return produce.ProduceResponse() if header.request_api_key == 0 else echo(body)

    async with FakeBroker(answer_everything) as broker, await open_to(broker) as conn:
        for _ in range(3):
            assert await conn.send(produce.ProduceRequest(acks=0)) == produce.ProduceResponse()
        assert names(await conn.send(request("after"))) == ["after"]
        assert not conn.closed
        assert not conn._acks_0


async def test_any_decoder_failure_fails_its_request_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A hostile frame can make decoding raise more than DecodeError (a MemoryError, say):
    # the caller must hear of it at once, not wait for its timeout.
    from kafkawire.net import connection

    def exhausted(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError("out of memory")

    async with FakeBroker(echo_handler) as broker, await open_to(broker) as conn:
        monkeypatch.setattr(connection, "decode_response", exhausted)
        with pytest.raises(ProtocolError, match="did not decode: MemoryError"):
            await asyncio.wait_for(conn.send(request("x"), timeout=None), WAIT)
        assert conn.closed


async def test_a_connection_used_from_another_event_loop_says_so_at_once() -> None:
    async with FakeBroker(echo_handler) as broker, await open_to(broker) as conn:
        errors: list[BaseException] = []

        def elsewhere() -> None:
            try:
                asyncio.run(conn.send(request("x"), timeout=None))
            except BaseException as exc:
                errors.append(exc)

        await asyncio.to_thread(elsewhere)
        assert isinstance(errors[0], EventLoopError)
        assert not conn._in_flight
