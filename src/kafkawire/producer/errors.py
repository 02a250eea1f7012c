"""Errors of the producer, under :class:`kafkawire.errors.KafkawireError`.

Broker errors (``kafkawire.errors.BrokerError`` subclasses such as ``ProducerFencedError``)
reach a record's delivery as the broker gave them; these are the producer's own.
"""

from __future__ import annotations

from kafkawire.errors import KafkawireError

__all__ = [
    "BufferFullError",
    "DeliveryTimeoutError",
    "ProducerFailedError",
    "RecordTooLargeError",
    "TransactionAbortedError",
    "TransactionStateError",
]


class RecordTooLargeError(KafkawireError, ValueError):
    """A record larger than ``max_request_size`` or ``buffer_memory``: it fails alone."""


class BufferFullError(KafkawireError, TimeoutError):
    """``send`` waited ``max_block_ms`` for room in ``buffer_memory`` and found none."""


class DeliveryTimeoutError(KafkawireError, TimeoutError):
    """A record was not delivered within ``delivery_timeout_ms`` of its ``send``."""


class ProducerFailedError(KafkawireError):
    """The producer cannot go on: its background task failed unexpectedly (the cause says
    how). Every delivery pending then, and every later call, raises this; close the producer.
    (An error of the cluster's that ends the producer, such as an authorization failure for
    its producer id, is raised as it is instead.)"""


class TransactionStateError(KafkawireError):
    """A transaction call made in the wrong state (``commit`` with none begun, ...)."""


class TransactionAbortedError(KafkawireError):
    """The record's transaction was aborted before the record was sent."""
