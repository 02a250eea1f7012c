"""GetTelemetrySubscriptions and PushTelemetry (KIP-714): the rules are
:mod:`kafkawire.testing.fake.telemetry`'s; here, what a request says of its client (the
attributes a subscription's patterns match) and the answers."""

from __future__ import annotations

from typing import Any

from kafkawire.testing.fake.build import build
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error

from .common import response_for

__all__ = ["get_subscriptions", "push"]


def _attributes(call: Call) -> dict[str, str | None]:
    """Kafka's ``ClientMetricsInstanceMetadata`` of the caller (the source port is not known
    to the fake)."""
    name, version = call.services.telemetry.software.get(
        (call.node_id, call.connection_id), (None, None)
    )
    return {
        "client_id": getattr(call.header, "client_id", None),  # header v0 has none
        "client_software_name": name,
        "client_software_version": version,
        "client_source_address": call.client_host.lstrip("/"),
    }


def _now_ms(call: Call) -> float:
    return call.state.now() * 1000


async def get_subscriptions(call: Call) -> Any:
    telemetry = call.services.telemetry
    error, instance = telemetry.get_subscriptions(
        call.node_id, call.request.client_instance_id, _attributes(call), _now_ms(call)
    )
    cls = response_for(call)
    if error is not Error.NONE:
        return build(cls, error_code=error)
    return build(
        cls,
        error_code=Error.NONE,
        client_instance_id=instance.client_instance_id,
        subscription_id=instance.subscription_id,
        accepted_compression_types=telemetry.config.client_telemetry_compression,
        push_interval_ms=instance.interval_ms,
        telemetry_max_bytes=telemetry.config.client_telemetry_max_bytes,
        delta_temporality=True,
        requested_metrics=instance.metrics,
    )


async def push(call: Call) -> Any:
    error = call.services.telemetry.push(
        call.node_id, call.request, _attributes(call), _now_ms(call)
    )
    return build(response_for(call), error_code=error)
