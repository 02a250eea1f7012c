"""Exponential backoff with jitter, bounded by a deadline."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Backoff"]


@dataclass(frozen=True, slots=True)
class Backoff:
    """Delays of ``initial * multiplier**n`` capped at ``maximum``, each scaled by a random
    factor in ``[1 - jitter, 1 + jitter]`` so that many clients retrying together spread out."""

    initial: float = 0.1
    maximum: float = 2.0
    multiplier: float = 2.0
    jitter: float = 0.2

    def delays(self, deadline: float) -> Iterator[float]:
        """Delays until ``deadline`` (a ``time.monotonic()`` value); the last is cut to fit."""
        delay = self.initial
        while (left := deadline - time.monotonic()) > 0:
            yield min(left, delay * random.uniform(1 - self.jitter, 1 + self.jitter))
            delay = min(delay * self.multiplier, self.maximum)
