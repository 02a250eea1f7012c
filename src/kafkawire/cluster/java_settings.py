"""What every client with the Java client's option names shares: how it connects.

:class:`ConnectionSettings` is the base of every client's settings (``KafkaClient``'s, the
producer's, the consumer's and the admin client's: frozen attrs classes; times in
milliseconds, as in Kafka's Java ``CommonClientConfigs``), and
:meth:`ConnectionSettings.client_settings` turns them into the cluster layer's internal
:class:`~kafkawire.cluster.ClientSettings`. :class:`ApiTimeoutSettings` adds
``default_api_timeout_ms``, the bound on a call of all but the producer (the producer
bounds its calls by ``max_block_ms``, as in Java). :func:`build_settings` is how each client
builds its settings from the keyword arguments a user gave it.

Each ``...Options`` TypedDict repeats its settings class's fields as keyword arguments, for
``Producer(bootstrap, linger_ms=5)``: mypy types ``**options: Unpack[...]`` only from a TypedDict
written out, and its attrs plugin checks a class only from fields written out, so neither can
be derived from the other. tests/test_settings_options.py holds each pair equal, names and types
(a converter's option takes what the converter takes), so the copy cannot drift.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import attrs

from kafkawire.metrics import Metrics

from ._search import RecoveryStrategy
from .backoff import Backoff
from .security import SecurityOptions, SecuritySettings
from .settings import ClientSettings, settings_from
from .validators import (
    Check,
    not_negative,
    one_of,
    one_or_more,
    positive,
    text,
)

__all__ = [
    "ApiTimeoutOptions",
    "ApiTimeoutSettings",
    "ConnectionOptions",
    "ConnectionSettings",
    "build_settings",
]

_BOOTSTRAP_SERVERS = one_or_more(Check("a 'host:port' str", text.of_type))


@attrs.frozen(kw_only=True)
class ConnectionSettings(SecuritySettings):
    """The options of how a client reaches the cluster, with the Java client's defaults (TLS
    and SASL: :class:`~kafkawire.cluster.security.SecuritySettings`)."""

    bootstrap_servers: str | Sequence[str] = attrs.field(validator=_BOOTSTRAP_SERVERS)
    """``"host:port,host:port"`` or a list of ``"host:port"``: where to find the cluster."""

    client_id: str = attrs.field(default="kafkawire", validator=text)
    request_timeout_ms: int = attrs.field(default=30000, validator=positive)
    """How long one request may wait for its answer."""

    retry_backoff_ms: int = attrs.field(default=100, validator=not_negative)
    retry_backoff_max_ms: int = attrs.field(default=1000, validator=positive)
    metadata_max_age_ms: int = attrs.field(default=300000, validator=positive)
    socket_connection_setup_timeout_ms: int = attrs.field(default=10000, validator=positive)
    reconnect_backoff_ms: int = attrs.field(default=50, validator=not_negative)
    reconnect_backoff_max_ms: int = attrs.field(default=1000, validator=not_negative)
    metadata_recovery_strategy: RecoveryStrategy = attrs.field(
        default="rebootstrap", validator=one_of(*typing.get_args(RecoveryStrategy))
    )
    metadata_recovery_rebootstrap_trigger_ms: int = attrs.field(
        default=300000, validator=not_negative
    )
    metrics_sample_window_ms: int = attrs.field(default=30000, validator=positive)
    """The window of a metric's samples: rates and averages in ``metrics()`` cover up to
    ``metrics_num_samples`` such windows (Java's ``metrics.sample.window.ms``)."""

    metrics_num_samples: int = attrs.field(default=2, validator=positive)
    """How many sample windows a rate or an average covers (Java's ``metrics.num.samples``)."""

    def metrics_registry(self) -> Metrics:
        """A new metrics registry with these sample windows, for the client's own."""
        return Metrics(
            sample_window_ms=self.metrics_sample_window_ms, num_samples=self.metrics_num_samples
        )

    def client_settings(self, *, call_timeout_ms: int) -> ClientSettings:
        """The cluster layer's settings, one call bounded by ``call_timeout_ms``."""
        tls, sasl = self.security()
        return ClientSettings(
            client_id=self.client_id,
            request_timeout=self.request_timeout_ms / 1000,
            retry_timeout=call_timeout_ms / 1000,
            connect_timeout=self.socket_connection_setup_timeout_ms / 1000,
            metadata_max_age=self.metadata_max_age_ms / 1000,
            ssl=tls,
            sasl=sasl,
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


class ConnectionOptions(SecurityOptions, total=False):
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
    metrics_sample_window_ms: int
    metrics_num_samples: int


@attrs.frozen(kw_only=True)
class ApiTimeoutSettings(ConnectionSettings):
    """:class:`ConnectionSettings` and how long a call may take in all (Java's
    ``default.api.timeout.ms``): the base of the consumer's and the admin client's settings."""

    default_api_timeout_ms: int = attrs.field(default=60000, validator=positive)
    """How long one call (such as the consumer's ``committed`` or ``end_offsets``, or any admin
    call) may take in all: finding brokers, retries and their backoff included."""


class ApiTimeoutOptions(ConnectionOptions, total=False):
    """:class:`ApiTimeoutSettings`' fields but ``bootstrap_servers``, as keyword arguments."""

    default_api_timeout_ms: int


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
