"""The producer's settings: one frozen, validated value with the Java client's option names.

Every option has the Java client's default unless said otherwise; times are in milliseconds,
as there. A bad value, or two options that contradict each other, is refused on construction
with a message naming the option.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, get_args

import attrs

from kafkawire.cluster.java_settings import ConnectionOptions, ConnectionSettings
from kafkawire.cluster.validators import (
    boolean,
    function,
    integer,
    non_empty_text,
    not_negative,
    one_of,
    optional,
    optional_boolean,
    positive,
)
from kafkawire.records import Compression

from .partitioner import Partitioner

__all__ = ["CompressionType", "ProducerOptions", "ProducerSettings"]

CompressionType = Literal["none", "gzip", "snappy", "lz4", "zstd"]
Serializer = Callable[[Any], bytes | None]

_ACKS = {0: 0, 1: 1, -1: -1, "all": -1}
_ACKS_CHOICE = one_of(*_ACKS)
_MAX_IDEMPOTENT_IN_FLIGHT = 5  # what Kafka's brokers keep sequence state for, per partition
# The levels Kafka's CompressionType takes per codec, and gzip's -1 (zlib's default level).
_LEVELS = {"gzip": range(1, 10), "lz4": range(1, 18), "zstd": range(-131072, 23)}
_GZIP_DEFAULT = -1


def _acks(value: int | str) -> int:
    _ACKS_CHOICE.check("acks", value)
    return _ACKS[value]


@attrs.frozen(kw_only=True)
class ProducerSettings(ConnectionSettings):
    """How a :class:`~kafkawire.producer.Producer` batches, sends and retries (and, from
    :class:`~kafkawire.cluster.ConnectionSettings`, how it connects)."""

    acks: int = attrs.field(default=-1, converter=_acks)
    """0: no answer waited for; 1: the leader wrote it; -1 or ``"all"``: every in-sync replica."""

    linger_ms: int = attrs.field(default=5, validator=not_negative)
    """How long a batch waits for more records before it is sent (Kafka 4's default)."""

    batch_size: int = attrs.field(default=262144, validator=positive)
    """The bytes a batch may grow to before it is sent; a larger record gets a batch alone.
    256 KiB, not the Java client's 16384: each Produce request costs this client far more CPU
    than each record does, and a batch takes memory only as records fill it (no pool of
    ``batch_size`` buffers, as Java keeps), so a larger bound costs nothing until traffic fills
    it, while ``linger_ms`` still sends a slow partition's batch early. librdkafka's is about
    1 MB; docs/design.md ("The default batch size") has the measurements."""

    max_request_size: int = attrs.field(default=1048576, validator=positive)
    """The largest Produce request; a record that cannot fit is refused when sent."""

    compression_type: CompressionType = attrs.field(
        default="none", validator=one_of(*get_args(CompressionType))
    )
    compression_level: int | None = attrs.field(default=None, validator=optional(integer))
    """The codec's level (``None``: its default); Java's ``compression.<codec>.level``, in its
    range: gzip 1 to 9 (or -1), lz4 1 to 17, zstd -131072 to 22."""

    enable_idempotence: bool | None = attrs.field(default=None, validator=optional_boolean)
    """Exactly-once per partition through producer ids and sequence numbers. ``None`` (the
    default) turns it on unless ``acks`` is not all or more than 5 requests may be in flight,
    as Kafka's Java client does when the option is left unset; ``True`` with those is an
    error."""

    transactional_id: str | None = attrs.field(default=None, validator=optional(non_empty_text))
    """Enables transactions (and needs idempotence)."""

    transaction_timeout_ms: int = attrs.field(default=60000, validator=positive)
    delivery_timeout_ms: int = attrs.field(default=120000, validator=positive)
    """A record's whole time budget, from ``send`` to its delivery, retries included: past
    it the record fails, queued or in flight (as in Kafka's Java client)."""

    max_in_flight_requests_per_connection: int = attrs.field(default=5, validator=positive)
    """Produce requests in flight to one broker; each partition has one batch in flight at a
    time, so records of a partition stay in order whatever this is."""

    buffer_memory: int = attrs.field(default=33554432, validator=positive)
    """Bytes of records waiting to be sent; ``send`` waits (up to ``max_block_ms``) past it."""

    max_block_ms: int = attrs.field(default=60000, validator=not_negative)
    """How long ``send`` may wait for buffer space or for a topic's metadata (and
    ``partitions_for`` and the transaction calls for the cluster); never a bound on the
    requests the producer sends. 0: never wait (a topic not yet known fails at once)."""

    partitioner: Partitioner | None = attrs.field(default=None, validator=optional(function))
    """``partitioner(topic, key, partition_count) -> partition``; ``None``: Kafka's default
    (murmur2 of the key; sticky for records without a key)."""

    key_serializer: Serializer | None = attrs.field(default=None, validator=optional(function))
    value_serializer: Serializer | None = attrs.field(default=None, validator=optional(function))
    enable_metrics_push: bool = attrs.field(default=True, validator=boolean)
    """Push the producer's metrics to the brokers that ask for them (KIP-714), as Java's
    producer does by default; a broker without a subscription for it gets nothing."""

    def __attrs_post_init__(self) -> None:
        if self.enable_idempotence:
            if self.acks != -1:
                raise ValueError("enable_idempotence needs acks='all'")
            if self.max_in_flight_requests_per_connection > _MAX_IDEMPOTENT_IN_FLIGHT:
                raise ValueError(
                    "enable_idempotence needs max_in_flight_requests_per_connection <= 5"
                )
        if self.transactional_id is not None and not self.idempotent:
            raise ValueError("transactional_id needs idempotence (acks='all', <= 5 in flight)")
        if self.delivery_timeout_ms < self.linger_ms + self.request_timeout_ms:
            raise ValueError("delivery_timeout_ms must be at least linger_ms + request_timeout_ms")
        if self.compression_level is not None:
            self._check_level(self.compression_level)

    def _check_level(self, level: int) -> None:
        levels = _LEVELS.get(self.compression_type)
        if levels is None:
            raise ValueError(
                "compression_level is for gzip, lz4 and zstd, "
                f"not compression_type {self.compression_type!r}"
            )
        gzip = self.compression_type == "gzip"
        if level not in levels and not (gzip and level == _GZIP_DEFAULT):
            also = f" (or {_GZIP_DEFAULT})" if gzip else ""
            raise ValueError(
                f"compression_level must be {levels.start} to {levels.stop - 1}{also} "
                f"for {self.compression_type}, not {level}"
            )

    @property
    def idempotent(self) -> bool:
        """Whether idempotence is on, once ``None`` has been decided."""
        if self.enable_idempotence is not None:
            return self.enable_idempotence
        return (
            self.acks == -1
            and self.max_in_flight_requests_per_connection <= _MAX_IDEMPOTENT_IN_FLIGHT
        )

    @property
    def compression(self) -> Compression:
        """``compression_type`` as the records layer's :class:`~kafkawire.records.Compression`."""
        return Compression[self.compression_type.upper()]


class ProducerOptions(ConnectionOptions, total=False):
    """:class:`ProducerSettings`' fields but ``bootstrap_servers``, as keyword arguments."""

    acks: int | str
    linger_ms: int
    batch_size: int
    max_request_size: int
    compression_type: CompressionType
    compression_level: int | None
    enable_idempotence: bool | None
    transactional_id: str | None
    transaction_timeout_ms: int
    delivery_timeout_ms: int
    max_in_flight_requests_per_connection: int
    buffer_memory: int
    max_block_ms: int
    partitioner: Partitioner | None
    key_serializer: Serializer | None
    value_serializer: Serializer | None
    enable_metrics_push: bool
