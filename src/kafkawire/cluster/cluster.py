"""Bootstrap, the metadata cache, routing and retries, over a pool of connections.

Rules this module keeps:

- A request goes where its class's ``__route__`` says: any broker, the leader of the partitions
  it names, the coordinator of the one group or transactional id it names (found by the fields'
  entity types, so batched forms such as OffsetFetch v8+ route too), or (``every``) each
  broker in turn through :meth:`Cluster.send_to_all`. On that broker it takes the connection of
  its purpose (see :mod:`._pool`), so a long poll never holds up produce or heartbeats.
- A request goes at the version its class fixes; a broker that does not serve that version
  gets nothing and the caller a :class:`~kafkawire.net.NoCommonVersionError` naming both
  ranges. With ``negotiate=True`` it is converted to the highest version both sides support
  instead, and fails before it is sent if it cannot be expressed there.
- One call is bounded in time as a whole: ``retry_timeout`` (plus any wait the broker may hold
  the request for on purpose) covers the search for a broker, every attempt and the backoff
  between them; each attempt's timeout is cut to what is left. A broker in its reconnect
  backoff (see :mod:`._health`) is waited for within that bound, not tried again at once.
- A request any broker can answer tries the brokers in the order :mod:`._search` gives:
  the known ones best first, then (``metadata_recovery_strategy="rebootstrap"``) the
  bootstrap addresses, which come first when no known broker can be reached.
- Retriable errors (a closed connection, a timeout, a retriable top-level error code) are
  retried with exponential backoff and jitter; errors that mean stale metadata refresh the
  cache first, and coordinator errors (or failing to reach the coordinator) forget the
  coordinator. A broker that closes the connection in answer to the same request twice is
  refusing it: the call fails with :class:`RequestRefusedError`. Other errors, and top-level
  error codes that are not retriable, go back to the caller: ``send`` returns the broker's
  response as it came, error code included, for the caller to judge.
- A partition that the metadata says does not exist fails at once (:class:`InvalidPartitionError`);
  an unknown topic is waited for, with metadata refreshes, until the call's time is up.
- After :meth:`Cluster.close`, calls in flight end with
  :class:`~kafkawire.errors.ClientClosedError` (not retried), no connection or task of the
  cluster is left, and later calls raise it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Collection, Coroutine, Sequence
from typing import Any, Literal, TypeVar, overload

from typing_extensions import Unpack

from kafkawire.errors import (
    ClientClosedError,
    ConnectionClosedError,
    EventLoopError,
    KafkawireError,
    UnknownTopicIdError,
)
from kafkawire.messages import RequestMessage, ResponseMessage
from kafkawire.messages.metadata import v13 as metadata_latest
from kafkawire.net import Connection
from kafkawire.net.errors import ConnectError, RequestTimeoutError
from kafkawire.protocol import convert

from ._deadline import bounded, cut_to_deadline
from ._own_requests import (
    FIND_COORDINATOR,
    coordinator_of,
    find_coordinator_request,
    metadata_request,
    top_level_error,
)
from ._pool import ConnectionFactory, ConnectionPool, NodeKey, Purpose, purpose_of
from ._routing import (
    GROUP,
    InvalidPartitionError,
    RoutingError,
    coordinator_key,
    held_for,
    partitions_named,
)
from ._search import BrokerSearch, parse_bootstrap
from .metadata import ClusterMetadata
from .settings import ClientOptions, ClientSettings

__all__ = [
    "Cluster",
    "InvalidPartitionError",
    "RequestRefusedError",
    "RoutingError",
    "parse_bootstrap",
]

_log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R", bound=ResponseMessage)
_REFUSALS = 2  # closes in answer to one request before it counts as refused


class RequestRefusedError(KafkawireError):
    """The broker closed the connection in answer to the same request again and again: it
    will not take it as it stands (malformed, too large, or a version it mishandles)."""


class Cluster:
    """A Kafka cluster as seen from one client: use as ``async with Cluster("host:9092") as c``.

    Options are those of :class:`ClientSettings`, as keyword arguments or as ``settings``.
    ``connect`` replaces how a connection is opened (for tests).
    """

    def __init__(
        self,
        bootstrap: str | Sequence[str],
        settings: ClientSettings | None = None,
        *,
        connect: ConnectionFactory | None = None,
        **options: Unpack[ClientOptions],
    ) -> None:
        if settings is not None and options:
            raise TypeError("Cluster() takes settings or options as keyword arguments, not both")
        self.settings = settings or ClientSettings.from_options(type(self).__name__, dict(options))
        s = self.settings
        self._pool = ConnectionPool(connect or self._open_connection, s.reconnect_backoff)
        self._search = BrokerSearch(
            parse_bootstrap(bootstrap),
            self._pool,
            strategy=s.metadata_recovery_strategy,
            trigger=s.metadata_recovery_rebootstrap_trigger,
        )
        self._metadata: ClusterMetadata | None = None
        self._metadata_stale = True
        self._metadata_lock = asyncio.Lock()
        self._coordinators: dict[tuple[int, str], int] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing = asyncio.Event()  # wakes retries sleeping through their backoff

    def _open_connection(self, host: str, port: int) -> Awaitable[Connection]:
        s = self.settings
        return Connection.open(
            host,
            port,
            client_id=s.client_id,
            ssl=s.ssl,
            sasl=s.sasl,
            request_timeout=s.request_timeout,
            connect_timeout=s.connect_timeout,
            max_frame_size=s.max_frame_size,
        )

    async def __aenter__(self) -> Cluster:
        try:
            await self.metadata()
        except BaseException:
            await self.close()  # the bootstrap connection, if one opened
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        return self._pool.closed

    async def close(self) -> None:
        """End calls in flight with ClientClosedError and close every connection."""
        self._closing.set()
        await self._pool.close()

    def _check_usable(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif loop is not self._loop:
            raise EventLoopError(
                "this client belongs to another event loop; open a client in each event loop "
                "that uses one"
            )
        if self._pool.closed:
            raise ClientClosedError("the client is closed")

    def bounded(self, what: str, deadline: float) -> contextlib.AbstractAsyncContextManager[None]:
        """A scope for one call, which may make several sends: it ends by ``deadline``
        (``time.monotonic()``; an enclosing scope's deadline wins if sooner), each request in
        it gets at most the time left, and what ends it early becomes a kafkawire error:
        :class:`RequestTimeoutError` naming ``what`` when the deadline passes,
        :class:`ClientClosedError` when the client closes."""
        return bounded(what, deadline, lambda: self._pool.closed)

    def deadline(self, extra: float = 0.0) -> float:
        """The deadline of a call starting now: ``retry_timeout`` (plus ``extra``) from now."""
        return time.monotonic() + self.settings.retry_timeout + extra

    def _timeout(self, held: float = 0.0) -> float:
        """One request's timeout: the setting plus any deliberate wait, cut to the time the
        enclosing call has left."""
        return cut_to_deadline(self.settings.request_timeout + held)

    # --- connections ---------------------------------------------------------------------

    async def connection(self, node_id: int, purpose: Purpose = "normal") -> Connection:
        """The connection to broker ``node_id`` for ``purpose`` (opened on first use)."""
        self._check_usable()
        broker = (await self.metadata()).brokers.get(node_id)
        if broker is None:
            self._metadata_stale = True
            raise ConnectError(f"broker {node_id} is not in the cluster metadata")
        return await self._pool.get(node_id, broker.host, broker.port, purpose)

    async def versions_for(self, node_id: int, api_key: int) -> int:
        """The highest version of ``api_key`` broker ``node_id`` and kafkawire both support."""
        conn = self._pool.open_connection(node_id) or await self.connection(node_id)
        return conn.version_for(api_key)

    async def any_connection(self) -> Connection:
        """A connection to the broker best placed to answer (see :mod:`._pool`)."""
        self._check_usable()
        return (await self._on_any_broker(_ready))[1]

    async def _on_any_broker(
        self, call: Callable[[Connection], Awaitable[T]]
    ) -> tuple[T, Connection]:
        """``call`` on the best broker's connection; on a retriable failure, the next one
        (see :mod:`._search` for the order, the bootstrap addresses included)."""
        failures = []
        for key, host, port in self._search.candidates(self._metadata):
            try:
                conn = await self._pool.get(key, host, port, "normal")
            except ConnectError as exc:  # the pool has recorded it
                failures.append(str(exc))
                continue
            try:
                answer = await call(conn)
            except (RequestTimeoutError, ConnectionClosedError, ConnectError) as exc:
                self._pool.failed(key, exc)
                failures.append(str(exc))
                continue
            self._pool.answered(key)
            return answer, conn
        raise ConnectError("no broker answered: " + "; ".join(failures))

    # --- metadata --------------------------------------------------------------------------

    async def metadata(self, topics: Collection[str] = ()) -> ClusterMetadata:
        """Cached metadata, refreshed when stale, older than ``metadata_max_age``, or lacking
        one of ``topics``.

        Tasks that find the cache stale at once share one refresh: each re-checks the cache
        once it holds the lock, so the ones that waited take the answer the first one got.
        """
        self._check_usable()
        cached = self._usable_metadata(topics)
        if cached is not None:
            return cached
        async with self.bounded("Metadata", self.deadline()), self._metadata_lock:
            cached = self._usable_metadata(topics)
            return cached or await self._refresh(topics or None)

    async def refresh_metadata(
        self, topics: Collection[str] | None = None, *, auto_create: bool = False
    ) -> ClusterMetadata:
        """Ask any broker for the brokers and for ``topics`` (all topics when ``None``).

        With ``auto_create`` a broker configured to create topics on first use creates those
        it lacks (what a producer asks; readers do not).
        """
        self._check_usable()
        async with self.bounded("Metadata", self.deadline()), self._metadata_lock:
            return await self._refresh(topics, auto_create=auto_create)

    @property
    def current_metadata(self) -> ClusterMetadata | None:
        """The metadata last fetched (a new object after each refresh), without waiting; for
        hot paths that cache what they derive from it."""
        return self._metadata

    def _usable_metadata(self, topics: Collection[str]) -> ClusterMetadata | None:
        """The cache, unless it is stale, too old, or lacks one of ``topics``."""
        cached = self._metadata
        if (
            cached is None
            or self._metadata_stale
            or cached.age() > self.settings.metadata_max_age
            or any(t not in cached.topics for t in topics)
        ):
            return None
        return cached

    async def _refresh(
        self, topics: Collection[str] | None, *, auto_create: bool = False
    ) -> ClusterMetadata:
        """The refresh itself; the caller holds ``_metadata_lock``."""

        async def ask(conn: Connection) -> Any:
            version = conn.version_for(metadata_latest.MetadataRequest.__api_key__)
            request = metadata_request(topics, version, auto_create=auto_create)
            return await conn.send(request, timeout=self._timeout())

        self._search.seeking()
        response, _ = await self._on_any_broker(ask)
        self._search.found()
        fresh = ClusterMetadata.from_response(response)
        before = self._metadata.brokers if self._metadata is not None else {}
        if topics is not None and self._metadata is not None:
            # A partial answer updates the topics it names and keeps the rest.
            merged = {**self._metadata.topics, **fresh.topics}
            fresh = dataclasses.replace(fresh, topics=merged)
        self._metadata, self._metadata_stale = fresh, False
        for broker in fresh.brokers.values():
            old = before.get(broker.node_id)
            if old is not None and (old.host, old.port) != (broker.host, broker.port):
                self._pool.moved(broker.node_id)
            self._pool.adopt((broker.host, broker.port), broker.node_id)
        return fresh

    # --- coordinators ----------------------------------------------------------------------

    async def coordinator(self, key: str, key_type: int = GROUP) -> int:
        """The node id coordinating a group (``key_type`` 0) or transactional id (1)."""
        self._check_usable()
        cached = self._coordinators.get((key_type, key))
        if cached is not None:
            return cached
        async with self.bounded("FindCoordinator", self.deadline()):
            node_id, _ = await self._on_any_broker(
                lambda conn: self._find_coordinator(conn, key, key_type)
            )
        self._coordinators[(key_type, key)] = node_id
        return node_id

    async def _find_coordinator(self, conn: Connection, key: str, key_type: int) -> int:
        request = find_coordinator_request(conn.version_for(FIND_COORDINATOR), key, key_type)
        return coordinator_of(await conn.send(request, timeout=self._timeout()))

    # --- sending ---------------------------------------------------------------------------

    @overload
    async def send(
        self,
        request: RequestMessage[R],
        *,
        node_id: int | None = ...,
        negotiate: Literal[False] = ...,
        max_version: None = ...,
        retry: bool = ...,
        deadline: float | None = ...,
    ) -> R: ...
    @overload
    async def send(
        self,
        request: RequestMessage[R],
        *,
        node_id: int | None = ...,
        negotiate: bool,
        max_version: int | None = ...,
        retry: bool = ...,
        deadline: float | None = ...,
    ) -> Any: ...  # the response of whichever version was negotiated
    async def send(
        self,
        request: RequestMessage[R],
        *,
        node_id: int | None = None,
        negotiate: bool = False,
        max_version: int | None = None,
        retry: bool = True,
        deadline: float | None = None,
    ) -> Any:
        """Send ``request`` where it belongs (or to ``node_id``), retrying what may succeed.

        It goes at its own version, or with ``negotiate`` at the highest version both sides
        support (and at most ``max_version``, for a caller that speaks only older versions of
        an API's protocol, as transactional producers before KIP-890 do). The whole call ends
        by ``deadline`` (``time.monotonic()``; default: now plus ``retry_timeout`` plus the
        request's deliberate wait). With ``retry=False`` the first
        retriable error is raised (after the caches it invalidates are cleared), for callers
        that retry themselves and must choose the broker again, such as a send pinned to a
        partition leader that may have moved.
        """
        if getattr(type(request), "__kind__", None) != "request":
            raise TypeError(
                "send() takes a generated request object (such as "
                "kafkawire.messages.metadata.v12.MetadataRequest), "
                f"not {type(request).__name__}"
            )
        held = held_for(request)
        return await self.call(
            f"{type(request).__name__} v{request.__version__}",
            lambda: self._attempt(request, node_id, negotiate, max_version, held),
            deadline=self.deadline(held) if deadline is None else deadline,
            retry=retry,
            forget=lambda error: self._forget(error, request),
        )

    async def call(
        self,
        what: str,
        attempt: Callable[[], Awaitable[T]],
        *,
        deadline: float | None = None,
        retry: bool = True,
        forget: Callable[[KafkawireError], None] | None = None,
    ) -> T:
        """Run ``attempt`` until it succeeds, within one bounded call (see :meth:`bounded`).

        Retriable errors are retried with backoff until ``deadline`` (default:
        ``retry_timeout`` from now), after ``forget`` has cleared what they invalidate; the
        first retry logs a WARNING naming ``what`` and the error, later ones DEBUG (and all
        of them DEBUG when the error is a broker failing, which the pool tells of once). A
        connection the broker closes in answer twice ends the call with
        :class:`RequestRefusedError`. The building block of :meth:`send` and of the clients'
        own multi-step calls.
        """
        self._check_usable()
        if deadline is None:
            deadline = self.deadline()
        async with self.bounded(what, deadline):
            delays = self.settings.backoff.delays(deadline)
            refusals = retries = 0
            while True:
                try:
                    return await attempt()
                except KafkawireError as exc:
                    if not exc.retriable or self._pool.closed:
                        raise
                    if forget is not None:
                        forget(exc)
                    if isinstance(exc, ConnectionClosedError) and exc.by_peer:
                        refusals += 1
                        if refusals >= _REFUSALS:
                            raise RequestRefusedError(
                                f"the broker closed the connection in answer to {what} "
                                f"{refusals} times: it refuses that request"
                            ) from exc
                    delay = next(delays, None) if retry else None
                    if delay is None:
                        raise
                    retries += 1
                    _log.log(
                        logging.WARNING
                        if retries == 1 and not _broker_failed(exc)
                        else logging.DEBUG,
                        "retrying %s (for up to %.3g s more) after: %s",
                        what,
                        deadline - time.monotonic(),
                        exc,
                    )
                    await self._sleep(delay)

    async def _attempt(
        self,
        request: Any,
        node_id: int | None,
        negotiate: bool,
        max_version: int | None,
        held: float,
    ) -> Any:
        key, conn = await self._route(request, node_id)
        if negotiate:
            version = conn.version_for(request.__api_key__)
            if max_version is not None:
                version = min(version, max_version)
            request = convert(request, version)
        return await self._answered(
            key, conn, conn.send(request, timeout=self._timeout(held)), held
        )

    async def _answered(
        self, key: NodeKey, conn: Connection, pending: Coroutine[Any, Any, Any], held: float
    ) -> Any:
        try:
            response = await pending
        except (RequestTimeoutError, ConnectionClosedError, ConnectError) as exc:
            self._pool.failed(key, exc)
            raise
        except asyncio.CancelledError:
            if held:
                # The broker may hold it a long time yet, and its connection answers in order:
                # a new connection serves the next request sooner than this one would.
                self._pool.drop(conn)
            raise
        self._pool.answered(key)
        error = top_level_error(response)
        if error is not None and error.retriable:
            raise error
        return response

    def write(self, request: RequestMessage[R], *, node_id: int) -> Coroutine[Any, Any, Any]:
        """Write ``request`` to broker ``node_id`` before returning, on its open connection for
        the request's purpose, and return what awaits the response (within one bounded call,
        not retried). For callers whose requests must reach a broker in the order they make
        them, such as a producer's batches. Open the connection first (:meth:`connection`):
        without it, :class:`ConnectError` is raised and nothing is written."""
        self._check_usable()
        purpose = purpose_of(type(request))
        conn = self._pool.connection_for(node_id, purpose)
        if conn is None:
            self._metadata_stale = True
            raise ConnectError(f"no open {purpose} connection to broker {node_id} to write on")
        held = held_for(request)
        what = f"{type(request).__name__} v{request.__version__}"
        deadline = self.deadline(held)
        try:
            written = conn.write(request, timeout=self._timeout(held))
        except KafkawireError as exc:
            if isinstance(exc, ConnectionClosedError):
                self._pool.failed(node_id, exc)
            self._forget(exc, request)
            raise
        pending = self._answered(node_id, conn, written, held)
        return self._bounded_answer(what, deadline, request, pending)

    async def _bounded_answer(
        self, what: str, deadline: float, request: Any, pending: Coroutine[Any, Any, Any]
    ) -> Any:
        try:
            async with self.bounded(what, deadline):
                return await pending
        except KafkawireError as exc:
            self._forget(exc, request)
            raise

    async def _sleep(self, delay: float) -> None:
        """The backoff before a retry, cut short (with ClientClosedError) by close()."""
        # Not asyncio.wait_for: on Python 3.11 it can swallow a cancellation that arrives as
        # the event is set. asyncio.timeout tells its own expiry from a cancellation.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(delay):
                await self._closing.wait()
        if self._pool.closed:
            raise ClientClosedError("the client was closed")

    async def send_to_all(self, request: Any, *, negotiate: bool = False) -> dict[int, Any]:
        """Send ``request`` to every broker (for ``every``-routed APIs such as ListGroups)."""
        brokers = list((await self.metadata()).brokers)
        sends = [
            asyncio.ensure_future(self.send(request, node_id=n, negotiate=negotiate))
            for n in brokers
        ]
        try:
            responses = await asyncio.gather(*sends)
        except BaseException:
            for send in sends:  # gather leaves the others running when one fails
                send.cancel()
            await asyncio.gather(*sends, return_exceptions=True)
            raise
        return dict(zip(brokers, responses, strict=True))

    def mark_metadata_stale(self) -> None:
        """Make the next :meth:`metadata` call ask a broker again."""
        self._metadata_stale = True

    def _forget(self, error: KafkawireError, request: Any) -> None:
        if getattr(error, "invalid_metadata", False) or isinstance(error, ConnectError):
            self._metadata_stale = True
        lost = isinstance(error, ConnectError | ConnectionClosedError)
        if getattr(error, "invalid_coordinator", False) or lost:
            # A coordinator that cannot be reached may have moved: look it up again too.
            key = coordinator_key(request)
            if key is not None:
                self._coordinators.pop(key, None)

    async def _route(self, request: Any, node_id: int | None) -> tuple[NodeKey, Connection]:
        """The broker ``request`` goes to and the connection of its purpose there."""
        purpose = purpose_of(type(request))
        if node_id is None:
            node_id = await self._node_for(request)
        if node_id is not None:
            return node_id, await self.connection(node_id, purpose)
        # Any broker: the best placed one; if it fails, the retry picks another.
        key, host, port = next(self._search.candidates(self._metadata))
        return key, await self._pool.get(key, host, port, purpose)

    async def _node_for(self, request: Any) -> int | None:
        """The node id ``request`` must go to, or ``None`` if any broker will do."""
        route = type(request).__route__
        if route == "leader":
            return await self._leader_of(request)
        if route in ("group", "transaction"):
            key = coordinator_key(request)
            if key is not None:
                return await self.coordinator(key[1], key[0])
            if route == "group":
                raise RoutingError(f"{type(request).__name__} names no group to route by")
            # A transaction-routed request without a transactional id (InitProducerId for an
            # idempotent producer) may go to any broker.
        if route in ("every", "internal"):
            raise RoutingError(
                f"{type(request).__name__} is routed '{route}': use send_to_all() or name node_id"
            )
        return None

    async def _leader_of(self, request: Any) -> int:
        named = partitions_named(request)
        topics = [t for t, _ in named if isinstance(t, str)]
        metadata = await self.metadata(topics)
        try:
            leaders = self._leaders(metadata, named)
        except InvalidPartitionError:
            # Partitions may have been added since the cache was filled: ask once more.
            leaders = self._leaders(await self.refresh_metadata(topics), named)
        if len(leaders) != 1:
            raise RoutingError(
                f"{type(request).__name__} names partitions of {len(leaders)} leaders; "
                "send one request per leader"
            )
        return leaders.pop()

    def _leaders(
        self, metadata: ClusterMetadata, named: list[tuple[str | uuid.UUID, int]]
    ) -> set[int]:
        leaders = set()
        for topic, partition in named:
            name = metadata.topic_name(topic) if isinstance(topic, uuid.UUID) else topic
            if name is None:
                self._metadata_stale = True
                raise UnknownTopicIdError(f"topic id {topic} is not in the metadata")
            leaders.add(metadata.leader_for(name, partition))
        return leaders


def _broker_failed(error: KafkawireError) -> bool:
    """Whether ``error`` is a broker failing to connect or answer (the pool logs those)."""
    return isinstance(error, ConnectError | ConnectionClosedError | RequestTimeoutError)


async def _ready(conn: Connection) -> None:
    """Nothing to send: :meth:`Cluster.any_connection` wants only the connection."""
