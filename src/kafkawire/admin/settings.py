"""The admin client's settings: one frozen, validated value with the Java client's option names.

Times are in milliseconds, as in Kafka's Java ``AdminClientConfig``; each option has that
client's default unless said otherwise. A bad value is refused on construction with a message
naming the option.
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from typing import TypedDict

import attrs
from attrs import validators

from kafkawire.cluster import Backoff, ClientSettings
from kafkawire.net.sasl import SaslMechanism

__all__ = ["AdminOptions", "AdminSettings"]

_positive = validators.gt(0)
_not_negative = validators.ge(0)


@attrs.frozen(kw_only=True)
class AdminSettings:
    """How an :class:`~kafkawire.admin.Admin` connects and how long its calls may take."""

    bootstrap_servers: str | Sequence[str] = attrs.field(
        validator=validators.instance_of((str, list, tuple))
    )
    """``"host:port,host:port"`` or a list of ``"host:port"``: where to find the cluster."""

    client_id: str = attrs.field(default="kafkawire-admin", validator=validators.instance_of(str))
    request_timeout_ms: int = attrs.field(default=30000, validator=_positive)
    """How long one request may wait for its answer."""

    default_api_timeout_ms: int = attrs.field(default=60000, validator=_positive)
    """How long one admin call may take in all: finding brokers, retries and backoff."""

    operation_timeout_ms: int = attrs.field(default=30000, validator=_not_negative)
    """What create and delete requests ask the broker to wait for (their ``timeout_ms``)."""

    retry_backoff_ms: int = attrs.field(default=100, validator=_not_negative)
    retry_backoff_max_ms: int = attrs.field(default=1000, validator=_positive)
    metadata_max_age_ms: int = attrs.field(default=300000, validator=_positive)
    socket_connection_setup_timeout_ms: int = attrs.field(default=10000, validator=_positive)
    ssl_context: ssl.SSLContext | None = None
    sasl: SaslMechanism | None = None

    def client_settings(self) -> ClientSettings:
        """The connection-level settings these imply."""
        return ClientSettings(
            client_id=self.client_id,
            request_timeout=self.request_timeout_ms / 1000,
            retry_timeout=self.default_api_timeout_ms / 1000,
            connect_timeout=self.socket_connection_setup_timeout_ms / 1000,
            metadata_max_age=self.metadata_max_age_ms / 1000,
            ssl=self.ssl_context,
            sasl=self.sasl,
            backoff=Backoff(
                initial=self.retry_backoff_ms / 1000,
                maximum=max(self.retry_backoff_max_ms, self.retry_backoff_ms) / 1000,
            ),
        )


class AdminOptions(TypedDict, total=False):
    """:class:`AdminSettings`' fields but ``bootstrap_servers``, as keyword arguments."""

    client_id: str
    request_timeout_ms: int
    default_api_timeout_ms: int
    operation_timeout_ms: int
    retry_backoff_ms: int
    retry_backoff_max_ms: int
    metadata_max_age_ms: int
    socket_connection_setup_timeout_ms: int
    ssl_context: ssl.SSLContext | None
    sasl: SaslMechanism | None
