"""The admin client's settings: one frozen, validated value with the Java client's option names.

Times are in milliseconds, as in Kafka's Java ``AdminClientConfig``; each option has that
client's default unless said otherwise. A bad value is refused on construction (by the checks
of :mod:`kafkawire.cluster.validators`) with a message naming the option.
"""

from __future__ import annotations

import attrs

from kafkawire.cluster.java_settings import ApiTimeoutOptions, ApiTimeoutSettings
from kafkawire.cluster.validators import boolean, not_negative, text

__all__ = ["AdminOptions", "AdminSettings"]


@attrs.frozen(kw_only=True)
class AdminSettings(ApiTimeoutSettings):
    """How an :class:`~kafkawire.admin.Admin` connects and how long its calls may take."""

    client_id: str = attrs.field(default="kafkawire-admin", validator=text)
    operation_timeout_ms: int = attrs.field(default=30000, validator=not_negative)
    """What create and delete requests ask the broker to wait for (their ``timeout_ms``)."""
    enable_metrics_push: bool = attrs.field(default=False, validator=boolean)
    """Push the admin client's metrics to the brokers that ask for them (KIP-714). Off by
    default, as in Java's ``AdminClientConfig`` (the producer and the consumer push by
    default)."""


class AdminOptions(ApiTimeoutOptions, total=False):
    """:class:`AdminSettings`' fields but ``bootstrap_servers``, as keyword arguments."""

    operation_timeout_ms: int
    enable_metrics_push: bool
