"""Every transition of the transaction state machine, walked without a broker: each move the
table allows works, every other raises; each call the application makes works in exactly the
states whose move the table allows, and elsewhere says "cannot X in state Y" and changes
nothing. The coordinator is a stub answering EndTxn and InitProducerId."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kafkawire.cluster import TopicPartition
from kafkawire.errors import (
    CoordinatorNotAvailableError,
    MessageTooLargeError,
    ProducerFencedError,
)
from kafkawire.producer import TransactionStateError
from kafkawire.producer.idempotence import ProducerIdentity
from kafkawire.producer.sequences import IdState
from kafkawire.producer.transactions import (
    TRANSACTION_MOVES,
    TransactionManager,
    TransactionState,
)
from tests.producer.state_walk import check_move, every_pair

S = TransactionState
T0 = TopicPartition("t", 0)
NO_DEADLINE = float("inf")


class Coordinator:
    """Answers InitProducerId (producer id 7, the epoch going up by one each time) and
    EndTxn, each with the next error code of ``codes`` (0 once they run out)."""

    def __init__(self) -> None:
        self.codes: list[int] = []
        self.asked: list[str] = []
        self.epoch = -1

    async def send(self, request: Any, **options: Any) -> Any:
        self.asked.append(type(request).__name__)
        code = self.codes.pop(0) if self.codes else 0
        if code == 0 and type(request).__name__ == "InitProducerIdRequest":
            self.epoch += 1
        return SimpleNamespace(error_code=code, producer_id=7, producer_epoch=self.epoch)


def manager(state: TransactionState = S.UNINITIALIZED) -> tuple[TransactionManager, Coordinator]:
    coordinator = Coordinator()
    identity = ProducerIdentity(
        coordinator,  # type: ignore[arg-type]
        transactional_id="tx",
        transaction_timeout_ms=60_000,
    )
    transactions = TransactionManager(coordinator, identity)  # type: ignore[arg-type]
    transactions.state = state
    return transactions, coordinator


def test_the_table_is_javas() -> None:
    """Java's TransactionManager.State.isTransitionValid, with KIP-939's prepared state, less
    the moves kafkawire never makes (listed in the module doc)."""
    assert set(TRANSACTION_MOVES) == {
        (S.UNINITIALIZED, S.INITIALIZING),
        (S.INITIALIZING, S.READY),
        (S.INITIALIZING, S.ABORTABLE_ERROR),
        (S.READY, S.IN_TRANSACTION),
        (S.IN_TRANSACTION, S.PREPARED_TRANSACTION),
        (S.IN_TRANSACTION, S.COMMITTING_TRANSACTION),
        (S.IN_TRANSACTION, S.ABORTING_TRANSACTION),
        (S.IN_TRANSACTION, S.ABORTABLE_ERROR),
        (S.PREPARED_TRANSACTION, S.COMMITTING_TRANSACTION),
        (S.PREPARED_TRANSACTION, S.ABORTING_TRANSACTION),
        (S.COMMITTING_TRANSACTION, S.READY),
        (S.COMMITTING_TRANSACTION, S.ABORTABLE_ERROR),
        (S.ABORTING_TRANSACTION, S.READY),
        (S.ABORTING_TRANSACTION, S.INITIALIZING),
        (S.ABORTABLE_ERROR, S.ABORTING_TRANSACTION),
        *((source, S.FATAL_ERROR) for source in S if source is not S.FATAL_ERROR),
    }


@every_pair(TransactionState)
def test_every_move_the_table_allows_works_and_every_other_raises(
    source: TransactionState, target: TransactionState
) -> None:
    check_move(TRANSACTION_MOVES, manager(source)[0], source, target)


# The application's calls that move the state, and the move each makes.
CALLS = {
    "begin a transaction": (lambda t: t.begin(), S.IN_TRANSACTION),
    "commit a transaction": (lambda t: t.begin_commit(), S.COMMITTING_TRANSACTION),
    "abort a transaction": (lambda t: t.begin_abort(), S.ABORTING_TRANSACTION),
    "prepare a transaction": (lambda t: t.prepare(), S.PREPARED_TRANSACTION),
}
# A commit or abort called again after it failed is retried where it stands.
RETRIES = {
    ("commit a transaction", S.COMMITTING_TRANSACTION),
    ("abort a transaction", S.ABORTING_TRANSACTION),
}


@pytest.mark.parametrize("state", S, ids=lambda s: s.name)
@pytest.mark.parametrize("action", CALLS)
def test_a_call_works_where_the_table_allows_its_move_and_elsewhere_names_the_state(
    state: TransactionState, action: str
) -> None:
    call, target = CALLS[action]
    transactions, _ = manager(state)
    transactions._partitions.add(T0)  # something to end
    if (action, state) in RETRIES:
        call(transactions)
        assert transactions.state is state
    elif TRANSACTION_MOVES.allows(state, target):
        call(transactions)
        assert transactions.state is target
    else:
        with pytest.raises(TransactionStateError, match=f"cannot {action} in state {state.name}"):
            call(transactions)
        assert transactions.state is state


@pytest.mark.parametrize("state", S, ids=lambda s: s.name)
def test_records_and_offsets_go_only_into_an_open_transaction(state: TransactionState) -> None:
    transactions, _ = manager(state)
    if state is S.IN_TRANSACTION:
        transactions.check_sendable()
    else:
        with pytest.raises(
            TransactionStateError, match=f"cannot send records in state {state.name}"
        ):
            transactions.check_sendable()


async def test_start_commit_and_abort_walk_through_initializing_to_ready() -> None:
    transactions, coordinator = manager()
    await transactions.initialize(NO_DEADLINE)
    assert transactions.state is S.READY
    for commit in (True, False):
        transactions.begin()
        transactions._partitions.add(T0)
        (transactions.begin_commit if commit else transactions.begin_abort)()
        await transactions.end(commit=commit, deadline=NO_DEADLINE)
        assert transactions.state is S.READY
    assert coordinator.asked == ["InitProducerIdRequest", "EndTxnRequest", "EndTxnRequest"]


async def test_a_batch_that_failed_makes_the_abort_bump_the_epoch() -> None:
    """ABORTABLE_ERROR -> ABORTING_TRANSACTION -> INITIALIZING -> READY, at a new epoch."""
    transactions, coordinator = manager()
    await transactions.initialize(NO_DEADLINE)
    transactions.begin()
    transactions._partitions.add(T0)
    error = MessageTooLargeError("a batch failed for good")
    transactions._identity.sequences.request_epoch_bump("its batch was sent and failed")
    transactions.failed(error)
    assert (transactions.state, transactions._error) == (S.ABORTABLE_ERROR, error)
    aborted = r"must be aborted \(MESSAGE_TOO_LARGE"
    with pytest.raises(TransactionStateError, match=aborted) as caught:
        transactions.begin_commit()
    assert caught.value.__cause__ is error
    transactions.begin_abort()
    await transactions.end(commit=False, deadline=NO_DEADLINE)
    assert transactions.state is S.READY
    assert coordinator.asked[-2:] == ["EndTxnRequest", "InitProducerIdRequest"]
    assert (transactions._identity.producer_id, transactions._identity.epoch) == (7, 1)
    assert transactions._identity.sequences.state is IdState.CURRENT


async def test_a_bump_that_fails_leaves_the_transaction_to_abort_again() -> None:
    """INITIALIZING -> ABORTABLE_ERROR; the next abort skips EndTxn and bumps."""
    transactions, coordinator = manager()
    await transactions.initialize(NO_DEADLINE)
    transactions.begin()
    transactions._partitions.add(T0)
    transactions._identity.sequences.request_epoch_bump("a gap")
    transactions.begin_abort()
    coordinator.codes = [0, 15]  # EndTxn ends it; the bump: COORDINATOR_NOT_AVAILABLE
    with pytest.raises(CoordinatorNotAvailableError):
        await transactions.end(commit=False, deadline=NO_DEADLINE)
    assert transactions.state is S.ABORTABLE_ERROR
    transactions.begin_abort()
    await transactions.end(commit=False, deadline=NO_DEADLINE)
    assert transactions.state is S.READY
    # The second abort sends no EndTxn: the first was answered.
    assert coordinator.asked[1:] == [
        "EndTxnRequest",
        "InitProducerIdRequest",
        "InitProducerIdRequest",
    ]


@pytest.mark.parametrize("commit", [True, False])
async def test_an_end_that_failed_is_retried_where_it_stands(commit: bool) -> None:
    transactions, coordinator = manager()
    await transactions.initialize(NO_DEADLINE)
    transactions.begin()
    transactions._partitions.add(T0)
    coordinator.codes = [15]  # COORDINATOR_NOT_AVAILABLE, past the cluster's retries
    start = transactions.begin_commit if commit else transactions.begin_abort
    start()
    with pytest.raises(CoordinatorNotAvailableError):
        await transactions.end(commit=commit, deadline=NO_DEADLINE)
    stands = S.COMMITTING_TRANSACTION if commit else S.ABORTING_TRANSACTION
    assert transactions.state is stands
    if commit:  # Java: a commit that failed may be retried, not aborted
        with pytest.raises(TransactionStateError, match="cannot abort a transaction in state"):
            transactions.begin_abort()
    start()
    await transactions.end(commit=commit, deadline=NO_DEADLINE)
    assert transactions.state is S.READY


@pytest.mark.parametrize("state", [s for s in S if s is not S.FATAL_ERROR], ids=lambda s: s.name)
def test_fencing_is_fatal_from_every_state_and_stays(state: TransactionState) -> None:
    transactions, _ = manager(state)
    fenced = ProducerFencedError("another producer has the id")
    transactions.failed(fenced)
    assert transactions.state is S.FATAL_ERROR
    transactions.failed(ProducerFencedError("again"))  # the first stays the cause
    with pytest.raises(TransactionStateError, match="fenced or unauthorized") as caught:
        transactions.begin()
    assert caught.value.__cause__ is fenced


async def test_a_fenced_init_producer_id_is_fatal() -> None:
    transactions, coordinator = manager()
    coordinator.codes = [90]  # PRODUCER_FENCED
    with pytest.raises(ProducerFencedError):
        await transactions.initialize(NO_DEADLINE)
    assert transactions.state is S.FATAL_ERROR
