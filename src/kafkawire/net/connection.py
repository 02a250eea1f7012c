"""One connection to one Kafka broker: pipelined requests over asyncio streams.

Invariants:

- Requests are written whole and in order: ``send`` registers the request and hands its whole
  frame to the transport in one ``write`` call, with no ``await`` in between, so frames of
  concurrent senders never interleave. Writing is then awaited (``drain``) with no lock.
  :meth:`Connection.write` does the first part before it returns, for callers whose requests
  must reach the broker in the order they make them.
- Correlation ids are int32s counted up from 0, wrapping from 2**31 - 1 to 0; an id still in
  flight or abandoned (below) is skipped, so no two requests awaiting an answer share one.
- Frames are read as they arrive, by the connection's asyncio protocol (:mod:`._frames`), and
  each resolves the future of the request with its correlation id in that same step (no
  reader task). Kafka answers in order on a connection, but nothing here relies on that.
- A request whose caller is cancelled becomes *abandoned*: its late response is read and
  dropped. A response matching neither an in-flight nor an abandoned request is a protocol
  violation. More than ``_MAX_ABANDONED`` abandoned requests close the connection.
- A request that times out closes the connection, as Kafka's Java client does: a broker that
  does not answer one request in time is not trusted with the next, and the requests queued
  behind it on this connection would wait just as long. They fail with a retriable
  :class:`~kafkawire.errors.ConnectionClosedError`; the caller that timed out gets
  :class:`RequestTimeoutError`. Each request's deadline is kept with it, and one timer per
  connection rings at the soonest (Java's ``NetworkClient`` likewise checks its in-flight
  requests' deadlines as it polls): no timeout scope per request, which cost more than the
  rest of a small request's way through the connection.
- The connection closes on ``close()``, a request timeout, end of stream, a socket or TLS
  error, a frame size prefix that is negative or over ``max_frame_size`` (refused before
  anything is allocated), a response that does not decode (whatever the decoder raised), or an
  unknown correlation id. Closing fails every request in flight at once with
  :class:`~kafkawire.errors.ConnectionClosedError` (retriable on a new connection) whose
  ``__cause__`` is the reason and whose ``by_peer`` says whether the broker closed the stream;
  a response that did not decode fails its own request with the error. Later sends fail at once
  the same way. So no caller waits on a closed connection, and with a timeout none waits longer.
- A connection belongs to the event loop that opened it; a send from another loop raises
  :class:`~kafkawire.errors.EventLoopError` at once instead of waiting for a reader task that
  runs elsewhere.
- Re-authentication (KIP-368): when SaslAuthenticate gives the session a lifetime, the
  connection authenticates again at a random point between 85% and 95% of it (Java's
  ``SaslClientAuthenticator`` rule), on the same socket. Requests written meanwhile are held,
  in order, and written once it ends: a broker takes nothing but SASL requests during a
  re-authentication. If it fails, the connection closes with that error as the reason.
- :meth:`Connection.submit` is :meth:`Connection.write` for callers that settle answers in a
  callback (the producer): it returns the request's future itself, resolved by the reader
  (or failed by the deadline timer, or the connection closing); it does not wait for the
  transport's buffer to drain, so such a caller bounds what it has in flight. A request
  whose future is cancelled is abandoned once its deadline passes, if no answer came.
- :meth:`Connection.cork` keeps the frames written from then on, in order, until
  :meth:`Connection.uncork` hands them to the transport in one write: a caller that writes
  several requests in one synchronous step (the producer's sender, a request per batch) pays
  one socket write, and wakes the broker once, instead of one per request. Each request is
  registered, with its deadline, as it is written; only its bytes wait. Uncork before
  yielding to the event loop: nothing else flushes them. Closing drops them (their requests
  fail as any in flight).
- Produce with ``acks=0`` gets no response: ``send`` returns an empty response of the
  request's version (no partitions, as Kafka's Java client makes up) once the frame is
  written (handed to the transport with its buffer drained below the high-water mark). Kafka
  sends nothing back, but Tansu 0.6.0 and librdkafka's mock cluster do answer; the ids of the
  last ``_ACKS_0_WINDOW`` such requests are kept so that a stray answer is dropped, not taken
  for a protocol violation.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import ssl as _ssl
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, TypeVar, cast

from kafkawire.errors import (
    ConnectionClosedError,
    DecodeError,
    EventLoopError,
    ProtocolError,
)
from kafkawire.messages import APIS, RequestMessage, ResponseMessage
from kafkawire.messages.produce import v13 as produce_latest
from kafkawire.protocol import (
    MAX_FRAME_SIZE,
    decode_response,
    encode_request,
    response_correlation_id,
)

from ._frames import FrameProtocol
from ._pending import DeadlineAlarm, Pending, Then
from .errors import ConnectError, RequestTimeoutError, SslAuthenticationError
from .sasl import SaslMechanism, authenticate
from .tls import certificate_problem
from .versions import (
    API_VERSIONS,
    ApiVersionsNegotiation,
    BrokerVersions,
    decode_api_versions_response,
)

__all__ = ["Connection"]

_log = logging.getLogger(__name__)

R = TypeVar("R", bound=ResponseMessage)
_PRODUCE = produce_latest.ProduceRequest.__api_key__
_MAX_CORRELATION_ID = 2**31 - 1
_MAX_ABANDONED = 1024
_ACKS_0_WINDOW = 1024
_CLOSE_TIMEOUT = 5.0
_REAUTHENTICATE_AT = (0.85, 0.95)  # of the session's lifetime, as Java's client


class Connection:
    """A connection set up by :meth:`open`: TCP, optional TLS, ApiVersions, optional SASL.

    Use :meth:`version_for` to pick the version of a request, :meth:`send` to send it, and
    :meth:`close` (or ``async with``) when done.
    """

    def __init__(
        self,
        stream: FrameProtocol,
        *,
        peer: str,
        client_id: str | None,
        request_timeout: float | None,
    ) -> None:
        """Internal: use :meth:`open`. Reads what ``stream`` (connected) receives from now."""
        self.peer = peer
        self.client_id = client_id
        assert stream.transport is not None
        self._stream = stream
        self._transport = stream.transport
        self._request_timeout = request_timeout
        self._in_flight: dict[int, Pending] = {}
        self._abandoned: set[int] = set()
        self._acks_0: dict[int, None] = {}  # insertion-ordered: the oldest id comes first
        self._next_id = 0
        self._close_reason: str | None = None
        self._close_cause: BaseException | None = None
        self._closed_by_peer = False
        self._loop = asyncio.get_running_loop()
        self._alarm = DeadlineAlarm(self._loop, self._check_deadlines)  # the soonest deadline
        self._versions: BrokerVersions | None = None
        self._set_up = False  # open() has negotiated and authenticated
        self._held: list[bytes] | None = None  # frames written during a re-authentication
        self._corked: list[bytes] | None = None  # frames written since cork()
        self._released = asyncio.Event()  # no re-authentication holds frames back
        self._released.set()
        self._reauthentication: asyncio.Task[None] | None = None
        stream.on_frame = self._dispatch
        stream.on_lost = self._lost

    @classmethod
    async def open(
        cls,
        host: str,
        port: int,
        *,
        client_id: str | None = "kafkawire",
        ssl: _ssl.SSLContext | None = None,
        server_hostname: str | None = None,
        sasl: SaslMechanism | None = None,
        request_timeout: float | None = 30.0,
        connect_timeout: float = 10.0,
        max_frame_size: int = MAX_FRAME_SIZE,
    ) -> Connection:
        """Connect, negotiate API versions, authenticate; raise if any of it fails.

        ``connect_timeout`` bounds all of that together. ``ssl`` enables TLS (see
        :func:`kafkawire.net.tls.client_context`); ``server_hostname`` overrides the name the
        broker's certificate is checked against (default: ``host``). ``request_timeout`` is
        the default of :meth:`send` (``None``: no timeout). ``max_frame_size`` bounds the
        size of a response frame. Raises :class:`ConnectError` (retriable) when the broker is
        unreachable, the TLS handshake fails, the answers during setup break the protocol
        (closed, oversized, undecodable) or the deadline passes, and the error itself for a
        broker error, a missing API or :class:`AuthenticationError`
        (:class:`SslAuthenticationError` when a certificate is refused, on either side). With
        a SASL session lifetime from the broker, the connection re-authenticates (module doc).
        """
        peer = f"{host}:{port}"
        stage = "TCP connect" if ssl is None else "TCP connect and TLS handshake"
        conn: Connection | None = None
        deadline = asyncio.timeout(connect_timeout)
        try:
            async with deadline:
                _, stream = await asyncio.get_running_loop().create_connection(
                    lambda: FrameProtocol(peer, max_frame_size),
                    host,
                    port,
                    ssl=ssl,
                    server_hostname=server_hostname,
                )
                conn = cls(stream, peer=peer, client_id=client_id, request_timeout=request_timeout)
                stage = "ApiVersions"
                conn._versions = await conn._negotiate()
                if sasl is not None:
                    stage = f"SASL {sasl.name} authentication"
                    lifetime_ms = await authenticate(sasl, conn._versions, conn._send_untimed)
                    conn._reauthenticate_within(sasl, lifetime_ms)
                conn._set_up = True
        except BaseException as exc:
            if conn is not None:
                await conn.close()
            if isinstance(exc, TimeoutError) and deadline.expired():
                raise ConnectError(
                    f"could not connect to {peer}: {stage} took over {connect_timeout} s"
                ) from None
            # A certificate refused on either side, seen in the handshake or (TLS 1.3: the
            # broker checks the client's after the client is done) as the first read fails.
            problem = certificate_problem(exc) or certificate_problem(exc.__cause__)
            if problem is not None:
                raise SslAuthenticationError(f"TLS with {peer} failed: {problem}") from exc
            if isinstance(exc, OSError | ConnectionClosedError | ProtocolError):
                # A ProtocolError: an answer to ApiVersions that does not decode, from a
                # peer that may not be a Kafka broker at all; another broker may do.
                raise ConnectError(f"could not connect to {peer} ({stage}): {exc}") from exc
            if conn is None and isinstance(exc, ValueError | OverflowError):
                # What the resolver and socket say of an address no socket can reach: a port
                # out of range, a NUL in the host, an over-long DNS label.
                raise ConnectError(f"cannot connect to {peer}: unusable address: {exc}") from exc
            raise
        _log.debug("connected to %s", peer)
        return conn

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def api_versions(self) -> BrokerVersions:
        """What the broker announced in ApiVersions."""
        assert self._versions is not None  # set by open() before the connection is returned
        return self._versions

    @property
    def closed(self) -> bool:
        """Whether the connection is closed (by :meth:`close`, the peer or an error)."""
        return self._close_reason is not None

    @property
    def in_flight(self) -> int:
        """How many requests await their response: the load the cluster balances by."""
        return len(self._in_flight)

    def version_for(self, api_key: int) -> int:
        """The highest version of ``api_key`` both sides support (else NoCommonVersionError)."""
        return self.api_versions.version_for(api_key)

    async def send(self, request: RequestMessage[R], *, timeout: float | None = None) -> R:
        """Send a generated request object and return its decoded response.

        The request's class fixes its version (pick it with :meth:`version_for`); a version the
        broker does not serve raises :class:`NoCommonVersionError` before anything is sent.
        ``timeout`` (seconds) defaults to the connection's ``request_timeout``; a request the
        broker may hold on purpose (a long-polling Fetch) needs its wait added. When it passes,
        :class:`RequestTimeoutError` is raised and the connection closes (see the module
        doc). Produce with ``acks=0`` gets an empty response (no partitions) once it is
        written: the broker sends nothing back.
        """
        return await self.write(request, timeout=timeout)

    def write(
        self, request: RequestMessage[R], *, timeout: float | None = None
    ) -> Coroutine[Any, Any, R]:
        """:meth:`send`, in two steps: the request is written before this returns (or it
        raises; during a re-authentication it is queued, in order, behind it), and what it
        returns awaits the response. Requests written one after another
        reach the broker in that order, whatever order their responses are awaited in; a
        producer's batches need that (their sequence numbers are given as they are built)."""
        cls = type(request)
        self.api_versions.check(cls.__api_key__, cls.__version__)
        answer = self._write(request, self._request_timeout if timeout is None else timeout)
        return cast("Coroutine[Any, Any, R]", answer)

    def submit(
        self, request: RequestMessage[R], *, timeout: float | None = None, then: Then | None = None
    ) -> asyncio.Future[R]:
        """:meth:`write`, for a caller that settles the answer in a callback: the request is
        written before this returns, and the future returned resolves with the response (or
        fails as :meth:`send` raises); ``then(future)`` is called as soon as it is done, in
        that same step (a done callback would wait for a turn of the event loop). It does
        not wait for the transport's buffer to drain (the caller bounds what it has in
        flight); cancelling it abandons the request."""
        cls = type(request)
        self.api_versions.check(cls.__api_key__, cls.__version__)
        timeout = self._request_timeout if timeout is None else timeout
        correlation_id, future, failed, held = self._register(request, timeout, then=then)
        if future is None:  # acks=0: done once the frame is handed over and drained
            written = asyncio.ensure_future(
                self._answer(cls, correlation_id, None, timeout, failed, held=held)
            )
            if then is not None:
                written.add_done_callback(then)
            return written
        if failed is not None:
            self._shutdown(f"writing to the socket failed: {failed}", failed)
        return future

    async def _send_untimed(self, request: Any) -> Any:
        """For setup requests, bounded by ``open``'s deadline instead of a per-request one."""
        return await self._write(request, None, setup=True)

    async def _send_setup(self, request: Any) -> Any:
        """For re-authentication: past the frames it holds, with the request timeout."""
        return await self._write(request, self._request_timeout, setup=True)

    def _reauthenticate_within(self, sasl: SaslMechanism, lifetime_ms: int) -> None:
        if lifetime_ms <= 0:
            return
        # At random within the window, so connections opened together do not all pause at once.
        delay = lifetime_ms / 1000 * random.uniform(*_REAUTHENTICATE_AT)
        self._reauthentication = asyncio.create_task(
            self._reauthenticate(sasl, delay), name=f"kafkawire-reauthenticate {self.peer}"
        )

    async def _reauthenticate(self, sasl: SaslMechanism, delay: float) -> None:
        await asyncio.sleep(delay)
        self._held = []
        self._released.clear()
        try:
            lifetime_ms = await authenticate(sasl, self.api_versions, self._send_setup)
        except Exception as exc:  # refused, timed out or closed: the connection is done
            self._shutdown(f"SASL {sasl.name} re-authentication failed: {exc}", exc)
            return
        finally:
            self._release_held()
        _log.debug("%s: re-authenticated with SASL %s", self.peer, sasl.name)
        self._reauthenticate_within(sasl, lifetime_ms)

    def _release_held(self) -> None:
        held, self._held = self._held, None
        if held and self._close_reason is None:
            try:
                self._transport.write(b"".join(held))
            except OSError as exc:
                self._shutdown(f"writing to the socket failed: {exc}", exc)
        self._released.set()

    async def close(self) -> None:
        """Fail every request in flight with ConnectionClosedError and close the socket.

        Idempotent. Bytes already handed to the transport are flushed first for up to
        ``_CLOSE_TIMEOUT`` seconds (an acks=0 Produce is not lost by closing right after it).
        """
        self._shutdown("closed by the client", None, graceful=True)
        if self._reauthentication is not None:
            await asyncio.wait([self._reauthentication])
        try:
            async with asyncio.timeout(_CLOSE_TIMEOUT):
                await asyncio.shield(self._stream.closed)
        except TimeoutError:
            self._transport.abort()

    async def _negotiate(self) -> BrokerVersions:
        negotiation = ApiVersionsNegotiation(self.peer)
        while True:
            versions = negotiation.receive(await self._send_untimed(negotiation.request()))
            if versions is not None:
                return versions

    def _allocate_id(self) -> int:
        correlation_id = self._next_id
        while (
            correlation_id in self._in_flight
            or correlation_id in self._abandoned
            or correlation_id in self._acks_0
        ):
            correlation_id = correlation_id + 1 if correlation_id < _MAX_CORRELATION_ID else 0
        self._next_id = correlation_id + 1 if correlation_id < _MAX_CORRELATION_ID else 0
        return correlation_id

    def _write(
        self, request: Any, timeout: float | None, *, setup: bool = False
    ) -> Coroutine[Any, Any, Any]:
        """Register ``request`` and hand its frame to the transport now (or, during a
        re-authentication and unless ``setup``, queue it behind that); what it returns drains
        the write and awaits the answer (an empty one for acks=0)."""
        correlation_id, future, failed, held = self._register(request, timeout, setup=setup)
        return self._answer(type(request), correlation_id, future, timeout, failed, held=held)

    def _register(
        self, request: Any, timeout: float | None, *, setup: bool = False, then: Then | None = None
    ) -> tuple[int, asyncio.Future[Any] | None, OSError | None, bool]:
        """Give ``request`` a correlation id, its future (none for acks=0; ``then`` is told
        when it is done) and its deadline, and write its frame (or hold it); the id, the
        future, the error writing raised, and whether the frame is held behind a
        re-authentication."""
        loop = self._loop
        if asyncio.get_running_loop() is not loop:
            raise EventLoopError(
                f"the connection to {self.peer} belongs to another event loop; "
                "open a client in each event loop that uses one"
            )
        if self._close_reason is not None:
            raise self._closed_error()
        cls = type(request)
        correlation_id = self._allocate_id()
        frame = encode_request(request, correlation_id=correlation_id, client_id=self.client_id)
        future: asyncio.Future[Any] | None = None
        if cls.__api_key__ == _PRODUCE and request.acks == 0:
            self._acks_0[correlation_id] = None
            if len(self._acks_0) > _ACKS_0_WINDOW:
                del self._acks_0[next(iter(self._acks_0))]
        else:
            future = loop.create_future()
            deadline = math.inf if timeout is None else loop.time() + timeout
            self._in_flight[correlation_id] = Pending(
                future, cls.__api_key__, cls.__version__, timeout, deadline, then
            )
            self._alarm.ring_by(deadline)
        failed: OSError | None = None
        held = self._held is not None and not setup
        if held:
            assert self._held is not None
            self._held.append(frame)
        elif self._corked is not None:
            self._corked.append(frame)
        else:
            try:
                self._transport.write(frame)
            except OSError as exc:
                failed = exc
        return correlation_id, future, failed, held

    def cork(self) -> None:
        """Keep the frames of the requests written from now on until :meth:`uncork`."""
        if self._corked is None:
            self._corked = []

    def uncork(self) -> int:
        """Write the frames kept since :meth:`cork` in one write; how many there were. A
        write that fails closes the connection (their requests fail with it)."""
        frames, self._corked = self._corked, None
        if not frames:
            return 0
        try:
            self._transport.write(frames[0] if len(frames) == 1 else b"".join(frames))
        except OSError as exc:
            self._shutdown(f"writing to the socket failed: {exc}", exc)
        return len(frames)

    async def _answer(
        self,
        cls: Any,
        correlation_id: int,
        future: asyncio.Future[Any] | None,
        timeout: float | None,
        failed: OSError | None,
        *,
        held: bool,
    ) -> Any:
        if future is None:  # acks=0: no answer comes; an empty one, as Java's client makes up
            await self._drained(cls, timeout, failed, held=held)
            return cls.__response__()
        try:
            try:
                if held:
                    await self._released.wait()
                if failed is not None:
                    raise failed
                await self._stream.drain()
            except OSError as exc:
                self._shutdown(f"writing to the socket failed: {exc}", exc)
            # The deadline timer fails it when its time is up (and closes the connection).
            return await future
        finally:
            if self._in_flight.pop(correlation_id, None) is not None:
                self._abandon(correlation_id)  # cancelled: drop its answer
            elif future.done() and not future.cancelled():
                # Resolved; if we were cancelled before awaiting it, its error counts as
                # seen (no "exception was never retrieved" from a failed connection).
                future.exception()
            future.cancel()

    async def _drained(
        self, cls: Any, timeout: float | None, failed: OSError | None, *, held: bool
    ) -> None:
        """An acks=0 Produce, which no answer and so no deadline of its own bounds: done once
        written, within ``timeout``."""
        deadline = asyncio.timeout(timeout)
        try:
            async with deadline:
                if held:
                    await self._released.wait()
                    if self._close_reason is not None:
                        raise self._closed_error()  # never written
                if failed is not None:
                    raise failed
                await self._stream.drain()
        except OSError as exc:
            self._shutdown(f"writing to the socket failed: {exc}", exc)
            raise self._closed_error() from None
        except TimeoutError:
            if not deadline.expired():
                raise
            error = self._timed_out(cls.__api_key__, cls.__version__, timeout)
            self._shutdown(str(error), error)
            raise error from None

    def _timed_out(self, api_key: int, version: int, timeout: float | None) -> RequestTimeoutError:
        return RequestTimeoutError(
            f"{APIS[api_key].name} v{version} request to {self.peer}"
            f" got no response within {timeout} s"
        )

    def _check_deadlines(self) -> None:
        """The deadline timer rang: the first request past its deadline fails with
        :class:`RequestTimeoutError` and closes the connection; an abandoned one (its future
        cancelled) past it is dropped; the timer is set again for the soonest left."""
        now = self._loop.time()
        soonest = math.inf
        for correlation_id, entry in list(self._in_flight.items()):
            if entry.deadline > now:
                soonest = min(soonest, entry.deadline)
            elif entry.future.done():
                del self._in_flight[correlation_id]
                self._abandon(correlation_id)
            else:
                error = self._timed_out(entry.api_key, entry.version, entry.timeout)
                del self._in_flight[correlation_id]
                entry.fail(error)
                self._shutdown(str(error), error)
                return
        if self._close_reason is None:
            self._alarm.ring_by(soonest)

    def _abandon(self, correlation_id: int) -> None:
        self._abandoned.add(correlation_id)
        if len(self._abandoned) > _MAX_ABANDONED:
            self._shutdown(f"{len(self._abandoned)} requests went unanswered", None)

    def _lost(self, reason: str, cause: BaseException | None, by_peer: bool) -> None:
        """The stream ended (the peer, an error, a response that broke the protocol)."""
        if self._close_reason is None:
            self._closed_by_peer = by_peer
        self._shutdown(reason, cause)

    def _dispatch(self, payload: bytes) -> None:
        correlation_id = response_correlation_id(payload)
        entry = self._in_flight.pop(correlation_id, None)
        if entry is not None and entry.future.done():
            # Its caller was cancelled or timed out, which cancels the awaited future at once;
            # the answer came before the caller's cleanup ran and moved the id to abandoned.
            _log.debug("%s: dropped late response %d", self.peer, correlation_id)
            return
        if entry is None:
            if correlation_id in self._abandoned:
                self._abandoned.remove(correlation_id)
                _log.debug("%s: dropped late response %d", self.peer, correlation_id)
                return
            if correlation_id in self._acks_0:
                del self._acks_0[correlation_id]
                _log.debug("%s: dropped an answer to Produce with acks=0", self.peer)
                return
            raise ProtocolError(
                f"the broker sent a response with correlation id {correlation_id},"
                " which matches no request in flight"
            )
        try:
            if entry.api_key == API_VERSIONS:
                body = decode_api_versions_response(payload, entry.version)
            else:
                # Like Kafka's Java client, ignore (and log) bytes after a whole response:
                # librdkafka's mock cluster adds one to every flexible Metadata response.
                body = decode_response(payload, entry.api_key, entry.version, trailing_ok=True)[1]
        except Exception as exc:
            # Whatever the decoder raised (a DecodeError, or a MemoryError from a hostile
            # frame) is this request's answer; then the connection closes.
            name = APIS[entry.api_key].name
            error = ProtocolError(
                f"the response to {name} v{entry.version} did not decode: {exc!r}"
            )
            entry.fail(exc if isinstance(exc, DecodeError) else error)
            raise error from exc
        entry.resolve(body)

    def _closed_error(self) -> ConnectionClosedError:
        error = ConnectionClosedError(
            f"connection to {self.peer} closed: {self._close_reason}", by_peer=self._closed_by_peer
        )
        error.__cause__ = self._close_cause
        return error

    def _shutdown(
        self, reason: str, cause: BaseException | None, *, graceful: bool = False
    ) -> None:
        """Close once: record why, fail every request in flight, stop reading, drop the socket.

        Runs synchronously, so no request can be registered between the check in ``_write``
        and the failing here. Unless ``graceful`` (``close()``), the socket is aborted:
        buffered bytes are dropped, as nothing more should reach a broker that misbehaved.
        """
        if self._close_reason is not None:
            return
        self._close_reason = reason
        self._close_cause = cause
        in_flight, self._in_flight = self._in_flight, {}
        self._alarm.cancel()
        self._abandoned.clear()
        self._acks_0.clear()
        self._held = None
        self._corked = None
        self._released.set()
        if not graceful:
            # Not a WARNING: each request in flight fails to its caller, and the cluster layer
            # tells of a broker failing at WARNING, once per broker and interval. While the
            # connection is set up, the ConnectError says why.
            _log.log(
                logging.INFO if self._set_up else logging.DEBUG,
                "connection to %s closed with %d requests in flight: %s",
                self.peer,
                len(in_flight),
                reason,
            )
        for entry in in_flight.values():
            entry.fail(self._closed_error())
        self._stream.end()
        reauthentication = self._reauthentication
        if reauthentication is not None and reauthentication is not asyncio.current_task():
            reauthentication.cancel()
        if graceful:
            self._transport.close()
        else:
            self._transport.abort()
