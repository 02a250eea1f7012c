"""Warnings that repeat, logged at most once per interval for each kind.

A producer whose broker is gone fails, retries or expires thousands of batches alike; one
line per batch buries the news. Each kind of warning (a batch failing with one error, a
retry, a producer id not given) goes to WARNING once per ``interval`` seconds, saying how
many like it were held back since; those in between go to DEBUG.
"""

from __future__ import annotations

import logging
import time

__all__ = ["ThrottledLog"]


class ThrottledLog:
    """``log.warning(kind, message, *args)``: WARNING for the first of ``kind`` in each
    ``interval``, DEBUG for the rest."""

    def __init__(self, logger: logging.Logger, interval: float = 10.0) -> None:
        self._logger = logger
        self._interval = interval
        self._last: dict[str, float] = {}  # kind -> when it last went to WARNING
        self._held_back: dict[str, int] = {}

    def warning(self, kind: str, message: str, *args: object) -> None:
        now = time.monotonic()
        last = self._last.get(kind)
        if last is not None and now - last < self._interval:
            self._held_back[kind] = self._held_back.get(kind, 0) + 1
            self._logger.debug(message, *args)
            return
        self._last[kind] = now
        held_back = self._held_back.pop(kind, 0)
        if held_back:
            message += " (and %d more like it in the last %.0f s)"
            args = (*args, held_back, now - (last or now))
        self._logger.warning(message, *args)
