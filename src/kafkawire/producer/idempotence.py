"""The idempotent producer's InitProducerId: how a producer id is got, bumped or replaced.

The sequence state it serves (the id and epoch, each partition's sequences, when a change is
due and why) is :mod:`.sequences`; this module does the asking. A bump is InitProducerId with
the current id and epoch (KIP-360). Brokers without InitProducerId v3 cannot bump; they give a
new producer id instead. When the broker has no state for the id, a bump of that id may be
refused too (Tansu answers UNKNOWN_SERVER_ERROR): a non-transactional producer then asks for a
new id, as Java's resets its id (a new id has no sequences to collide with). Authorization
failures and fencing are never worked around.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from kafkawire.cluster import Cluster
from kafkawire.errors import (
    ClusterAuthorizationFailedError,
    KafkawireError,
    ProducerFencedError,
    TransactionalIdAuthorizationFailedError,
    error_for_code,
)
from kafkawire.messages.init_producer_id import v5 as init_producer_id
from kafkawire.protocol import VersionConversionError

from .sequences import NO_PRODUCER_ID, ProducerIdAndEpoch, SequenceState

__all__ = ["ProducerIdentity"]

_log = logging.getLogger(__name__)

# Refusals that a new producer id would not get past.
_REFUSED_FOR_GOOD = (
    ClusterAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
    ProducerFencedError,
)


class ProducerIdentity:
    """Asks the cluster for the producer id and epoch that ``sequences`` hold."""

    def __init__(
        self, cluster: Cluster, *, transactional_id: str | None, transaction_timeout_ms: int
    ) -> None:
        self._cluster = cluster
        self.transactional_id = transactional_id
        self._transaction_timeout_ms = transaction_timeout_ms
        self.sequences = SequenceState(transactional=transactional_id is not None)

    @property
    def producer_id(self) -> int:
        return self.sequences.current.producer_id

    @property
    def epoch(self) -> int:
        return self.sequences.current.epoch

    async def initialize(self, *, deadline: float | None = None) -> None:
        """Get a producer id, bump the epoch of the one held or replace it, as the sequence
        state asks; sequences start over.

        One call, ended by ``deadline`` (``time.monotonic()``; default: the cluster's call
        timeout); its errors are raised for the caller to retry or give up on."""
        asked = self.sequences.init_request()
        request = init_producer_id.InitProducerIdRequest(
            transactional_id=self.transactional_id,
            transaction_timeout_ms=self._transaction_timeout_ms,
            producer_id=asked.producer_id,
            producer_epoch=asked.epoch,
        )
        try:
            response = await self._ask(request, deadline)
        except KafkawireError as error:
            fresh = asked == NO_PRODUCER_ID
            bump_refused = not (fresh or error.retriable or isinstance(error, _REFUSED_FOR_GOOD))
            if not bump_refused or self.transactional_id is not None:
                raise
            # The broker would not bump an id it does not know: a new id starts afresh.
            _log.warning(
                "producer id %d: epoch bump refused (%s): asking for a new id",
                self.producer_id,
                error,
            )
            response = await self._ask(_new_id(request), deadline)
        self.sequences.initialized(
            ProducerIdAndEpoch(int(response.producer_id), int(response.producer_epoch))
        )

    async def _ask(
        self, request: init_producer_id.InitProducerIdRequest, deadline: float | None
    ) -> Any:
        """InitProducerId, its error raised."""
        try:
            response = await self._cluster.send(request, negotiate=True, deadline=deadline)
        except VersionConversionError:
            # Before InitProducerId v3 an epoch cannot be bumped: take a new producer id.
            response = await self._cluster.send(_new_id(request), negotiate=True, deadline=deadline)
        error = error_for_code(
            response.error_code, f"InitProducerId for {self.transactional_id or 'idempotence'}"
        )
        if error is not None:
            raise error
        return response


def _new_id(
    request: init_producer_id.InitProducerIdRequest,
) -> init_producer_id.InitProducerIdRequest:
    return dataclasses.replace(
        request, producer_id=NO_PRODUCER_ID.producer_id, producer_epoch=NO_PRODUCER_ID.epoch
    )
