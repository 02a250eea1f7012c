"""librdkafka's mock cluster, from the confluent-kafka wheel, as a second broker for tests.

It is three brokers on loopback ports, inside one librdkafka client, so partition leaders
spread over several nodes (multi-broker routing) and it speaks KIP-848 (ConsumerGroupHeartbeat)
and the transaction APIs, which the embedded Tansu lacks or gets wrong. It does not serve
CreateTopics (topics are auto-created) and answers ApiVersions only up to v2.

The cluster lives as long as the client that created it, so it runs in a helper process
(``_mock_child``) that this context manager starts and stops by pid::

    async with MockCluster() as cluster:
        cluster.bootstrap  # "127.0.0.1:PORT,127.0.0.1:PORT,127.0.0.1:PORT"
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path

from . import raw
from ._embedded import BrokerStartError, EmbeddedBroker, log_tail

__all__ = ["MockCluster"]

_CHILD = Path(__file__).with_name("_mock_child.py")


class MockCluster(EmbeddedBroker):
    """An async context manager running a librdkafka mock cluster for the duration of its block.

    ``bootstrap`` lists every mock broker; ``pid`` is the helper process. The helper is stopped
    by pid and reaped on exit, also when the block raises; it also exits by itself when its
    stdin closes, so it does not outlive a parent that was killed.
    """

    def __init__(
        self, *, brokers: int = 3, start_timeout: float = 15.0, stop_timeout: float = 5.0
    ) -> None:
        super().__init__(start_timeout=start_timeout, stop_timeout=stop_timeout)
        self._brokers = brokers
        self.librdkafka_version = ""

    @property
    def name(self) -> str:
        return f"librdkafka {self.librdkafka_version} mock cluster"

    async def _launch(self, logdir: Path) -> None:
        if importlib.util.find_spec("confluent_kafka") is None:
            raise BrokerStartError("the mock cluster comes with confluent-kafka: pip install it")
        log = logdir / "mock-cluster.log"
        with log.open("wb") as err:
            self._process = process = await asyncio.create_subprocess_exec(
                sys.executable,
                str(_CHILD),
                str(self._brokers),
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
