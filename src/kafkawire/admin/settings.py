"""The admin client's settings: one frozen, validated value with the Java client's option names.

Times are in milliseconds, as in Kafka's Java ``AdminClientConfig``; each option has that
client's default unless said otherwise. A bad value is refused on construction with a message
naming the option.
"""

from __future__ import annotations

import attrs
from attrs import validators

from kafkawire.cluster.java_settings import ConnectionOptions, ConnectionSettings

__all__ = ["AdminOptions", "AdminSettings"]

_positive = validators.gt(0)
_not_negative = validators.ge(0)


@attrs.frozen(kw_only=True)
class AdminSettings(ConnectionSettings):
    """How an :class:`~kafkawire.admin.Admin` connects and how long its calls may take."""

    client_id: str = attrs.field(default="kafkawire-admin", validator=validators.instance_of(str))
    default_api_timeout_ms: int = attrs.field(default=60000, validator=_positive)
    """How long one admin call may take in all: finding brokers, retries and backoff."""

    operation_timeout_ms: int = attrs.field(default=30000, validator=_not_negative)
    """What create and delete requests ask the broker to wait for (their ``timeout_ms``)."""


class AdminOptions(ConnectionOptions, total=False):
    """:class:`AdminSettings`' fields but ``bootstrap_servers``, as keyword arguments."""

    default_api_timeout_ms: int
    operation_timeout_ms: int
