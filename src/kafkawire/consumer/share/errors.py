"""The share consumer's own errors (broker errors come from :mod:`kafkawire.errors`)."""

from __future__ import annotations

from kafkawire.consumer.errors import RecordDeserializationError
from kafkawire.errors import KafkawireError

__all__ = ["ShareRecordDeserializationError", "ShareSessionEndedError", "WakeupError"]


class ShareRecordDeserializationError(RecordDeserializationError):
    """The key or value deserializer raised on a record a share group delivered. The records
    before it were handed out; this one was released (the group delivers it again, to any
    member, until its delivery limit, then archives it), never accepted unread.
    ``delivery_count`` is the delivery that failed."""

    def __init__(self, error: RecordDeserializationError, delivery_count: int) -> None:
        tp, offset, origin = error.partition, error.offset, error.origin
        cause = error.__cause__
        KafkawireError.__init__(
            self,
            f"the {origin} deserializer failed on {tp.topic}/{tp.partition} at offset {offset}"
            f" (delivery {delivery_count}"
            + (f"; {type(cause).__name__}: {cause}" if cause is not None else "")
            + "): the record was released, to be delivered again",
        )
        self.partition = tp
        self.offset = offset
        self.origin = origin
        self.delivery_count = delivery_count
        self.__cause__ = cause


class ShareSessionEndedError(KafkawireError):
    """Acknowledgements of records acquired in a share session that has ended (the broker
    lost it, the connection broke, the leader moved): the broker released those records when
    the session ended, so the acknowledgements cannot apply; the records are delivered again."""

    retriable = False


class WakeupError(KafkawireError):
    """:meth:`~kafkawire.consumer.ShareConsumer.wakeup` was called: the poll (or ``commit``)
    that was waiting, or else the next one, raises this once (Java's ``WakeupException``).
    Nothing is lost: records not returned yet are returned by the next poll, and
    acknowledgements under way still go."""
