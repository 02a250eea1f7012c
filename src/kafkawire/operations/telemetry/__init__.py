"""KIP-714: a client's metrics pushed to the brokers (GetTelemetrySubscriptions, PushTelemetry).

:mod:`.reporter` (the background task, after Java's ``ClientTelemetryReporter``), with
:mod:`.state` (its states and their moves), :mod:`.subscription` (what a broker's answer and
its error codes mean), :mod:`.naming` (KIP-714's metric names) and :mod:`.payload` (the OTLP
``MetricsData``). The clients that push (producer, consumer, admin) each own one reporter.
"""

from .naming import telemetry_name
from .payload import encode_metrics
from .reporter import TelemetryReporter
from .state import TELEMETRY_MOVES, TelemetryState
from .subscription import Subscription

__all__ = [
    "TELEMETRY_MOVES",
    "Subscription",
    "TelemetryReporter",
    "TelemetryState",
    "encode_metrics",
    "telemetry_name",
]
