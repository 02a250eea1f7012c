"""The consumer's settings: one frozen, validated value with the Java client's option names.

Every option has the Java client's default unless said otherwise; times are in milliseconds,
as there. A bad value, or two options that contradict each other, is refused on construction
with a message naming the option.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, get_args

import attrs

from kafkawire.cluster.java_settings import ApiTimeoutOptions, ApiTimeoutSettings
from kafkawire.cluster.validators import (
    boolean,
    function,
    non_empty_text,
    not_negative,
    one_of,
    one_or_more,
    optional,
    positive,
)

__all__ = ["ASSIGNORS", "ConsumerOptions", "ConsumerSettings", "Deserializer"]

Deserializer = Callable[[bytes | None], Any]
AutoOffsetReset = Literal["earliest", "latest", "none"]
IsolationLevel = Literal["read_uncommitted", "read_committed"]
GroupProtocol = Literal["classic", "consumer"]

ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")
"""The partition assignors of the classic protocol, by the names they have on the wire."""

_STRATEGIES = one_or_more(one_of(*ASSIGNORS))


def _strategies(value: str | Sequence[str]) -> tuple[str, ...]:
    _STRATEGIES.check("partition_assignment_strategy", value)
    return (value,) if isinstance(value, str) else tuple(value)


@attrs.frozen(kw_only=True)
class ConsumerSettings(ApiTimeoutSettings):
    """How a :class:`~kafkawire.consumer.Consumer` fetches, joins its group and commits (and,
    from :class:`~kafkawire.cluster.java_settings.ApiTimeoutSettings`, how it connects and how
    long a call may take)."""

    group_id: str | None = attrs.field(default=None, validator=optional(non_empty_text))
    """The consumer group; ``None``: no group (manual assignment, or every partition of the
    subscribed topics), no commits."""

    group_instance_id: str | None = attrs.field(default=None, validator=optional(non_empty_text))
    """Static membership (KIP-345): a restart within the session timeout keeps the
    assignment without a rebalance."""

    group_protocol: GroupProtocol = attrs.field(
        default="classic", validator=one_of(*get_args(GroupProtocol))
    )
    """``"classic"`` (JoinGroup/SyncGroup, assignors run by the group leader) or
    ``"consumer"`` (KIP-848: ConsumerGroupHeartbeat, the broker assigns; the broker's group
    settings then decide the session timeout and heartbeat interval, and
    ``partition_assignment_strategy`` is not used)."""

    group_remote_assignor: str | None = attrs.field(
        default=None, validator=optional(non_empty_text)
    )
    """The broker-side assignor the group should use (``group_protocol="consumer"`` only),
    such as ``"uniform"`` or ``"range"`` on Kafka; ``None``: the broker's default."""

    partition_assignment_strategy: tuple[str, ...] = attrs.field(
        default=("range", "cooperative-sticky"), converter=_strategies
    )
    """The assignors this member supports, preferred first (classic protocol); the group uses
    the first one every member supports. The Java default: range, then cooperative-sticky."""

    auto_offset_reset: AutoOffsetReset = attrs.field(
        default="latest", validator=one_of(*get_args(AutoOffsetReset))
    )
    """Where to start without a committed offset, or from an offset out of range: the first
    or the next record, or ``"none"``: raise an error naming the partition."""

    enable_auto_commit: bool = attrs.field(default=True, validator=boolean)
    """Commit the consumed positions every ``auto_commit_interval_ms``, before partitions are
    revoked and on close (only with a ``group_id``). As in Kafka's Java client, the interval's
    commit is made by a poll (``getmany`` or a step of an iteration) of what earlier polls
    returned: what the application has not processed yet is not committed."""

    auto_commit_interval_ms: int = attrs.field(default=5000, validator=positive)
    isolation_level: IsolationLevel = attrs.field(
        default="read_uncommitted",
        validator=one_of(*get_args(IsolationLevel)),
    )
    """``"read_committed"``: records of aborted transactions are dropped, and nothing past the
    last stable offset is returned. Control records are never returned."""

    fetch_min_bytes: int = attrs.field(default=1, validator=positive)
    """The bytes a broker waits for (up to ``fetch_max_wait_ms``) before it answers a Fetch."""

    fetch_max_wait_ms: int = attrs.field(default=500, validator=not_negative)
    fetch_max_bytes: int = attrs.field(default=52428800, validator=positive)
    """The most one Fetch response carries (a larger first batch still comes, so the consumer
    makes progress). It also bounds the prefetch: at most one response per leader waits in
    memory while the application works."""

    max_partition_fetch_bytes: int = attrs.field(default=1048576, validator=positive)
    max_decompressed_bytes_per_fetch: int | None = attrs.field(
        default=None, validator=optional(positive)
    )
    """What the compressed batches of one Fetch response may decompress to, in all; each
    partition gets a share in proportion to its part of the response. ``None``: each
    partition may inflate to 64 times its size (at most 1 GiB; see
    :mod:`kafkawire.records.budget`), so 64 MiB with the default
    ``max_partition_fetch_bytes``. A response past the bound raises
    :class:`~kafkawire.records.DecompressionLimitError` instead of exhausting memory."""

    max_poll_records: int = attrs.field(default=500, validator=positive)
    """The most records one ``getmany`` returns unless it is given ``max_records``."""

    max_poll_interval_ms: int = attrs.field(default=300000, validator=positive)
    """The longest the application may go between ``getmany`` calls (or iterations) in a
    group; past it the member leaves the group so that its partitions move on."""

    session_timeout_ms: int = attrs.field(default=45000, validator=positive)
    """Classic protocol: how long the coordinator waits for a heartbeat before it drops the
    member (with ``group_protocol="consumer"`` the broker's group settings decide)."""

    heartbeat_interval_ms: int = attrs.field(default=3000, validator=positive)
    """Classic protocol: how often the member heartbeats (with ``group_protocol="consumer"``
    the broker names the interval in its answers)."""
    check_crcs: bool = attrs.field(default=True, validator=boolean)
    key_deserializer: Deserializer | None = attrs.field(default=None, validator=optional(function))
    """Turns a record's key bytes (or ``None``) into what the record carries; ``None``: bytes."""

    value_deserializer: Deserializer | None = attrs.field(
        default=None, validator=optional(function)
    )
    enable_metrics_push: bool = attrs.field(default=True, validator=boolean)
    """Push the consumer's metrics to the brokers that ask for them (KIP-714), as Java's
    consumer does by default; a broker without a subscription for it gets nothing."""

    def __attrs_post_init__(self) -> None:
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ValueError("heartbeat_interval_ms must be less than session_timeout_ms")
        if self.group_instance_id is not None and self.group_id is None:
            raise ValueError("group_instance_id needs a group_id")
        if self.group_remote_assignor is not None and self.group_protocol != "consumer":
            raise ValueError("group_remote_assignor needs group_protocol='consumer'")

    @property
    def read_committed(self) -> bool:
        """Whether ``isolation_level`` is ``"read_committed"``."""
        return self.isolation_level == "read_committed"


class ConsumerOptions(ApiTimeoutOptions, total=False):
    """:class:`ConsumerSettings`' fields but ``bootstrap_servers``, as keyword arguments."""

    group_id: str | None
    group_instance_id: str | None
    group_protocol: GroupProtocol
    group_remote_assignor: str | None
    partition_assignment_strategy: str | Sequence[str]
    auto_offset_reset: AutoOffsetReset
    enable_auto_commit: bool
    auto_commit_interval_ms: int
    isolation_level: IsolationLevel
    fetch_min_bytes: int
    fetch_max_wait_ms: int
    fetch_max_bytes: int
    max_partition_fetch_bytes: int
    max_decompressed_bytes_per_fetch: int | None
    max_poll_records: int
    max_poll_interval_ms: int
    session_timeout_ms: int
    heartbeat_interval_ms: int
    check_crcs: bool
    enable_metrics_push: bool
    key_deserializer: Deserializer | None
    value_deserializer: Deserializer | None
