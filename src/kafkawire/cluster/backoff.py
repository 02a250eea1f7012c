"""Exponential backoff with jitter: delays for a deadline, or the delay after n failures."""

from __future__ import annotations

import math
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

    def after(self, failures: int) -> float:
        """The delay after ``failures`` failures in a row (1 for the first).

        As Java's ``ExponentialBackoff``: the exponent stops growing where the delay reaches
        ``maximum`` (so no count of failures overflows), the jitter applies there too, and
        the result never exceeds ``maximum``.
        """
        exponent = float(max(failures - 1, 0))
        if self.initial <= 0 or self.multiplier <= 1 or self.maximum <= self.initial:
            exponent = 0.0
        else:
            exponent = min(exponent, math.log(self.maximum / self.initial, self.multiplier))
        term = self.initial * math.pow(self.multiplier, exponent)
        return min(self.maximum, term * random.uniform(1 - self.jitter, 1 + self.jitter))
