"""What every client with the Java client's option names shares: how it connects.

:class:`ConnectionSettings` is the base of the producer's, the consumer's and the admin
client's settings (frozen attrs classes; times in milliseconds, as in Kafka's Java
``CommonClientConfigs``), and :meth:`ConnectionSettings.client_settings` turns them into the
cluster layer's :class:`~kafkawire.cluster.ClientSettings`. :func:`build_settings` is how each
client builds its settings from the keyword arguments a user gave it.
"""

from __future__ import annotations

import ssl
import typing
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict, TypeVar

import attrs
from attrs import validators

from kafkawire.net.sasl import SaslMechanism

from ._search import RecoveryStrategy
from .backoff import Backoff
from .settings import ClientSettings, settings_from

__all__ = ["ConnectionOptions", "ConnectionSettings", "build_settings"]

positive = validators.gt(0)
not_negative = validators.ge(0)


@attrs.frozen(kw_only=True)
class ConnectionSettings:
    """The options of how a client reaches the cluster, with the Java client's defaults."""

    bootstrap_servers: str | Sequence[str] = attrs.field(
        validator=validators.instance_of((str, list, tuple))
    )
    """``"host:port,host:port"`` or a list of ``"host:port"``: where to find the cluster."""

    client_id: str = attrs.field(default="kafkawire", validator=validators.instance_of(str))
    request_timeout_ms: int = attrs.field(default=30000, validator=positive)
    """How long one request may wait for its answer."""

    retry_backoff_ms: int = attrs.field(default=100, validator=not_negative)
    retry_backoff_max_ms: int = attrs.field(default=1000, validator=positive)
    metadata_max_age_ms: int = attrs.field(default=300000, validator=positive)
    socket_connection_setup_timeout_ms: int = attrs.field(default=10000, validator=positive)
    reconnect_backoff_ms: int = attrs.field(default=50, validator=not_negative)
    reconnect_backoff_max_ms: int = attrs.field(default=1000, validator=not_negative)
    metadata_recovery_strategy: RecoveryStrategy = attrs.field(
        default="rebootstrap", validator=validators.in_(typing.get_args(RecoveryStrategy))
    )
    metadata_recovery_rebootstrap_trigger_ms: int = attrs.field(
        default=300000, validator=not_negative
    )
    ssl_context: ssl.SSLContext | None = None
    sasl: SaslMechanism | None = None

    def client_settings(self, *, call_timeout_ms: int) -> ClientSettings:
        """The cluster layer's settings, one call bounded by ``call_timeout_ms``."""
        return ClientSettings(
            client_id=self.client_id,
            request_timeout=self.request_timeout_ms / 1000,
            retry_timeout=call_timeout_ms / 1000,
            connect_timeout=self.socket_connection_setup_timeout_ms / 1000,
            metadata_max_age=self.metadata_max_age_ms / 1000,
            ssl=self.ssl_context,
            sasl=self.sasl,
            backoff=Backoff(
                initial=self.retry_backoff_ms / 1000,
                maximum=max(self.retry_backoff_max_ms, self.retry_backoff_ms) / 1000,
            ),
            reconnect_backoff=Backoff(
                initial=self.reconnect_backoff_ms / 1000,
                maximum=max(self.reconnect_backoff_max_ms, self.reconnect_backoff_ms) / 1000,
            ),
            metadata_recovery_strategy=self.metadata_recovery_strategy,
            metadata_recovery_rebootstrap_trigger=self.metadata_recovery_rebootstrap_trigger_ms
            / 1000,
        )


class ConnectionOptions(TypedDict, total=False):
    """:class:`ConnectionSettings`' fields but ``bootstrap_servers``, as keyword arguments."""

    client_id: str
    request_timeout_ms: int
    retry_backoff_ms: int
    retry_backoff_max_ms: int
    metadata_max_age_ms: int
    socket_connection_setup_timeout_ms: int
    reconnect_backoff_ms: int
    reconnect_backoff_max_ms: int
    metadata_recovery_strategy: RecoveryStrategy
    metadata_recovery_rebootstrap_trigger_ms: int
    ssl_context: ssl.SSLContext | None
    sasl: SaslMechanism | None


S = TypeVar("S", bound=ConnectionSettings)


def build_settings(
    cls: type[S],
    caller: str,
    bootstrap_servers: str | Sequence[str] | None,
    settings: S | None,
    options: Mapping[str, Any],
) -> S:
    """A client's settings: ``settings`` as given, or built from ``bootstrap_servers`` and the
    keyword ``options`` (a ``TypeError`` names ``caller`` for a missing, unknown or doubled
    one)."""
    if settings is not None:
        if bootstrap_servers is not None or options:
            raise TypeError(f"{caller}() takes settings or options, not both")
        return settings
    if bootstrap_servers is None:
        raise TypeError(f"{caller}() needs bootstrap_servers (or settings)")
    return settings_from(cls, caller, {"bootstrap_servers": bootstrap_servers, **options})
