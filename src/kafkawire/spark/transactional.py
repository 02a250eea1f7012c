"""Exactly-once streaming writes (``exactlyOnce=true``): a two-phase commit keyed on the batch id.

Spark runs a micro-batch's tasks (``write`` on executors), then ``commit(messages, batchId)``
on the driver once all of them succeeded, or ``abort`` when one failed; after a restart it runs
the last batch again, with the same id and the same input, unless its commit was recorded in
the checkpoint. So:

1. A task's transactional id is ``{prefix}-{partition id}`` (the prefix defaults to
   ``kafkawire-{query id}``; the query id is kept in the checkpoint). Every attempt of a task
   has the same id, so starting the producer (InitProducerId) fences an earlier attempt and
   aborts what it left open.
2. The task then reads its *marker*: the offset that the consumer group named like its
   transactional id committed on partition 0 of the first topic it writes to, which is the id
   of the last batch it committed. A batch at or below that was committed before a restart:
   the task writes nothing.
3. Otherwise it writes its rows in a transaction, commits the batch id as the marker in the same
   transaction (TxnOffsetCommit, with the query id as metadata), flushes, and returns the
   transaction open (``prepare_transaction``): its transactional id, producer id and epoch.
4. The driver's ``commit`` ends every task's transaction with EndTxn(commit) under those ids,
   never InitProducerId, which would abort them. ``abort`` ends them with EndTxn(abort).

A task that fails aborts its own transaction; one whose process died leaves it open until the
task's next attempt fences it, or until the coordinator aborts it ``transaction.timeout.ms``
after it began. The guarantee and its limits are in docs/guide/spark.md.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark import TaskContext
from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage

from kafkawire.admin import Admin
from kafkawire.client import KafkaClient
from kafkawire.cluster import TopicPartition
from kafkawire.errors import KafkawireError, UnknownTopicOrPartitionError
from kafkawire.net import NoCommonVersionError
from kafkawire.producer import PreparedTransaction, Producer, end_transaction
from kafkawire.producer.settings import ProducerSettings

from .options import WriteOptions
from .worker import run_with_client, worker_loop
from .writing import send_all

__all__ = [
    "ExactlyOnceError",
    "ExactlyOnceStreamWriter",
    "Prepared",
    "TaskTransaction",
    "check_transactions_served",
    "end_all",
    "write_prepared",
]

_log = logging.getLogger(__name__)

# Local properties Spark's micro-batch execution sets for the tasks of each batch.
_BATCH_ID = "streaming.sql.batchId"
_QUERY_ID = "sql.streaming.queryId"
# What a transactional producer and its driver-side commit need; FindCoordinator v1 is the
# first that finds transaction coordinators.
_TRANSACTION_APIS = {
    "FindCoordinator v1+": (10, 1),
    "InitProducerId": (22, 0),
    "AddPartitionsToTxn": (24, 0),
    "AddOffsetsToTxn": (25, 0),
    "EndTxn": (26, 0),
    "TxnOffsetCommit": (28, 0),
}


class ExactlyOnceError(KafkawireError):
    """An exactly-once write cannot go on; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class TaskTransaction:
    """Who a task of an exactly-once batch is: the batch, the query, its transactional id."""

    batch_id: int
    query_id: str
    transactional_id: str

    @classmethod
    def of_task(cls, options: WriteOptions) -> TaskTransaction:
        """This task's, from the local properties Spark gives a streaming write's tasks."""
        context = TaskContext.get()
        batch = context.getLocalProperty(_BATCH_ID) if context else None
        query = context.getLocalProperty(_QUERY_ID) if context else None
        if context is None or batch is None or query is None:
            raise ExactlyOnceError(
                f"exactlyOnce needs the batch and query ids Spark gives the tasks of a streaming "
                f"write (local properties {_BATCH_ID} and {_QUERY_ID}); this task has none"
            )
        prefix = options.transactional_id_prefix or f"kafkawire-{query}"
        return cls(int(batch), query, f"{prefix}-{context.partitionId()}")


@dataclass(frozen=True)
class Prepared(WriterCommitMessage):
    """What one task of an exactly-once batch did: ``records`` in ``transaction``, left open
    for the driver; or no transaction (no rows, or ``already_committed`` before a restart)."""

    batch_id: int
    records: int
    transaction: PreparedTransaction | None
    already_committed: bool = False


class ExactlyOnceStreamWriter(DataSourceStreamArrowWriter):
    """Tasks prepare a transaction each; the driver commits them all (see the module doc)."""

    def __init__(self, options: WriteOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[Any]) -> Prepared:
        task = TaskTransaction.of_task(self.options)
        return worker_loop().run(write_prepared(self.options, task, iterator))

    def commit(self, messages: Sequence[WriterCommitMessage | None], batchId: int) -> None:
        end_all(self.options, messages, batchId, commit=True)

    def abort(self, messages: Sequence[WriterCommitMessage | None], batchId: int) -> None:
        end_all(self.options, messages, batchId, commit=False)


def check_transactions_served(options: WriteOptions) -> None:
    """Refuse, on the driver, a broker without the transaction APIs (naming those it lacks)."""

    async def served(client: KafkaClient) -> tuple[str, list[str]]:
        versions = (await client.cluster.any_connection()).api_versions
        missing = []
        for name, (key, lowest) in _TRANSACTION_APIS.items():
            try:
                if versions.version_for(key) < lowest:
                    missing.append(name)
            except NoCommonVersionError:
                missing.append(name)
        return versions.peer, missing

    peer, missing = run_with_client(options, served)
    if missing:
        raise ExactlyOnceError(
            f"exactlyOnce needs Kafka's transaction APIs, and the broker at {peer} does not "
            f"serve {', '.join(missing)}: write without exactlyOnce (at least once), or to a "
            "broker with transactions"
        )


async def write_prepared(
    options: WriteOptions, task: TaskTransaction, batches: Iterator[Any]
) -> Prepared:
    """A task's part (steps 1-3 of the module doc), fed Arrow batches."""
    rows = (batch for batch in batches if batch.num_rows)
    first = next(rows, None)
    if first is None:
        return Prepared(task.batch_id, 0, None)
    marker = TopicPartition(_first_topic(first, options.topic), 0)
    async with Producer(
        options.bootstrap, transactional_id=task.transactional_id, **options.producer_options()
    ) as producer:
        # Started: its InitProducerId waited for this id's last transaction to complete and
        # aborted one an earlier attempt left open, so the marker read now is settled.
        done = await _committed_batch(options, task, marker)
        if done is not None and done >= task.batch_id:
            _log.info(
                "%s: batch %d was committed before the restart (marker: batch %d); "
                "not writing it again",
                task.transactional_id,
                task.batch_id,
                done,
            )
            for _ in rows:  # read the input to its end, as a task that writes does
                pass
            return Prepared(task.batch_id, 0, None, already_committed=True)
        producer.begin_transaction()
        try:
            records = await send_all(producer, options, itertools.chain([first], rows))
            await producer.send_offsets_to_transaction(
                {marker: (task.batch_id, task.query_id)}, task.transactional_id
            )
            prepared = await producer.prepare_transaction()
        except BaseException:
            await _abort_quietly(producer, task)
            raise
    return Prepared(task.batch_id, records, prepared)


def end_all(
    options: WriteOptions,
    messages: Sequence[WriterCommitMessage | None],
    batch_id: int,
    *,
    commit: bool,
) -> None:
    """The driver's part (step 4): end every prepared transaction of batch ``batch_id``.

    A commit that fails for some raises, naming them (those committed stay committed, and the
    batch's re-run writes only the others again); an abort that fails is logged, since Kafka
    aborts the transaction anyway (the task's next attempt fences it, or its timeout passes).
    """
    prepared = [m for m in messages if isinstance(m, Prepared)]
    strays = sorted({m.batch_id for m in prepared} - {batch_id})
    if strays:
        raise ExactlyOnceError(f"batch {batch_id} got commit messages of batches {strays}")
    transactions = [m.transaction for m in prepared if m.transaction is not None]

    async def end(client: KafkaClient) -> list[BaseException | None]:
        return await asyncio.gather(
            *(end_transaction(client, t, commit=commit) for t in transactions),
            return_exceptions=True,
        )

    outcomes = run_with_client(options, end) if transactions else []
    failed = [(t, e) for t, e in zip(transactions, outcomes, strict=True) if e is not None]
    for transaction, error in failed:
        _log.warning(
            "batch %d: ending the transaction of %s failed: %s",
            batch_id,
            transaction.transactional_id,
            error,
        )
    records = sum(m.records for m in prepared)
    already = sum(m.already_committed for m in prepared)
    _log.info(
        "batch %d: %s %d transactions (%d records, %d failed); %d tasks had committed it before",
        batch_id,
        "committed" if commit else "aborted",
        len(transactions),
        records,
        len(failed),
        already,
    )
    if commit and failed:
        raise ExactlyOnceError(_commit_failure(options, batch_id, len(transactions), failed))


def _commit_failure(
    options: WriteOptions,
    batch_id: int,
    total: int,
    failed: list[tuple[PreparedTransaction, BaseException]],
) -> str:
    settings = ProducerSettings(bootstrap_servers=options.bootstrap, **dict(options.producer))
    timeout_ms = settings.transaction_timeout_ms
    errors = "; ".join(f"{t.transactional_id}: {e!r}" for t, e in failed)
    return (
        f"batch {batch_id}: {len(failed)} of {total} task transactions could not be committed "
        f"({errors}). The others are committed; run the query again from its checkpoint and "
        "the batch's re-run writes only the tasks that failed. A transaction that ran past "
        f"kafka.transaction.timeout.ms ({timeout_ms} ms) was aborted by the coordinator, and "
        "one that a newer attempt of its task took over was fenced (both answer "
        "ProducerFencedError or InvalidProducerEpochError): raise the timeout above the "
        "batch's duration"
    )


async def _committed_batch(
    options: WriteOptions, task: TaskTransaction, marker: TopicPartition
) -> int | None:
    """The id of the last batch this task committed (``None``: none yet)."""
    async with Admin(options.bootstrap, **options.client_options()) as admin:
        try:
            found = (await admin.list_group_offsets(task.transactional_id, [marker]))[marker]
        except UnknownTopicOrPartitionError:
            return None  # the topic is yet to be created (by the first record sent to it)
    if found.offset < 0:
        return None
    if found.metadata and found.metadata != task.query_id:
        raise ExactlyOnceError(
            f"the transactional id {task.transactional_id} committed batch {found.offset} of "
            f"another query ({found.metadata}), not of this one ({task.query_id}): "
            "transactionalIdPrefix must belong to one query and its checkpoint"
        )
    return found.offset


async def _abort_quietly(producer: Producer, task: TaskTransaction) -> None:
    """Abort the failing task's transaction; if that fails too, the coordinator aborts it when
    the next attempt starts or its timeout passes, and the task's own error is what matters."""
    try:
        await producer.abort_transaction()
    except KafkawireError as error:
        _log.warning("%s: aborting the transaction failed: %s", task.transactional_id, error)


def _first_topic(batch: Any, topic: str | None) -> str:
    """The topic of the batch's first row: where the task's marker lives."""
    if topic is not None:
        return topic
    first: str | None = batch.column("topic")[0].as_py()
    if first is None:
        raise ValueError("row 0 of a batch has no topic (the topic column is null)")
    return first
