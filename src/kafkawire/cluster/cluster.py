"""The cluster as one client sees it: a facade over the modules that each keep one rule set.

:class:`Cluster` is what the clients (``KafkaClient``, ``Producer``, ``Consumer``, ``Admin``)
are built on; applications use those, with Java's option names in milliseconds, and reach a
cluster only through them (``client.cluster``, ``admin.cluster``). It takes the cluster
layer's own :class:`ClientSettings` (seconds), which each client builds from its options.

Each job is a module of its own, with its rules at its top; the cluster wires them together
and checks, at each public entry, that the client is usable (:mod:`._loop`; not closed):

- :mod:`._deadline`: one call is bounded in time as a whole (``retry_timeout``), and every
  request in it is cut to the time left.
- :mod:`._search`: which brokers a request any broker can answer tries, in what order, and
  when the bootstrap addresses come back (rebootstrap).
- :mod:`._metadata_cache`: the metadata routing reads, and when it is fetched again.
- :mod:`._coordinators`: the coordinator of each group and transactional id.
- :mod:`._router` (with :mod:`._routing`, what a request names): the broker and connection
  each request goes to, and which caches an error invalidates.
- :mod:`._exchange`: one request on one connection: its version, its timeout, what its
  answer means for the broker's health record.
- :mod:`._retry`: retriable errors retried with backoff until the deadline; a request the
  broker refuses by closing the connection twice ends the call.
- :mod:`._writes`: requests written in the order callers make them (a producer's batches).
- :mod:`._pool` and :mod:`._health`: connections per broker and purpose, reconnect backoff.
- :mod:`._metrics`: connections made and each broker's request latencies, recorded in the
  client's :class:`~kafkawire.metrics.Metrics` (:attr:`Cluster.metrics`).

After :meth:`Cluster.close`, calls in flight end with
:class:`~kafkawire.errors.ClientClosedError` (not retried), no connection or task of the
cluster is left, and later calls raise it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeVar, overload

from typing_extensions import Unpack

from kafkawire.errors import ClientClosedError, KafkawireError
from kafkawire.messages import RequestMessage, ResponseMessage
from kafkawire.metrics import Metrics
from kafkawire.net import Connection

from ._coordinators import CoordinatorCache
from ._deadline import Deadlines
from ._exchange import Exchange
from ._loop import LoopBinding
from ._metadata_cache import MetadataCache
from ._metrics import ConnectionMetrics
from ._pool import ConnectionFactory, ConnectionPool, Purpose
from ._retry import RequestRefusedError, Retries
from ._router import Router
from ._routing import GROUP, InvalidPartitionError, RoutingError, held_for
from ._search import BrokerSearch, parse_bootstrap
from ._writes import OnAnswer, OrderedWrites
from .metadata import BrokerAddress, ClusterMetadata, TopicPartition
from .settings import ClientOptions, ClientSettings

__all__ = [
    "Cluster",
    "InvalidPartitionError",
    "RequestRefusedError",
    "RoutingError",
    "parse_bootstrap",
]

T = TypeVar("T")
R = TypeVar("R", bound=ResponseMessage)


class Cluster:
    """A Kafka cluster as seen from one client: use as ``async with Cluster("host:9092") as c``.

    The cluster layer's entry point, for the clients built on it (applications use those).
    Options are those of :class:`ClientSettings` (seconds), as keyword arguments or as
    ``settings``. ``connect`` replaces how a connection is opened (for tests). ``metrics`` is
    the client's registry, where connections and request latencies are recorded under
    ``metric_group_prefix`` (Java's ``metricGrpPrefix``: ``producer``, ``consumer``, ...).
    """

    def __init__(
        self,
        bootstrap: str | Sequence[str],
        settings: ClientSettings | None = None,
        *,
        connect: ConnectionFactory | None = None,
        metrics: Metrics | None = None,
        metric_group_prefix: str = "kafka-client",
        **options: Unpack[ClientOptions],
    ) -> None:
        if settings is not None and options:
            raise TypeError("Cluster() takes settings or options as keyword arguments, not both")
        self.settings = settings or ClientSettings.from_options(type(self).__name__, dict(options))
        s = self.settings
        self._loop = LoopBinding()
        self.metrics = metrics or Metrics()
        """The client's metrics (see :mod:`kafkawire.metrics`)."""
        recorded = ConnectionMetrics(self.metrics, metric_group_prefix, self._open_connections)
        self._pool = pool = ConnectionPool(
            connect or self._open_connection,
            s.reconnect_backoff,
            on_connected=recorded.connection_created,
        )
        # Each collaborator gets what it uses (not the Cluster): here, whether it is closed.
        self._deadlines = Deadlines(
            call_timeout=s.retry_timeout,
            request_timeout=s.request_timeout,
            closed=lambda: pool.closed,
        )
        self._search = BrokerSearch(
            parse_bootstrap(bootstrap),
            self._pool,
            strategy=s.metadata_recovery_strategy,
            trigger=s.metadata_recovery_rebootstrap_trigger,
        )
        self._metadata = MetadataCache(
            self._search, self._pool, self._deadlines, max_age=s.metadata_max_age
        )
        self._coordinators = CoordinatorCache(self._search, self._metadata, self._deadlines)
        self._router = Router(self._pool, self._search, self._metadata, self._coordinators)
        self._exchange = Exchange(self._pool, self._router, self._deadlines, recorded.answered)
        self._writes = OrderedWrites(
            self._pool, self._exchange, self._router, self._metadata, self._deadlines
        )
        self._retries = Retries(s.backoff, self._deadlines, lambda: pool.closed)

    def _open_connections(self) -> int:
        return self._pool.open_count()

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
        """Whether :meth:`close` was called."""
        return self._pool.closed

    async def close(self) -> None:
        """End calls in flight with ClientClosedError and close every connection."""
        self._retries.close()
        await self._pool.close()

    def _check_usable(self) -> None:
        self._loop.check()
        if self._pool.closed:
            raise ClientClosedError("the client is closed")

    # --- deadlines ---------------------------------------------------------------------------

    def bounded(self, what: str, deadline: float) -> contextlib.AbstractAsyncContextManager[None]:
        """A scope for one call, which may make several sends: it ends by ``deadline``
        (``time.monotonic()``; an enclosing scope's deadline wins if sooner), each request in
        it gets at most the time left, and what ends it early becomes a kafkawire error:
        :class:`RequestTimeoutError` naming ``what`` when the deadline passes,
        :class:`ClientClosedError` when the client closes."""
        return self._deadlines.bounded(what, deadline)

    def deadline(self, extra: float = 0.0) -> float:
        """The deadline of a call starting now: ``retry_timeout`` (plus ``extra``) from now."""
        return self._deadlines.deadline(extra)

    # --- connections -------------------------------------------------------------------------

    async def connection(self, node_id: int, purpose: Purpose = "normal") -> Connection:
        """The connection to broker ``node_id`` for ``purpose`` (opened on first use)."""
        self._check_usable()
        return await self._router.connection(node_id, purpose)

    async def versions_for(self, node_id: int, api_key: int) -> int:
        """The highest version of ``api_key`` broker ``node_id`` and kafkawire both support."""
        conn = self._pool.open_connection(node_id) or await self.connection(node_id)
        return conn.version_for(api_key)

    async def any_connection(self) -> Connection:
        """A connection to the broker best placed to answer (see :mod:`._search`)."""
        self._check_usable()
        return (await self._search.first_answer(self._metadata.current, _ready))[1]

    # --- metadata and coordinators ------------------------------------------------------------

    async def metadata(self, topics: Collection[str] = ()) -> ClusterMetadata:
        """Cached metadata, refreshed when stale, older than ``metadata_max_age``, or lacking
        one of ``topics`` (see :mod:`._metadata_cache`)."""
        self._check_usable()
        return await self._metadata.get(topics)

    async def refresh_metadata(
        self, topics: Collection[str] | None = None, *, auto_create: bool = False
    ) -> ClusterMetadata:
        """Ask any broker for the brokers and for ``topics`` (all topics when ``None``).

        With ``auto_create`` a broker configured to create topics on first use creates those
        it lacks (what a producer asks; readers do not).
        """
        self._check_usable()
        return await self._metadata.refresh(topics, auto_create=auto_create)

    @property
    def current_metadata(self) -> ClusterMetadata | None:
        """The metadata last fetched (a new object after each refresh), without waiting; for
        hot paths that cache what they derive from it."""
        return self._metadata.current

    def on_metadata(self, listener: Callable[[ClusterMetadata], None]) -> None:
        """Call ``listener`` with each new metadata as it becomes :attr:`current_metadata`:
        for hot paths that keep what they derive from it, and must not look it up per call."""
        self._metadata.on_refresh(listener)

    def failing_brokers(self) -> list[tuple[str, int]]:
        """The brokers whose last connects or requests failed, not answering since: each
        described (``broker 3 (host:9092)``) with its failures in a row."""
        return self._pool.failing()

    def update_leaders(
        self, leaders: Mapping[TopicPartition, tuple[int, int]], brokers: Iterable[BrokerAddress]
    ) -> set[TopicPartition]:
        """Route ``leaders`` (partition -> (node id, leader epoch)) as an answer named them
        (KIP-951's current leader, ``brokers`` its node endpoints) without waiting for a
        metadata refresh; the partitions whose leader changed (a hint not newer than the
        metadata is ignored: :meth:`ClusterMetadata.with_leaders`)."""
        return self._metadata.update_leaders(leaders, brokers)

    def mark_metadata_stale(self) -> None:
        """Make the next :meth:`metadata` call ask a broker again."""
        self._metadata.mark_stale()

    async def coordinator(self, key: str, key_type: int = GROUP) -> int:
        """The node id coordinating a group (``key_type`` 0) or transactional id (1)."""
        self._check_usable()
        return await self._coordinators.node_for(key, key_type)

    # --- sending -----------------------------------------------------------------------------

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
        self._check_usable()
        # Not through call(): one coroutine less on the path every request takes.
        return await self._retries.call(
            f"{type(request).__name__} v{request.__version__}",
            lambda: self._exchange.attempt(request, node_id, negotiate, max_version, held),
            deadline=self._deadlines.deadline(held) if deadline is None else deadline,
            retry=retry,
            forget=lambda error: self._router.forget(error, request),
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
        own multi-step calls (see :mod:`._retry`).
        """
        self._check_usable()
        return await self._retries.call(
            what,
            attempt,
            deadline=self._deadlines.deadline() if deadline is None else deadline,
            retry=retry,
            forget=forget,
        )

    def ready_connection(self, node_id: int, purpose: Purpose = "normal") -> Connection | None:
        """The open connection to broker ``node_id`` for ``purpose``, or ``None`` (nothing is
        opened, nothing waits): for a caller that writes at once when it can."""
        return self._pool.connection_for(node_id, purpose)

    def write(self, request: RequestMessage[R], *, node_id: int, on_answer: OnAnswer) -> None:
        """Write ``request`` to broker ``node_id`` before returning, on its open connection for
        the request's purpose; ``on_answer(response, None)`` or ``on_answer(None, error)`` is
        called once, from the event loop, when it ends (not retried; a retriable top-level
        error code is an error; after :meth:`close`, errors are ClientClosedError). For
        callers whose requests must reach a broker in the order they make them, such as a
        producer's batches, and that settle answers without a task per request. Open the
        connection first (:meth:`connection`): without it, :class:`ConnectError` is raised
        and nothing is written (see :mod:`._writes`)."""
        self._check_usable()
        self._writes.write(request, node_id, on_answer)

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


async def _ready(conn: Connection) -> None:
    """Nothing to send: :meth:`Cluster.any_connection` wants only the connection."""
