"""The share consumer's settings: one frozen, validated value with Kafka's Java names.

Names and defaults are those of Java's ``KafkaShareConsumer`` (``ShareConsumerConfig``) in
snake_case, times in milliseconds; what the group decides for all its members (where a new
group starts reading, the acquisition lock, the delivery limit, the heartbeat interval) is the
broker's group configuration, not the client's.
"""

from __future__ import annotations

from typing import Literal, get_args

import attrs

from kafkawire.cluster.java_settings import ApiTimeoutOptions, ApiTimeoutSettings
from kafkawire.cluster.validators import (
    boolean,
    function,
    non_empty_text,
    not_negative,
    one_of,
    optional,
    positive,
)
from kafkawire.consumer.settings import Deserializer

__all__ = [
    "AcknowledgementMode",
    "AcquireMode",
    "ShareConsumerOptions",
    "ShareConsumerSettings",
]

AcknowledgementMode = Literal["implicit", "explicit"]
AcquireMode = Literal["batch_optimized", "record_limit"]


@attrs.frozen(kw_only=True)
class ShareConsumerSettings(ApiTimeoutSettings):
    """How a :class:`~kafkawire.consumer.ShareConsumer` reads and acknowledges (and, from
    :class:`~kafkawire.cluster.java_settings.ApiTimeoutSettings`, how it connects and how long
    a call may take)."""

    group_id: str = attrs.field(validator=non_empty_text)
    """The share group (required)."""

    share_acknowledgement_mode: AcknowledgementMode = attrs.field(
        default="implicit", validator=one_of(*get_args(AcknowledgementMode))
    )
    """``"implicit"``: each ``getmany`` (and ``commit``) accepts every record the one before
    it returned. ``"explicit"``: the application acknowledges each record
    (``acknowledge(record, type)``) before its next ``getmany``."""

    share_acquire_mode: AcquireMode = attrs.field(
        default="batch_optimized", validator=one_of(*get_args(AcquireMode))
    )
    """``"batch_optimized"``: the broker hands out whole batches (a fetch may acquire more
    than ``max_poll_records``) and the consumer fetches ahead. ``"record_limit"``: at most
    ``max_poll_records`` records are acquired at a time and nothing is fetched ahead (locks
    start when the application asks); it needs ShareFetch v2 (Kafka 4.2), older brokers
    acquire as in batch mode."""

    max_poll_records: int = attrs.field(default=500, validator=positive)
    """The most records one ``getmany`` returns, and the records one fetch asks for."""

    fetch_min_bytes: int = attrs.field(default=1, validator=positive)
    fetch_max_wait_ms: int = attrs.field(default=500, validator=not_negative)
    fetch_max_bytes: int = attrs.field(default=52428800, validator=positive)
    client_rack: str | None = attrs.field(default=None, validator=optional(non_empty_text))
    """The rack this member runs in, for rack-aware assignors (sent when it joins)."""

    check_crcs: bool = attrs.field(default=True, validator=boolean)
    key_deserializer: Deserializer | None = attrs.field(default=None, validator=optional(function))
    """Turns a record's key bytes (or ``None``) into what the record carries; ``None``: bytes.
    A deserializer that raises releases the record (it is delivered again, counted) and the
    next ``getmany`` raises the error: a record is never accepted unread."""

    value_deserializer: Deserializer | None = attrs.field(
        default=None, validator=optional(function)
    )
    enable_metrics_push: bool = attrs.field(default=True, validator=boolean)
    """Push the share consumer's metrics to the brokers that ask for them (KIP-714), as Java's
    share consumer does by default; a broker without a subscription for it gets nothing."""

    @property
    def explicit(self) -> bool:
        """Whether ``share_acknowledgement_mode`` is ``"explicit"``."""
        return self.share_acknowledgement_mode == "explicit"


class ShareConsumerOptions(ApiTimeoutOptions, total=False):
    """:class:`ShareConsumerSettings`' fields but ``bootstrap_servers``, as keyword arguments
    (``group_id`` is required: building the settings without it names it)."""

    group_id: str
    share_acknowledgement_mode: AcknowledgementMode
    share_acquire_mode: AcquireMode
    max_poll_records: int
    fetch_min_bytes: int
    fetch_max_wait_ms: int
    fetch_max_bytes: int
    client_rack: str | None
    check_crcs: bool
    key_deserializer: Deserializer | None
    value_deserializer: Deserializer | None
    enable_metrics_push: bool
