"""Transactions of a producer with a ``transactional_id``, as Kafka's Java client runs them
before KIP-890 (transactions v2).

States: ``ready`` (no transaction) -> ``begin`` -> ``in_transaction`` -> commit or abort ->
``ready``. A batch that fails for good inside a transaction makes it ``abortable``: it can
only be aborted. Fencing (another producer with the same ``transactional_id``) is ``fatal``.

Before the first batch of a partition goes out in a transaction, the partition is added with
AddPartitionsToTxn (v3 or older: v4+ is for brokers); offsets join with AddOffsetsToTxn and
TxnOffsetCommit; EndTxn commits or aborts. CONCURRENT_TRANSACTIONS (the previous transaction
still completing) and the coordinator's retriable errors are retried until the deadline each
call is given: ``max_block_ms`` for what the application waits on (InitProducerId at start,
offsets, commit, abort), as Java's ``max.block.ms`` bounds those calls.

Offsets carry the consumer's group metadata when given one (KIP-447, as Java's
``sendOffsetsToTransaction(offsets, ConsumerGroupMetadata)``): the group coordinator refuses
them from a member the group has moved on from (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
FENCED_INSTANCE_ID), and the transaction must then be aborted: a zombie's records never
commit with its offsets.

Two-phase commit: ``prepare`` leaves a delivered transaction open (state ``prepared``) and hands
back a :class:`PreparedTransaction`; :func:`end_transaction` ends it from any process with the
same producer id and epoch, as Flink's Kafka sink does. It must not call InitProducerId: that
fences the epoch which opened the transaction and aborts it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from kafkawire.client import KafkaClient
from kafkawire.client.group_metadata import ConsumerGroupMetadata
from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.errors import (
    BrokerError,
    FencedInstanceIdError,
    IllegalGenerationError,
    InvalidProducerEpochError,
    KafkawireError,
    ProducerFencedError,
    TransactionalIdAuthorizationFailedError,
    UnknownMemberIdError,
    error_for_code,
)
from kafkawire.messages.add_offsets_to_txn import v4 as add_offsets
from kafkawire.messages.add_partitions_to_txn import v3 as add_partitions
from kafkawire.messages.end_txn import v4 as end_txn
from kafkawire.messages.txn_offset_commit import v3 as txn_offset_commit

from .errors import TransactionStateError
from .idempotence import ProducerIdentity

__all__ = ["OffsetWithMetadata", "PreparedTransaction", "TransactionManager", "end_transaction"]

_log = logging.getLogger(__name__)
_FATAL = (ProducerFencedError, InvalidProducerEpochError, TransactionalIdAuthorizationFailedError)
_ZOMBIE_MEMBER = (IllegalGenerationError, UnknownMemberIdError, FencedInstanceIdError)
_END_TXN_LAST = 4  # before KIP-890: v5 bumps the epoch at every end, which a prepared handle cannot

OffsetWithMetadata = int | tuple[int, str]
"""A committed offset (the next to read), or ``(offset, metadata)``, as ``Consumer.commit``
takes them."""


@dataclass(frozen=True, slots=True)
class PreparedTransaction:
    """An open transaction whose records are all delivered, handed over to be ended elsewhere:
    its transactional id and the producer id and epoch that opened it. Plain data: it pickles
    and travels to another process."""

    transactional_id: str
    producer_id: int
    producer_epoch: int


async def end_transaction(
    client: KafkaClient, transaction: PreparedTransaction, *, commit: bool
) -> None:
    """EndTxn at ``transaction``'s coordinator: commit or abort it, as the producer that opened
    it would. Ending it again the same way succeeds, as Kafka answers a retried EndTxn; after
    the coordinator aborted it (its timeout passed) or a newer producer with its id fenced it,
    brokers answer ``ProducerFencedError`` or ``InvalidProducerEpochError``."""
    await _end(client.cluster, transaction, commit=commit)


async def _end(
    cluster: Cluster,
    transaction: PreparedTransaction,
    *,
    commit: bool,
    deadline: float | None = None,
) -> None:
    request = end_txn.EndTxnRequest(
        transactional_id=transaction.transactional_id,
        producer_id=transaction.producer_id,
        producer_epoch=transaction.producer_epoch,
        committed=commit,
    )
    response = await cluster.send(
        request, negotiate=True, max_version=_END_TXN_LAST, deadline=deadline
    )
    error = error_for_code(response.error_code, f"EndTxn for {transaction.transactional_id}")
    if error is not None:
        raise error


class TransactionManager:
    """The state of one transactional producer's transactions."""

    def __init__(self, cluster: Cluster, identity: ProducerIdentity) -> None:
        assert identity.transactional_id is not None
        self._cluster = cluster
        self._identity = identity
        self.transactional_id: str = identity.transactional_id
        self.state = "uninitialized"
        self._partitions: set[TopicPartition] = set()
        self._offsets_added = False
        self._error: BaseException | None = None

    async def initialize(self, deadline: float) -> None:
        """InitProducerId at the transaction coordinator: fences older producers with this id
        and aborts a transaction they left open."""
        await self._identity.initialize(deadline=deadline)
        self.state = "ready"

    def not_added(self, partitions: set[TopicPartition]) -> set[TopicPartition]:
        """Those of ``partitions`` not in the transaction yet (their batches wait)."""
        return partitions - self._partitions

    def begin(self) -> None:
        self._require("ready", "begin a transaction")
        self.state = "in_transaction"
        self._partitions.clear()
        self._offsets_added = False
        self._error = None

    def failed(self, error: BaseException) -> None:
        """A batch of the transaction failed for good: it can only be aborted now."""
        if isinstance(error, _FATAL):
            self.state, self._error = "fatal", error
        elif self.state == "in_transaction":
            self.state, self._error = "abortable", error

    def check_sendable(self) -> None:
        """Raise unless records may be sent now (a transaction is open and healthy)."""
        if self.state != "in_transaction":
            raise self._state_error("send records")

    async def add_partitions(self, partitions: set[TopicPartition], deadline: float) -> None:
        """AddPartitionsToTxn, retried until ``deadline`` (``time.monotonic()``)."""
        new = partitions - self._partitions
        if not new:
            return
        by_topic: dict[str, list[int]] = {}
        for tp in sorted(new):
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        request = add_partitions.AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=self.transactional_id,
            v3_and_below_producer_id=self._identity.producer_id,
            v3_and_below_producer_epoch=self._identity.epoch,
            v3_and_below_topics=tuple(
                add_partitions.AddPartitionsToTxnTopic(name=t, partitions=tuple(p))
                for t, p in by_topic.items()
            ),
        )

        async def attempt() -> None:
            response = await self._cluster.send(request, negotiate=True, max_version=3, retry=False)
            errors = [
                error_for_code(
                    p.partition_error_code, f"AddPartitionsToTxn {t.name}/{p.partition_index}"
                )
                for t in response.results_by_topic_v3_and_below
                for p in t.results_by_partition
            ]
            self._raise_first(errors)

        await self._cluster.call("AddPartitionsToTxn", attempt, deadline=deadline)
        self._partitions |= new

    async def send_offsets(
        self,
        offsets: Mapping[TopicPartition, OffsetWithMetadata],
        group: ConsumerGroupMetadata,
        deadline: float,
    ) -> None:
        """Commit ``offsets`` (the next offset to read, per partition, or ``(offset,
        metadata)``) for ``group`` as part of the transaction, until ``deadline``."""
        self.check_sendable()
        identity = self._identity
        if not self._offsets_added:
            add = add_offsets.AddOffsetsToTxnRequest(
                transactional_id=self.transactional_id,
                producer_id=identity.producer_id,
                producer_epoch=identity.epoch,
                group_id=group.group_id,
            )
            response = await self._cluster.send(add, negotiate=True, deadline=deadline)
            self._check(response.error_code, "AddOffsetsToTxn")
            self._offsets_added = True
        by_topic: dict[str, list[txn_offset_commit.TxnOffsetCommitRequestPartition]] = {}
        for tp, value in sorted(offsets.items()):
            offset, metadata = value if isinstance(value, tuple) else (value, "")
            by_topic.setdefault(tp.topic, []).append(
                txn_offset_commit.TxnOffsetCommitRequestPartition(
                    partition_index=tp.partition,
                    committed_offset=offset,
                    committed_metadata=metadata,
                )
            )
        commit = txn_offset_commit.TxnOffsetCommitRequest(
            transactional_id=self.transactional_id,
            group_id=group.group_id,
            producer_id=identity.producer_id,
            producer_epoch=identity.epoch,
            generation_id=group.generation_id,
            member_id=group.member_id,
            group_instance_id=group.group_instance_id,
            topics=tuple(
                txn_offset_commit.TxnOffsetCommitRequestTopic(name=t, partitions=tuple(p))
                for t, p in by_topic.items()
            ),
        )
        response = await self._cluster.send(
            commit, negotiate=True, max_version=3, deadline=deadline
        )
        member = f"member {group.member_id!r} of generation {group.generation_id}"
        errors = [
            error_for_code(
                p.error_code, f"TxnOffsetCommit {t.name}/{p.partition_index} for {member}"
            )
            for t in response.topics
            for p in t.partitions
        ]
        try:
            self._raise_first(errors)
        except _ZOMBIE_MEMBER as error:
            # Java's TxnOffsetCommitHandler: the group moved on from this member; what the
            # transaction wrote was read by a zombie, so it must not commit.
            self.failed(error)
            raise

    async def end(self, *, commit: bool, deadline: float) -> None:
        """EndTxn: commit (only from a healthy transaction) or abort. The caller has already
        flushed (commit) or dropped (abort) the transaction's batches."""
        if commit:
            if self.state == "abortable":
                raise TransactionStateError(
                    f"the transaction must be aborted: a batch in it failed: {self._error}"
                ) from self._error
            self._require("in_transaction", "commit a transaction")
        elif self.state not in ("in_transaction", "abortable"):
            raise self._state_error("abort a transaction")
        if self._partitions or self._offsets_added:
            try:
                await _end(self._cluster, self._handle(), commit=commit, deadline=deadline)
            except _FATAL as error:
                self.state, self._error = "fatal", error
                raise
        _log.debug("transaction %s %s", self.transactional_id, "committed" if commit else "aborted")
        self.state = "ready"

    def prepare(self) -> PreparedTransaction:
        """Hand the transaction over, open, to be ended by :func:`end_transaction` (the caller
        has flushed). The producer begins no other transaction after this."""
        if self.state == "abortable":
            raise TransactionStateError(
                f"the transaction must be aborted: a batch in it failed: {self._error}"
            ) from self._error
        self._require("in_transaction", "prepare a transaction")
        if not (self._partitions or self._offsets_added):
            raise TransactionStateError(
                "cannot prepare a transaction with no records and no offsets: the coordinator "
                "has nothing to end"
            )
        self.state = "prepared"
        return self._handle()

    def _handle(self) -> PreparedTransaction:
        return PreparedTransaction(
            self.transactional_id, self._identity.producer_id, self._identity.epoch
        )

    def _require(self, state: str, action: str) -> None:
        if self.state != state:
            raise self._state_error(action)

    def _state_error(self, action: str) -> TransactionStateError:
        hint = {
            "uninitialized": "the producer has not started",
            "ready": "no transaction has begun (begin_transaction)",
            "in_transaction": "a transaction is open",
            "abortable": f"the transaction must be aborted ({self._error})",
            "fatal": f"the producer is fenced or unauthorized ({self._error}); close it",
            "prepared": "the transaction was handed over (prepare_transaction): end it with "
            "end_transaction() and close this producer",
        }[self.state]
        error = TransactionStateError(f"cannot {action}: {hint}")
        error.__cause__ = self._error
        return error

    def _check(self, code: int, what: str) -> None:
        self._raise_first([error_for_code(code, f"{what} for {self.transactional_id}")])

    def _raise_first(self, errors: list[BrokerError | None]) -> None:
        error: KafkawireError | None = next((e for e in errors if e is not None), None)
        if error is None:
            return
        if isinstance(error, _FATAL):
            self.state, self._error = "fatal", error
        raise error
