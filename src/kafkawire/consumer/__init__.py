"""The asyncio consumer: fetching, positions, consumer groups and offsets.

``async with Consumer("topic", group_id="g", bootstrap_servers="host:9092") as consumer:``
then ``async for record in consumer: ...``. Share groups (KIP-932): :class:`ShareConsumer`
(:mod:`.share`).
"""

from kafkawire.cluster import TopicPartition

from .commits import OffsetAndMetadata
from .consumer import Consumer
from .errors import (
    BackgroundTaskError,
    CommitFailedError,
    ConsumerStateError,
    LogTruncationError,
    NoOffsetForPartitionError,
    NotAssignedError,
    OffsetOutOfRangeError,
    RecordDeserializationError,
    UnsupportedGroupProtocolError,
)
from .fetching.record import ConsumerRecord
from .group.listener import ConsumerRebalanceListener
from .offsets import OffsetAndTimestamp
from .settings import ConsumerOptions, ConsumerSettings
from .share import (
    AcknowledgementCommitCallback,
    AcknowledgeType,
    ShareConsumer,
    ShareConsumerOptions,
    ShareConsumerSettings,
    ShareRecordDeserializationError,
    ShareSessionEndedError,
    WakeupError,
)

__all__ = [
    "AcknowledgeType",
    "AcknowledgementCommitCallback",
    "BackgroundTaskError",
    "CommitFailedError",
    "Consumer",
    "ConsumerOptions",
    "ConsumerRebalanceListener",
    "ConsumerRecord",
    "ConsumerSettings",
    "ConsumerStateError",
    "LogTruncationError",
    "NoOffsetForPartitionError",
    "NotAssignedError",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
    "OffsetOutOfRangeError",
    "RecordDeserializationError",
    "ShareConsumer",
    "ShareConsumerOptions",
    "ShareConsumerSettings",
    "ShareRecordDeserializationError",
    "ShareSessionEndedError",
    "TopicPartition",
    "UnsupportedGroupProtocolError",
    "WakeupError",
]
