"""The helper process that holds librdkafka's mock cluster (run by ``MockCluster``, not imported).

librdkafka starts a mock cluster inside any client created with ``test.mock.num.brokers``; it
lives as long as that client, and says where it listens only in a log line ("Mock cluster
enabled: ... replaced with HOST:PORT,HOST:PORT,..."). This process creates such a client, catches
that line through a Python logger, prints one JSON line ``{"bootstrap": ..., "librdkafka": ...}``
to stdout, and then serves the client until stdin closes (the parent exited or let go) or
SIGTERM arrives. Diagnostics go to stderr, which the parent sends to a log file.
"""

from __future__ import annotations

import json
import logging
import re
import signal
import sys
import threading
import time
from types import FrameType

_BOOTSTRAP_LINE = re.compile(r"Mock cluster enabled.*replaced with (\S+)")
_FIND_TIMEOUT = 10.0
_POLL_INTERVAL = 0.1


logger = logging.getLogger("kafkawire.testing.mock_cluster.child")


class _CatchBootstrap(logging.Handler):
    """Keeps the address list from librdkafka's "Mock cluster enabled" line."""

    def __init__(self) -> None:
        super().__init__()
        self.bootstrap: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        match = _BOOTSTRAP_LINE.search(record.getMessage())
        if match:
            self.bootstrap = match.group(1).rstrip(",")


def _wait_for_stdin_eof(stop: threading.Event) -> None:
    sys.stdin.buffer.read()
    stop.set()


def main(brokers: int) -> int:
    from confluent_kafka import Producer, libversion

    # Diagnostics (librdkafka's log included, as it propagates) go to stderr: the parent's log file.
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    stop = threading.Event()

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_sigterm)
    threading.Thread(target=_wait_for_stdin_eof, args=(stop,), daemon=True).start()

    catcher = _CatchBootstrap()
    mock_logger = logging.getLogger("librdkafka-mock")
    mock_logger.addHandler(catcher)
    mock_logger.setLevel(logging.INFO)
    client = Producer(
        {"test.mock.num.brokers": brokers, "bootstrap.servers": "unused:1"}, logger=mock_logger
    )
    deadline = time.monotonic() + _FIND_TIMEOUT
    while catcher.bootstrap is None and not stop.is_set():
        if time.monotonic() > deadline:
            logger.error("no mock cluster log line within %ss", _FIND_TIMEOUT)
            return 1
        client.poll(_POLL_INTERVAL)
    if catcher.bootstrap is None:
        return 1
    ready = {"bootstrap": catcher.bootstrap, "librdkafka": libversion()[0]}
    sys.stdout.write(json.dumps(ready) + "\n")
    sys.stdout.flush()
    while not stop.is_set():
        client.poll(_POLL_INTERVAL)  # serves librdkafka's log queue; the brokers run on threads
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
