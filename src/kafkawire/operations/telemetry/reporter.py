"""Pushing a client's metrics to the brokers (KIP-714), as Java's ``ClientTelemetryReporter``.

A background task of the client's supervisor, on by default (``enable_metrics_push``):

- It asks any broker for a subscription (GetTelemetrySubscriptions; the first time with the
  zero id, so the broker assigns the client instance id, later with that id). A subscription
  that asks for no metrics is asked for again after its push interval.
- Subscribed to metrics, it pushes (PushTelemetry) the selected metrics of the client's
  registry as OTLP (:mod:`.payload`), compressed with the first type the broker accepts, first
  after the push interval times a random factor in [0.5, 1.5) (Java's jitter, so clients
  started together do not push together), then every push interval.
- A broker's error code is read by :mod:`.subscription`'s table (subscribe again at once,
  after the interval, or stop pushing); UNSUPPORTED_COMPRESSION_TYPE also drops the type that
  was used, for the next in the broker's list. A request that fails (no answer, no broker
  serving KIP-714) is tried again after the default interval, 5 minutes, as in Java.
- On close, a client holding a subscription to metrics sends exactly one last push marked
  ``terminating`` (within the close's time), and nothing after it.
- Telemetry never ends its client: the task is *contained* in the client's supervisor, which
  cancels it on close and logs an error it does not handle (at ERROR, with its traceback);
  such an error stops the push, and the client goes on.
- A broker that does not serve KIP-714 (Tansu, a Kafka broker without a telemetry exporter)
  gets no request: the client asks again after the default interval, logging at DEBUG only.

:meth:`TelemetryReporter.client_instance_id` waits for the first subscription (Java's
``clientInstanceId(timeout)``).
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from kafkawire.cluster import Cluster
from kafkawire.cluster.supervisor import Supervisor
from kafkawire.errors import BrokerError, KafkawireError, TelemetryDisabledError
from kafkawire.messages import RequestMessage
from kafkawire.messages.get_telemetry_subscriptions import v0 as get_subscriptions
from kafkawire.messages.push_telemetry import v0 as push_telemetry
from kafkawire.net.errors import NoCommonVersionError
from kafkawire.records import Compression, RecordsError, compress

from .naming import telemetry_name
from .payload import DeltaLedger, encode_metrics
from .state import TELEMETRY_MOVES, TelemetryState
from .subscription import DEFAULT_PUSH_INTERVAL_MS, STOP, Subscription, error_interval_ms

__all__ = ["TelemetryReporter"]

_log = logging.getLogger(__name__)

_S = TelemetryState
_ZERO = uuid.UUID(int=0)
_UNSUPPORTED_COMPRESSION_TYPE = 76
_JITTER = (0.5, 1.5)  # Java's INITIAL_PUSH_JITTER_LOWER and _UPPER
Labels = Callable[[], Mapping[str, str]]


class _Refused:
    """An answer that is only an error code."""

    def __init__(self, error_code: int) -> None:
        self.error_code = error_code


class TelemetryReporter:
    """The metrics push of the client ``client`` (named in the log), over ``cluster``, of the
    metrics in ``cluster.metrics``; ``labels()`` are the client's resource labels now."""

    def __init__(
        self,
        cluster: Cluster,
        *,
        client: str,
        enabled: bool,
        wait: float,
        labels: Labels = dict,
    ) -> None:
        self._cluster = cluster
        self._wait = wait  # what client_instance_id() waits by default (seconds)
        self._client = client
        self._enabled = enabled
        self._labels = labels
        self.state = _S.SUBSCRIPTION_NEEDED
        self._subscription: Subscription | None = None
        self._wait_ms = 0  # before the next request
        self._refused: set[Compression] = set()
        self._ledger = DeltaLedger()
        self._stopped = False  # stopped for good (a broker's answer, or an unexpected error)
        self._settled = asyncio.Event()  # a subscription came, or none will come soon
        self._task: asyncio.Task[None] | None = None

    def start(self, supervisor: Supervisor) -> None:
        """Run the push as a task of ``supervisor`` (if it is enabled)."""
        if self._enabled:
            self._task = supervisor.spawn("metrics push (KIP-714)", self._run, contained=True)

    async def client_instance_id(self, timeout: float | None = None) -> uuid.UUID | None:
        """The id the brokers gave this client, waiting up to ``timeout`` seconds (default:
        the client's own bound) for the first subscription; ``None`` if none came (no broker
        serving KIP-714)."""
        if not self._enabled:
            raise TelemetryDisabledError(
                f"the {self._client} pushes no metrics, so it has no client instance id: "
                "create it with enable_metrics_push=True"
            )
        if self._subscription is None:
            try:
                async with asyncio.timeout(self._wait if timeout is None else timeout):
                    await self._settled.wait()
            except TimeoutError:
                pass
        return None if self._subscription is None else self._subscription.client_instance_id

    async def close(self, timeout: float) -> None:
        """Stop; with a subscription to metrics, send the one terminating push first (up to
        ``timeout`` seconds). Calling it again does nothing."""
        if self.state is _S.TERMINATED:
            return
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        subscription = self._subscription
        if (
            not self._stopped
            and subscription is not None
            and subscription.wants_metrics
            and self.state in (_S.SUBSCRIPTION_IN_PROGRESS, _S.PUSH_NEEDED, _S.PUSH_IN_PROGRESS)
        ):
            self._move(_S.TERMINATING_PUSH_NEEDED)
            try:
                async with asyncio.timeout(timeout):
                    await self._push(subscription, terminating=True)
            except (TimeoutError, KafkawireError, OSError) as exc:
                _log.debug("%s: the last metrics push failed: %s", self._client, exc)
        self._move(_S.TERMINATED)
        self._settled.set()

    # --- the task ---------------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            while not (self._stopped or self.state.terminating):
                await asyncio.sleep(self._wait_ms / 1000)
                subscription = self._subscription
                if self.state is _S.PUSH_NEEDED and subscription is not None:
                    await self._push(subscription, terminating=False)
                else:
                    await self._subscribe()
        except Exception:  # the supervisor logs it; no more pushes, not even the last one
            self._stop()
            raise

    async def _subscribe(self) -> None:
        self._move(_S.SUBSCRIPTION_IN_PROGRESS)
        previous = self._subscription
        request = get_subscriptions.GetTelemetrySubscriptionsRequest(
            client_instance_id=_ZERO if previous is None else previous.client_instance_id
        )
        answer = await self._send(request)
        if answer is None:
            return
        if answer.error_code:
            self._refused_by_broker(answer.error_code, previous)
            return
        subscription = Subscription.of(answer)
        if subscription.client_instance_id == _ZERO:
            _log.warning(
                "%s: the broker gave no client instance id: no metrics pushed", self._client
            )
            self._stop()
            return
        if previous is not None and previous.delta_temporality != subscription.delta_temporality:
            self._ledger = DeltaLedger()
        self._subscription = subscription
        interval = subscription.push_interval_ms
        if subscription.wants_metrics:
            self._move(_S.PUSH_NEEDED)
            self._wait_ms = round(interval * random.uniform(*_JITTER))
        else:
            self._move(_S.SUBSCRIPTION_NEEDED)
            self._wait_ms = interval
        if subscription.wants_metrics and (previous is None or not previous.wants_metrics):
            _log.info(
                "%s: pushing metrics every %d ms (client instance id %s)",
                self._client,
                interval,
                subscription.client_instance_id,
            )
        elif previous is None:  # a broker that asks for no metrics (Tansu) makes no noise
            _log.debug(
                "%s: client instance id %s, no metrics asked for",
                self._client,
                subscription.client_instance_id,
            )
        self._settled.set()

    async def _push(self, subscription: Subscription, *, terminating: bool) -> None:
        self._move(_S.TERMINATING_PUSH_IN_PROGRESS if terminating else _S.PUSH_IN_PROGRESS)
        codec, data = self._payload(subscription)
        request = push_telemetry.PushTelemetryRequest(
            client_instance_id=subscription.client_instance_id,
            subscription_id=subscription.subscription_id,
            terminating=terminating,
            compression_type=int(codec),
            metrics=data,
        )
        answer = await self._send(request, terminating=terminating)
        if terminating or answer is None:
            return
        if answer.error_code:
            if answer.error_code == _UNSUPPORTED_COMPRESSION_TYPE:
                self._refused.add(codec)
            self._refused_by_broker(answer.error_code, subscription)
            return
        self._move(_S.PUSH_NEEDED)
        self._wait_ms = subscription.push_interval_ms

    def _payload(self, subscription: Subscription) -> tuple[Compression, bytes]:
        """The selected metrics encoded, compressed with the first accepted type that works
        here."""
        registry = self._cluster.metrics
        selected = [
            m for m in registry.measurements() if subscription.selects(telemetry_name(m.name))
        ]
        payload = encode_metrics(
            selected,
            labels=self._labels(),
            now_ns=registry.wall_clock(),
            ledger=self._ledger if subscription.delta_temporality else None,
        )
        while (codec := subscription.compression(self._refused)) is not Compression.NONE:
            try:
                return codec, compress(codec, payload)
            except RecordsError as exc:  # a codec this installation lacks: the next one
                _log.debug("%s: cannot compress metrics with %s: %s", self._client, codec, exc)
                self._refused.add(codec)
        return Compression.NONE, payload

    # --- requests and their answers -----------------------------------------------------------

    async def _send(self, request: RequestMessage[Any], *, terminating: bool = False) -> Any:
        """Send ``request``: its answer (a retriable error code raised by the cluster layer
        comes back as an answer carrying it), or ``None`` when there was none (what comes next
        is settled here)."""
        try:
            return await self._cluster.send(request, negotiate=True, retry=False)
        except BrokerError as exc:  # a retriable code, raised for the retry this does not do
            return _Refused(exc.code)
        except NoCommonVersionError as exc:
            _log.debug("%s: no metrics pushed for now: %s", self._client, exc)
            self._settled.set()  # client_instance_id() need not wait for a broker that has none
            self._failed_request(terminating)
            return None
        except (KafkawireError, OSError) as exc:
            _log.info("%s: a metrics push request failed, trying later: %s", self._client, exc)
            self._failed_request(terminating)
            return None

    def _failed_request(self, terminating: bool) -> None:
        """No answer: subscribe again after the default interval (Java's rule)."""
        if not terminating:
            self._move(_S.SUBSCRIPTION_NEEDED)
            self._wait_ms = DEFAULT_PUSH_INTERVAL_MS

    def _refused_by_broker(self, code: int, subscription: Subscription | None) -> None:
        wait = error_interval_ms(
            code, None if subscription is None else subscription.push_interval_ms
        )
        if wait == STOP:
            _log.warning(
                "%s: the broker refused the metrics push (error code %d): no more are pushed",
                self._client,
                code,
            )
            self._stop()
            return
        _log.debug(
            "%s: metrics push: error code %d, subscribing again in %d ms", self._client, code, wait
        )
        self._move(_S.SUBSCRIPTION_NEEDED)
        self._wait_ms = wait

    def _stop(self) -> None:
        self._stopped = True
        self._settled.set()

    def _move(self, new: TelemetryState) -> None:
        self.state = TELEMETRY_MOVES.check(self.state, new, f"the {self._client}'s metrics push")
