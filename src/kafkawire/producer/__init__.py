"""The asyncio producer: batching, idempotent by default, transactions, every codec.

``async with Producer(bootstrap_servers="host:9092") as producer:`` then
``delivery = await producer.send("topic", b"value")`` and ``metadata = await delivery``.
"""

from kafkawire.client.group_metadata import ConsumerGroupMetadata

from .batch import Delivery, RecordMetadata
from .bulk import BatchDelivery, SendBatchError, SentBatch
from .errors import (
    BufferFullError,
    DeliveryTimeoutError,
    ProducerFailedError,
    RecordTooLargeError,
    TransactionAbortedError,
    TransactionStateError,
)
from .partitioner import Partitioner, murmur2, partition_for_key
from .producer import Producer
from .settings import ProducerOptions, ProducerSettings
from .transactions import PreparedTransaction, end_transaction

__all__ = [
    "BatchDelivery",
    "BufferFullError",
    "ConsumerGroupMetadata",
    "Delivery",
    "DeliveryTimeoutError",
    "Partitioner",
    "PreparedTransaction",
    "Producer",
    "ProducerFailedError",
    "ProducerOptions",
    "ProducerSettings",
    "RecordMetadata",
    "RecordTooLargeError",
    "SendBatchError",
    "SentBatch",
    "TransactionAbortedError",
    "TransactionStateError",
    "end_transaction",
    "murmur2",
    "partition_for_key",
]
