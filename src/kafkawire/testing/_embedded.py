"""What both embedded brokers share: a child process with a log file, and a stop that stops.

Each embedded broker runs as a child process. Its output goes to a file in a private temporary
directory, never to a pipe nobody reads (a full pipe would block the broker), and the last
lines of that file go into the error when the broker does not come up. Stopping signals the
child's own pid (never a process name) and waits until it has been reaped, so no broker
outlives the block, or the test session, that started it.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import logging
import signal
import socket
import tempfile
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Self

from kafkawire.errors import KafkawireError

__all__ = [
    "BrokerStartError",
    "EmbeddedBroker",
    "free_loopback_port",
    "log_tail",
    "stop_process",
]

logger = logging.getLogger(__name__)


class BrokerStartError(KafkawireError):
    """An embedded broker could not be found or did not come up; the message has its log tail."""


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now.

    Another process may take it before the broker binds it; callers retry their start when the
    broker exits early for that reason.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def log_tail(path: Path, lines: int = 20) -> str:
    """The last ``lines`` lines of a log file, for error messages ('' if there is none)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


async def stop_process(
    process: asyncio.subprocess.Process,
    *,
    timeout: float = 5.0,
    signum: signal.Signals = signal.SIGTERM,
) -> None:
    """Send ``signum``, wait up to ``timeout`` seconds, then SIGKILL the process and wait again.

    Returns once the pid has been reaped. If the wait is cancelled, the process is killed
    before the cancellation propagates, so cancelling a test cannot leak a broker.
    """
    try:
        if process.returncode is None:
            _signal(process, signum)
            try:
                await asyncio.wait_for(process.wait(), timeout)
            except TimeoutError:
                logger.warning(
                    "pid %d ignored %s for %.1fs; killing it", process.pid, signum.name, timeout
                )
                _signal(process, signal.SIGKILL)
                await asyncio.wait_for(process.wait(), timeout)
    except asyncio.CancelledError:
        _signal(process, signal.SIGKILL)
        raise
    logger.debug("pid %d exited with %s", process.pid, process.returncode)


def _signal(process: asyncio.subprocess.Process, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # it exited between the check and the signal
        process.send_signal(signum)


class EmbeddedBroker(abc.ABC):
    """A broker in a child process, as an async context manager: started on entry, stopped on exit.

    ``bootstrap`` and ``pid`` are valid while it runs. Exit stops it by pid and reaps it, also
    when the block raises or is cancelled. Subclasses start the process in ``_launch``, and
    set ``stop_signal`` when their process does not stop promptly on SIGTERM.
    """

    stop_signal: ClassVar[signal.Signals] = signal.SIGTERM

    def __init__(self, *, start_timeout: float, stop_timeout: float) -> None:
        self._start_timeout = start_timeout
        self._stop_timeout = stop_timeout
        self._process: asyncio.subprocess.Process | None = None
        self._log: Path | None = None  # the running process's output
        self._bootstrap = ""
        self._logdir: tempfile.TemporaryDirectory[str] | None = None

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """How skip reasons and docs name this broker (``"Tansu 0.6.0"``)."""

    @property
    def bootstrap(self) -> str:
        """``"host:port,..."`` for clients; only loopback addresses."""
        if self._process is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        return self._bootstrap

    @property
    def pid(self) -> int:
        """The broker process's id (a ``RuntimeError`` when it is not running)."""
        if self._process is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        return self._process.pid

    async def wait_exit(self) -> str:
        """Wait until the broker's process ends by itself (this does not stop it) and say how
        it ended: its exit status and the last line of its log, in one line."""
        if self._process is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        pid, status = self._process.pid, await self._process.wait()
        last = log_tail(self._log, lines=1) if self._log is not None else ""
        return f"{self.name} pid {pid} exited with status {status}" + (
            f"; the last line of its log: {last}" if last else ""
        )

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        """Start the broker and return once it serves requests."""
        if self._process is not None:
            raise RuntimeError(f"{type(self).__name__} is already running")
        self._logdir = tempfile.TemporaryDirectory(prefix="kafkawire-broker-")
        try:
            await self._launch(Path(self._logdir.name))
        except BaseException:
            await self.stop()
            raise
        logger.info("%s pid %d serves %s", self.name, self.pid, self._bootstrap)

    @abc.abstractmethod
    async def _launch(self, logdir: Path) -> None:
        """Start the process (logging into ``logdir``) and return once it serves requests.

        Sets ``_process`` as soon as there is one, so a failure stops it, ``_log`` (where its
        output goes) and ``_bootstrap``.
        """

    async def stop(self) -> None:
        """Stop the process by its pid (closing its stdin, then ``stop_signal``, then SIGKILL).

        Returns once the pid has been reaped.
        """
        process, self._process = self._process, None
        try:
            if process is not None:
                if process.stdin is not None:
                    process.stdin.close()
                    with contextlib.suppress(OSError):
                        await process.stdin.wait_closed()
                await stop_process(process, timeout=self._stop_timeout, signum=self.stop_signal)
        finally:
            if self._logdir is not None:
                self._logdir.cleanup()
                self._logdir = None
