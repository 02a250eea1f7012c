"""librdkafka's mock cluster, from the confluent-kafka wheel, as a second broker for tests.

It is three brokers on loopback ports, inside one librdkafka client, so partition leaders
spread over several nodes (multi-broker routing) and it speaks KIP-848 (ConsumerGroupHeartbeat),
share groups (KIP-932: ShareGroupHeartbeat, ShareFetch, ShareAcknowledge v1) and the
transaction APIs, which the embedded Tansu lacks or gets wrong. It does not serve CreateTopics
(topics are auto-created) and answers ApiVersions only up to v2.

The cluster lives as long as the client that created it, so it runs in a helper process
(``_mock_child``) that this context manager starts and stops by pid::

    async with MockCluster(share_auto_offset_reset="earliest") as cluster:
        cluster.bootstrap  # "127.0.0.1:PORT,127.0.0.1:PORT,127.0.0.1:PORT"
        await cluster.configure_share_groups(record_lock_duration_ms=2000)
        await cluster.configure_telemetry(["org.apache.kafka."], push_interval_ms=100)

Share groups on the mock start at the latest offset unless ``share_auto_offset_reset`` says
``"earliest"`` (Kafka's ``share.auto.offset.reset`` group config, which the mock has no
IncrementalAlterConfigs to set); its settings apply to every share group of the cluster.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from kafkawire.cluster import TopicPartition

from . import raw
from ._embedded import BrokerStartError, EmbeddedBroker, log_tail

__all__ = ["MockCluster"]

_CHILD = Path(__file__).with_name("_mock_child.py")
_OFFSET_RESETS = {"latest": 0, "earliest": 1}


def _share_settings(
    *,
    auto_offset_reset: Literal["latest", "earliest"] | None = None,
    record_lock_duration_ms: int | None = None,
    heartbeat_interval_ms: int | None = None,
    session_timeout_ms: int | None = None,
    max_delivery_attempts: int | None = None,
) -> dict[str, int]:
    """The helper's names and values for the share-group settings given (``None``: left)."""
    settings = {
        "record_lock_duration": record_lock_duration_ms,
        "heartbeat_interval": heartbeat_interval_ms,
        "session_timeout": session_timeout_ms,
        "max_delivery_attempts": max_delivery_attempts,
    }
    if auto_offset_reset is not None:
        if auto_offset_reset not in _OFFSET_RESETS:
            raise ValueError(
                f"auto_offset_reset must be 'latest' or 'earliest', not {auto_offset_reset!r}"
            )
        settings["auto_offset_reset"] = _OFFSET_RESETS[auto_offset_reset]
    return {name: value for name, value in settings.items() if value is not None}


class MockCluster(EmbeddedBroker):
    """An async context manager running a librdkafka mock cluster for the duration of its block.

    ``bootstrap`` lists every mock broker; ``pid`` is the helper process. The helper is stopped
    by pid and reaped on exit, also when the block raises; it also exits by itself when its
    stdin closes, so it does not outlive a parent that was killed. The ``share_*`` options set
    the mock's share-group defaults before any client connects (see
    :meth:`configure_share_groups`).
    """

    def __init__(
        self,
        *,
        brokers: int = 3,
        start_timeout: float = 15.0,
        stop_timeout: float = 5.0,
        share_auto_offset_reset: Literal["latest", "earliest"] | None = None,
        share_record_lock_duration_ms: int | None = None,
        share_heartbeat_interval_ms: int | None = None,
        share_session_timeout_ms: int | None = None,
    ) -> None:
        super().__init__(start_timeout=start_timeout, stop_timeout=stop_timeout)
        self._brokers = brokers
        self._share = _share_settings(
            auto_offset_reset=share_auto_offset_reset,
            record_lock_duration_ms=share_record_lock_duration_ms,
            heartbeat_interval_ms=share_heartbeat_interval_ms,
            session_timeout_ms=share_session_timeout_ms,
        )
        self._commands = asyncio.Lock()
        self.librdkafka_version = ""

    @property
    def name(self) -> str:
        """``librdkafka <version> mock cluster``."""
        return f"librdkafka {self.librdkafka_version} mock cluster"

    async def _launch(self, logdir: Path) -> None:
        if importlib.util.find_spec("confluent_kafka") is None:
            raise BrokerStartError("the mock cluster comes with confluent-kafka: pip install it")
        self._log = log = logdir / "mock-cluster.log"
        with log.open("wb") as err:
            self._process = process = await asyncio.create_subprocess_exec(
                sys.executable,
                str(_CHILD),
                str(self._brokers),
                json.dumps(self._share),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
            )
        ready = await self._read_ready(process, log)
        raw.parse_bootstrap(ready["bootstrap"])  # refuses anything but loopback
        self._bootstrap = ready["bootstrap"]
        self.librdkafka_version = ready["librdkafka"]

    async def _read_ready(self, process: asyncio.subprocess.Process, log: Path) -> dict[str, str]:
        """The helper's one JSON line: ``{"bootstrap": "host:port,...", "librdkafka": "2.x"}``."""
        assert process.stdout is not None
        try:
            line = await asyncio.wait_for(process.stdout.readline(), self._start_timeout)
            ready: dict[str, str] = json.loads(line)
        except (TimeoutError, ValueError):
            raise BrokerStartError(
                f"the mock cluster helper (pid {process.pid}) did not report its address"
                f" (waited up to {self._start_timeout}s); log:\n{log_tail(log)}"
            ) from None
        return ready

    # --- share groups (the mock's C API, through the helper) ----------------------------------

    async def configure_share_groups(
        self,
        *,
        auto_offset_reset: Literal["latest", "earliest"] | None = None,
        record_lock_duration_ms: int | None = None,
        heartbeat_interval_ms: int | None = None,
        session_timeout_ms: int | None = None,
        max_delivery_attempts: int | None = None,
    ) -> None:
        """Set the mock's share-group settings: the lock and delivery limit for every group
        now, the rest for groups created from now on (the mock reads them at a group's
        creation)."""
        settings = _share_settings(
            auto_offset_reset=auto_offset_reset,
            record_lock_duration_ms=record_lock_duration_ms,
            heartbeat_interval_ms=heartbeat_interval_ms,
            session_timeout_ms=session_timeout_ms,
            max_delivery_attempts=max_delivery_attempts,
        )
        await self._command({"op": "share_settings", "settings": settings})

    async def share_group_members(self, group_id: str) -> list[str]:
        """The member ids of share group ``group_id``, as the mock holds them."""
        reply = await self._command({"op": "share_members", "group": group_id})
        members: list[str] = reply["members"]
        return members

    async def assign_share_group(
        self, group_id: str, assignment: Mapping[str, Iterable[TopicPartition]]
    ) -> None:
        """Give each member (by id) the partitions named, from now on (the mock's assignor
        stops for that group; a partition may go to several members, as Kafka's does)."""
        wanted = {member: [list(tp) for tp in tps] for member, tps in assignment.items()}
        await self._command({"op": "share_assign", "group": group_id, "assignment": wanted})

    # --- client metrics (KIP-714) and the requests received -----------------------------------

    async def configure_telemetry(self, metrics: Iterable[str], push_interval_ms: int) -> None:
        """Make the mock's GetTelemetrySubscriptions ask clients for ``metrics`` (name
        prefixes; ``"*"``: all) every ``push_interval_ms`` (by default it asks for none)."""
        wanted = {"op": "telemetry", "metrics": list(metrics), "push_interval_ms": push_interval_ms}
        await self._command(wanted)

    async def pushed_metric_names(self) -> set[str]:
        """The metric names the mock's own OTLP decoder read from the pushes so far."""
        names: list[str] = (await self._command({"op": "pushed_metrics"}))["names"]
        return set(names)

    async def track_requests(self) -> None:
        """Keep the API key of every request from now on (for :meth:`received_api_keys`)."""
        await self._command({"op": "track_requests"})

    async def received_api_keys(self) -> list[int]:
        """The API keys of the requests received since :meth:`track_requests`, in order."""
        keys: list[int] = (await self._command({"op": "requests"}))["api_keys"]
        return keys

    async def _command(self, command: dict[str, Any]) -> dict[str, Any]:
        process = self._process
        if process is None or process.stdin is None or process.stdout is None:
            raise RuntimeError("MockCluster is not running")
        async with self._commands:
            process.stdin.write(json.dumps(command).encode() + b"\n")
            await process.stdin.drain()
            reply: dict[str, Any] = json.loads(await process.stdout.readline() or b"{}")
        if not reply.get("ok"):
            raise RuntimeError(f"the mock cluster refused {command['op']}: {reply.get('error')}")
        return reply
