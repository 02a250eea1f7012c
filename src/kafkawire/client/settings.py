"""The low-level client's settings: one frozen, validated value with the Java client's names.

Times are in milliseconds, as for the producer, the consumer and the admin client:
:class:`KafkaClientSettings` is built on the same
:class:`~kafkawire.cluster.java_settings.ApiTimeoutSettings` (how a client connects, and
``default_api_timeout_ms``, Java's bound on one call of the ``AdminClient`` and the consumer),
with the defaults of Kafka's Java client. :meth:`KafkaClientSettings.cluster_settings` turns
it into the cluster layer's :class:`~kafkawire.cluster.ClientSettings` (seconds), which no
user writes. A bad value is refused on construction, naming the option.

:class:`KafkaClientOptions` is the same set as keyword arguments (see
:mod:`kafkawire.cluster.java_settings` for why it is written out; a test holds the two equal).
"""

from __future__ import annotations

import attrs

from kafkawire.cluster import ClientSettings
from kafkawire.cluster.java_settings import ApiTimeoutOptions, ApiTimeoutSettings
from kafkawire.cluster.validators import positive
from kafkawire.protocol import MAX_FRAME_SIZE

__all__ = ["KafkaClientOptions", "KafkaClientSettings"]


@attrs.frozen(kw_only=True)
class KafkaClientSettings(ApiTimeoutSettings):
    """How a :class:`~kafkawire.client.KafkaClient` connects and how long its calls may take."""

    receive_message_max_bytes: int = attrs.field(default=MAX_FRAME_SIZE, validator=positive)
    """The largest response accepted, in bytes: a larger size prefix closes the connection
    before anything is allocated. Java's clients have no such bound; the name is
    librdkafka's ``receive.message.max.bytes``."""

    def cluster_settings(self) -> ClientSettings:
        """The cluster layer's settings: one call bounded by ``default_api_timeout_ms``."""
        return attrs.evolve(
            self.client_settings(call_timeout_ms=self.default_api_timeout_ms),
            max_frame_size=self.receive_message_max_bytes,
        )


class KafkaClientOptions(ApiTimeoutOptions, total=False):
    """:class:`KafkaClientSettings`' fields but ``bootstrap_servers``, as keyword arguments."""

    receive_message_max_bytes: int
