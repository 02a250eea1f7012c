"""Share groups (KIP-932, "queues for Kafka"): the asyncio :class:`ShareConsumer`.

Members of a share group read the same partitions cooperatively (more members than
partitions, a partition read by several), each record acquired by one member for a lock time
and acknowledged one by one: ACCEPT, RELEASE (delivered again, counted in the record's
``delivery_count``), REJECT, RENEW (extend the lock). Java's ``KafkaShareConsumer`` is the
reference; :mod:`.consumer` says how acknowledgement works, :mod:`.session` and
:mod:`.fetcher` the rules of the share sessions and of leader changes.
"""

from .acknowledgements import AcknowledgeType
from .consumer import AcknowledgementCommitCallback, ShareConsumer
from .errors import ShareRecordDeserializationError, ShareSessionEndedError, WakeupError
from .settings import ShareConsumerOptions, ShareConsumerSettings

__all__ = [
    "AcknowledgeType",
    "AcknowledgementCommitCallback",
    "ShareConsumer",
    "ShareConsumerOptions",
    "ShareConsumerSettings",
    "ShareRecordDeserializationError",
    "ShareSessionEndedError",
    "WakeupError",
]
