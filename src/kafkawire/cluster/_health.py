"""How each broker has been doing lately: failures in a row, when it may be tried again, and
what the log says of it.

Rules:

- A broker that failed (a connect that failed, a request that timed out, a connection that
  broke) is not connected to again before its backoff ends: the reconnect backoff after that
  many failures in a row (exponential with jitter, capped; Java's ``reconnect.backoff.ms`` and
  ``reconnect.backoff.max.ms``). While it is failing, one connect at a time probes it, so its
  connections for several purposes do not each try at once; once one connects, the others
  go ahead. A response from it clears the record; a successful connect does not (a broker
  that accepts and then closes every connection backs off as one that refuses).
- The log (as librdkafka, which suppresses identical connection errors for 30 s): at most
  one WARNING per broker per ``warn_interval``, naming the broker, its address and the error
  (the first failure of a run of them, unless the broker was warned of less than that ago;
  a later one says how many failures it left out); the rest DEBUG. The response that clears
  a record is an INFO where a WARNING told of its failures (else DEBUG), so a broker that
  comes and goes does not flood the log either.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Hashable
from dataclasses import dataclass, field

from .backoff import Backoff

__all__ = ["RECONNECT_BACKOFF", "WARN_INTERVAL", "BrokerHealth"]

_log = logging.getLogger(__name__)

WARN_INTERVAL = 30.0  # seconds between WARNINGs that one broker is still unreachable
RECONNECT_BACKOFF = Backoff(initial=0.05, maximum=1.0)  # Java's reconnect.backoff(.max).ms


@dataclass(slots=True)
class _Record:
    failures: int = 0
    retry_at: float = 0.0  # time.monotonic(); no connect to the broker before it
    warned: bool = False  # whether a WARNING told of this run of failures
    unwarned: int = 0  # failures logged at DEBUG since the last WARNING
    probing: asyncio.Lock = field(default_factory=asyncio.Lock)


class BrokerHealth:
    """The failure records of brokers, by any hashable key (a node id or an address)."""

    def __init__(self, backoff: Backoff, *, warn_interval: float = WARN_INTERVAL) -> None:
        self.backoff = backoff
        self._warn_interval = warn_interval
        self._records: dict[Hashable, _Record] = {}
        # Kept when a record is cleared, so that a broker that comes and goes is not warned
        # of more often either.
        self._warned_at: dict[Hashable, float] = {}

    def failed(self, key: Hashable, broker: str, error: object) -> None:
        """Record a failure of ``key`` (described as ``broker`` in the log) and log it."""
        now = time.monotonic()
        record = self._records.setdefault(key, _Record())
        record.failures += 1
        record.retry_at = now + self.backoff.after(record.failures)
        warned_at = self._warned_at.get(key)
        if warned_at is not None and now - warned_at < self._warn_interval:
            record.unwarned += 1
            _log.debug(
                "%s is still unreachable (%d failures in a row): %s",
                broker,
                record.failures,
                error,
            )
            return
        left_out = f" ({record.unwarned} more failures since the last warning)"
        if not getattr(error, "retriable", True):
            # Refused for good (credentials, a certificate): raised to the caller, not retried
            # (a later call that tries again still waits for the backoff).
            _log.warning("%s refused the connection: %s", broker, error)
        else:
            _log.warning(
                "%s is unreachable: %s; trying again with backoff of up to %.3g s%s",
                broker,
                error,
                self.backoff.maximum,
                left_out if record.unwarned else "",
            )
        self._warned_at[key] = now
        record.warned, record.unwarned = True, 0

    def answered(self, key: Hashable, broker: str) -> None:
        """``key`` answered a request: forget its failures, and say so where a WARNING told
        of them."""
        record = self._records.pop(key, None)
        if record is not None:
            _log.log(
                logging.INFO if record.warned else logging.DEBUG,
                "%s is reachable again, after %d failures",
                broker,
                record.failures,
            )

    def connected(self, key: Hashable) -> None:
        """A connect to ``key`` succeeded: other connects to it need not wait for its
        backoff; its failures count on until it answers a request."""
        record = self._records.get(key)
        if record is not None:
            record.retry_at = 0.0

    def forget(self, key: Hashable) -> None:
        """Drop the record of ``key`` without a word (its address changed)."""
        self._records.pop(key, None)

    def failures(self, key: Hashable) -> int:
        record = self._records.get(key)
        return record.failures if record is not None else 0

    def retry_at(self, key: Hashable) -> float:
        """When ``key`` may be connected to again (``time.monotonic()``; 0 when at once)."""
        record = self._records.get(key)
        return record.retry_at if record is not None else 0.0

    @contextlib.asynccontextmanager
    async def turn_to_connect(self, key: Hashable) -> AsyncIterator[None]:
        """Enter when ``key`` may be connected to: at once if it is not failing, else after
        its backoff and any other connect to it that is under way."""
        record = self._records.get(key)
        if record is None:
            yield
            return
        async with record.probing:
            # Read after the lock: the probe before this one may have pushed it back.
            wait = record.retry_at - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            yield
