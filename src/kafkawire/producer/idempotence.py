"""The idempotent producer's identity: its producer id and epoch, and each partition's next
sequence number.

Brokers keep, per producer id and partition, the sequence number they expect next, and
refuse or de-duplicate batches that do not follow it: so a retried batch is written once.
Sequences are given when a batch is first sent and kept on its retries; they start at 0 per
partition and wrap at 2**31 - 1.

When a batch failed for good and left a gap (OUT_OF_ORDER_SEQUENCE_NUMBER on the next), the
producer *bumps the epoch* (KIP-360): InitProducerId again with the current id and epoch,
after which every partition starts over at sequence 0 and the batches not yet acknowledged
get new sequences. Brokers without InitProducerId v3 cannot bump; they give a new producer id
instead. When the broker has no state for the id (UNKNOWN_PRODUCER_ID: its log was truncated,
or an in-memory broker restarted), a bump of that id may be refused too (Tansu answers
UNKNOWN_SERVER_ERROR): a non-transactional producer then asks for a new id, as Java's resets
its id (a new id has no sequences to collide with). Authorization failures and fencing are
never worked around.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.errors import (
    ClusterAuthorizationFailedError,
    KafkawireError,
    ProducerFencedError,
    TransactionalIdAuthorizationFailedError,
    error_for_code,
)
from kafkawire.messages.init_producer_id import v5 as init_producer_id
from kafkawire.protocol import VersionConversionError

from .batch import ProducerBatch

__all__ = ["ProducerIdentity"]

_log = logging.getLogger(__name__)

_MAX_SEQUENCE = 2**31 - 1
# Refusals that a new producer id would not get past.
_REFUSED_FOR_GOOD = (
    ClusterAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
    ProducerFencedError,
)


class ProducerIdentity:
    """A producer id and epoch from the cluster, and the sequences handed out under them."""

    def __init__(
        self, cluster: Cluster, *, transactional_id: str | None, transaction_timeout_ms: int
    ) -> None:
        self._cluster = cluster
        self.transactional_id = transactional_id
        self._transaction_timeout_ms = transaction_timeout_ms
        self.producer_id = -1
        self.epoch = -1
        self.stale = True  # no id yet, or an epoch bump is due
        self._new_id_due = False  # the broker forgot the id: ask for another, not a bump
        self._sequences: dict[TopicPartition, int] = {}

    def need_new_epoch(self, reason: str) -> None:
        """Bump the epoch before the next batch is sent (see the module doc)."""
        if not self.stale:
            _log.warning(
                "producer id %d: bumping epoch %d: %s", self.producer_id, self.epoch, reason
            )
        self.stale = True

    def need_new_id(self, reason: str) -> None:
        """The broker has no state for this id: take a new one before the next batch is
        sent (for a producer without a transactional id, whose id nothing else knows)."""
        if not self.stale:
            _log.warning("producer id %d: asking for a new id: %s", self.producer_id, reason)
        self._new_id_due = self.stale = True

    async def initialize(self, *, deadline: float | None = None) -> None:
        """Get a producer id (or bump the epoch of the one held); sequences start over.

        One call, ended by ``deadline`` (``time.monotonic()``; default: the cluster's call
        timeout); its errors are raised for the caller to retry or give up on."""
        fresh = self.producer_id < 0 or self._new_id_due
        request = init_producer_id.InitProducerIdRequest(
            transactional_id=self.transactional_id,
            transaction_timeout_ms=self._transaction_timeout_ms,
            producer_id=-1 if fresh else self.producer_id,
            producer_epoch=-1 if fresh else self.epoch,
        )
        try:
            response = await self._ask(request, deadline)
        except KafkawireError as error:
            bump_refused = not (fresh or error.retriable or isinstance(error, _REFUSED_FOR_GOOD))
            if not bump_refused or self.transactional_id is not None:
                raise
            # The broker would not bump an id it does not know: a new id starts afresh.
            _log.warning(
                "producer id %d: epoch bump refused (%s): asking for a new id",
                self.producer_id,
                error,
            )
            response = await self._ask(
                dataclasses.replace(request, producer_id=-1, producer_epoch=-1), deadline
            )
        changed = (int(response.producer_id), int(response.producer_epoch))
        if self.producer_id >= 0:
            _log.info(
                "producer id %d epoch %d, was %d epoch %d", *changed, self.producer_id, self.epoch
            )
        self.producer_id, self.epoch = changed
        self._sequences.clear()
        self.stale = self._new_id_due = False

    async def _ask(
        self, request: init_producer_id.InitProducerIdRequest, deadline: float | None
    ) -> Any:
        """InitProducerId, its error raised."""
        try:
            response = await self._cluster.send(request, negotiate=True, deadline=deadline)
        except VersionConversionError:
            # Before InitProducerId v3 an epoch cannot be bumped: take a new producer id.
            fresh = dataclasses.replace(request, producer_id=-1, producer_epoch=-1)
            response = await self._cluster.send(fresh, negotiate=True, deadline=deadline)
        error = error_for_code(
            response.error_code, f"InitProducerId for {self.transactional_id or 'idempotence'}"
        )
        if error is not None:
            raise error
        return response

    def state_for(self, batch: ProducerBatch) -> tuple[int, int, int]:
        """(producer id, epoch, base sequence) for ``batch``: its own if it was sent under
        the current epoch, else the partition's next sequence."""
        state = batch.producer_state
        if state is not None and state[:2] == (self.producer_id, self.epoch):
            return state
        sequence = self._sequences.get(batch.tp, 0)
        self._sequences[batch.tp] = (sequence + len(batch)) % (_MAX_SEQUENCE + 1)
        return (self.producer_id, self.epoch, sequence)
