"""A telemetry subscription as a broker answered it, read by Java's rules
(``ClientTelemetryUtils``), and what a broker's error code means for the next request.

- Requested metrics: none (an empty list) means push nothing and ask again after the push
  interval; ``["*"]`` every metric; otherwise each entry is a prefix of the names pushed.
- A push interval of 0 or less is taken as the default, 5 minutes.
- Compression: the first type the broker accepts (it lists them by preference) that kafkawire
  knows and the broker has not refused, else none.
- Errors (``maybeFetchErrorIntervalMs``): INVALID_REQUEST, INVALID_RECORD, UNSUPPORTED_VERSION
  and codes it does not expect stop the push for good; UNKNOWN_SUBSCRIPTION_ID and
  UNSUPPORTED_COMPRESSION_TYPE ask for a subscription again at once; TELEMETRY_TOO_LARGE and
  THROTTLING_QUOTA_EXCEEDED after the push interval.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass

from kafkawire.records import Compression

__all__ = ["DEFAULT_PUSH_INTERVAL_MS", "STOP", "Subscription", "error_interval_ms"]

DEFAULT_PUSH_INTERVAL_MS = 5 * 60 * 1000  # Java's ClientTelemetryReporter.DEFAULT_PUSH_INTERVAL_MS
ALL_METRICS = "*"
STOP = -1
"""An error's interval meaning: push no more."""

_AT_ONCE = {117, 76}  # UNKNOWN_SUBSCRIPTION_ID, UNSUPPORTED_COMPRESSION_TYPE
_AFTER_INTERVAL = {118, 89}  # TELEMETRY_TOO_LARGE, THROTTLING_QUOTA_EXCEEDED


@dataclass(frozen=True, slots=True)
class Subscription:
    client_instance_id: uuid.UUID
    subscription_id: int
    push_interval_ms: int
    accepted_compression: tuple[Compression, ...]
    delta_temporality: bool
    requested: tuple[str, ...]
    telemetry_max_bytes: int

    @classmethod
    def of(cls, response: object) -> Subscription:
        """The subscription a GetTelemetrySubscriptions response gives."""
        interval = int(getattr(response, "push_interval_ms", 0))
        known = {c.value for c in Compression}
        return cls(
            client_instance_id=getattr(response, "client_instance_id", uuid.UUID(int=0)),
            subscription_id=int(getattr(response, "subscription_id", 0)),
            push_interval_ms=interval if interval > 0 else DEFAULT_PUSH_INTERVAL_MS,
            accepted_compression=tuple(
                Compression(c)
                for c in getattr(response, "accepted_compression_types", ())
                if c in known
            ),
            delta_temporality=bool(getattr(response, "delta_temporality", False)),
            requested=tuple(getattr(response, "requested_metrics", ())),
            telemetry_max_bytes=int(getattr(response, "telemetry_max_bytes", 0)),
        )

    @property
    def wants_metrics(self) -> bool:
        return bool(self.requested)

    def selects(self, name: str) -> bool:
        """Whether the metric called ``name`` (KIP-714's name) is to be pushed."""
        if self.requested == (ALL_METRICS,):
            return True
        return any(name.startswith(prefix) for prefix in self.requested)

    def compression(self, refused: Collection[Compression] = ()) -> Compression:
        """The first accepted type not ``refused``; none when there is none."""
        return next((c for c in self.accepted_compression if c not in refused), Compression.NONE)


def error_interval_ms(code: int, interval_ms: int | None) -> int:
    """The wait before subscribing again after error ``code`` (``interval_ms``: the current
    subscription's push interval, if any), or :data:`STOP`."""
    if code in _AT_ONCE:
        return 0
    if code in _AFTER_INTERVAL:
        return interval_ms if interval_ms is not None else DEFAULT_PUSH_INTERVAL_MS
    return STOP
