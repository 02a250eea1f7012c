"""The share consumer's parts without a broker: acknowledgement batches, the share session's
requests, what the member holds, reading what a fetch acquired, and the member's states."""

from __future__ import annotations

import uuid
from collections import deque

import pytest

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.consumer import AcknowledgeType, ShareConsumer, ShareRecordDeserializationError
from kafkawire.consumer.group.member_state import MemberState
from kafkawire.consumer.inbox import Inbox
from kafkawire.consumer.share.acknowledgements import GAP, WireBatch, wire_batches
from kafkawire.consumer.share.completed_fetch import ShareCompletedFetch
from kafkawire.consumer.share.holdings import Holdings
from kafkawire.consumer.share.membership import SHARE_MOVES, ShareMembership
from kafkawire.consumer.share.metrics import ShareConsumerMetrics
from kafkawire.consumer.share.session import ShareSession
from kafkawire.consumer.tasks import BackgroundTasks
from kafkawire.metrics import Metrics
from kafkawire.protocol import VersionConversionError
from kafkawire.records import (
    Batch,
    ControlType,
    CorruptRecordError,
    EndTransactionMarker,
    RecordBatchBuilder,
    decode_batches,
    end_transaction_batch,
)
from tests.producer.state_walk import check_move, every_pair

ACCEPT, RELEASE, REJECT, RENEW = (int(t) for t in AcknowledgeType)
TOPIC = uuid.UUID(int=7)
TP = TopicPartition("t", 0)


def test_a_share_consumer_needs_a_group_and_its_options_are_checked_by_name() -> None:
    with pytest.raises(TypeError, match=r"^ShareConsumer\(\) needs group_id"):
        ShareConsumer("t", bootstrap_servers="127.0.0.1:9")
    with pytest.raises(ValueError, match=r"^share_acknowledgement_mode must be one of"):
        ShareConsumer(
            "t",
            bootstrap_servers="127.0.0.1:9",
            group_id="g",
            share_acknowledgement_mode="auto",  # type: ignore[arg-type]
        )
    consumer = ShareConsumer("t", bootstrap_servers="127.0.0.1:9", group_id="g")
    assert consumer.settings.share_acknowledgement_mode == "implicit"
    assert consumer.acquisition_lock_timeout_ms is None


# --- acknowledgement batches -------------------------------------------------------------------


def test_acknowledgements_go_as_runs_of_consecutive_offsets_of_one_type() -> None:
    acks = {5: ACCEPT, 3: ACCEPT, 4: ACCEPT, 6: RELEASE, 7: RELEASE, 9: RELEASE, 10: GAP}
    assert wire_batches(acks) == [
        WireBatch(3, 5, ACCEPT),
        WireBatch(6, 7, RELEASE),
        WireBatch(9, 9, RELEASE),
        WireBatch(10, 10, GAP),
    ]
    assert wire_batches({}) == []
    assert [int(t) for t in AcknowledgeType] == [1, 2, 3, 4]  # the wire values


# --- the session ---------------------------------------------------------------------------------


def fetch(
    session: ShareSession,
    wanted: list[int],
    acks: dict[int, list[WireBatch]] | None = None,
    *,
    version: int = 2,
) -> object:
    return session.fetch_request(
        [(TOPIC, p) for p in wanted],
        {(TOPIC, p): b for p, b in (acks or {}).items()},
        version=version,
        max_wait_ms=500,
        min_bytes=1,
        max_bytes=1000,
        max_records=10,
        acquire_mode=1,
    )


def named(request: object) -> list[int]:
    return [p.partition_index for t in request.topics for p in t.partitions]  # type: ignore[attr-defined]


def forgotten(request: object) -> list[int]:
    return [p for t in request.forgotten_topics_data for p in t.partitions]  # type: ignore[attr-defined]


def test_a_session_opens_at_epoch_0_then_names_only_what_changed() -> None:
    session = ShareSession(3, "g", "member")
    first = fetch(session, [0, 1])
    assert (first.share_session_epoch, named(first), forgotten(first)) == (0, [0, 1], [])  # type: ignore[attr-defined]
    session.advance()
    second = fetch(session, [1, 2], {1: [WireBatch(0, 4, ACCEPT)]})
    assert second.share_session_epoch == 1  # type: ignore[attr-defined]
    assert (named(second), forgotten(second)) == ([1, 2], [0])
    session.advance()
    third = fetch(session, [1, 2])
    assert (named(third), forgotten(third)) == ([], [])  # the broker fetches its session's


def test_no_acknowledgement_rides_an_epoch_0_fetch() -> None:
    session = ShareSession(3, "g", "member")
    with pytest.raises(AssertionError, match="epoch-0"):
        fetch(session, [0], {0: [WireBatch(0, 0, ACCEPT)]})


def test_acknowledgements_of_a_partition_not_fetched_go_alone() -> None:
    session = ShareSession(3, "g", "member")
    fetch(session, [0])
    session.advance()
    with pytest.raises(AssertionError, match="ShareAcknowledge"):
        fetch(session, [0], {1: [WireBatch(0, 0, ACCEPT)]})
    alone = session.acknowledge_request({(TOPIC, 1): [WireBatch(0, 0, ACCEPT)]}, version=1)
    assert (alone.share_session_epoch, named(alone)) == (1, [1])
    assert session.partitions == {(TOPIC, 0)}  # a ShareAcknowledge adds nothing to it


def test_an_ended_session_starts_again_at_epoch_0_as_a_new_incarnation() -> None:
    session = ShareSession(3, "g", "member")
    fetch(session, [0])
    session.advance()
    session.end(RuntimeError("lost"))
    assert (session.epoch, session.incarnation, session.partitions) == (0, 1, set())
    again = fetch(session, [0])
    assert (again.share_session_epoch, named(again)) == (0, [0])  # type: ignore[attr-defined]


def test_the_epoch_wraps_to_1_and_the_final_epoch_closes() -> None:
    session = ShareSession(3, "g", "member")
    session.epoch = 2**31 - 1
    session.advance()
    assert session.epoch == 1
    final = session.acknowledge_request({}, version=1, final=True)
    assert final.share_session_epoch == -1


def test_v1_has_no_acquire_mode_and_cannot_carry_renew() -> None:
    session = ShareSession(3, "g", "member")
    assert fetch(session, [0], version=1).__version__ == 1  # record_limit dropped: ignorable
    session.advance()
    with pytest.raises(VersionConversionError, match="is_renew_ack"):
        session.acknowledge_request({(TOPIC, 0): [WireBatch(0, 0, RENEW)]}, version=1)
    assert session.acknowledge_request(
        {(TOPIC, 0): [WireBatch(0, 0, RENEW)]}, version=2
    ).is_renew_ack


# --- what the member holds -----------------------------------------------------------------------


async def test_an_acquisition_held_already_is_no_new_delivery_but_a_higher_count_is() -> None:
    holdings = Holdings()
    assert holdings.acquire(TP, 1, 0, [(0, 2, 1)]) == {0: 1, 1: 1, 2: 1}
    # librdkafka's mock lists again what the member holds: not delivered twice.
    assert holdings.acquire(TP, 1, 0, [(0, 3, 1)]) == {3: 1}
    # The lock expired and the record came back: a new delivery.
    assert holdings.acquire(TP, 1, 0, [(1, 1, 2)]) == {1: 2}


async def test_acknowledgements_are_grouped_by_broker_and_session_and_settle_once() -> None:
    holdings = Holdings()
    holdings.acquire(TP, 1, 0, [(0, 1, 1)])
    holdings.acquire(TP, 2, 5, [(2, 2, 1)])  # the partition's new leader
    tickets = holdings.queue(TP, {0: ACCEPT, 1: REJECT, 2: ACCEPT, 9: ACCEPT})  # 9: not held
    assert sorted((t.node, t.incarnation, t.acks) for t in tickets) == [
        (1, 0, {0: ACCEPT, 1: REJECT}),
        (2, 5, {2: ACCEPT}),
    ]
    assert not holdings.holds(TP, 0)
    holdings.settle(tickets, None)
    holdings.settle(tickets, RuntimeError("late"))  # type: ignore[arg-type]
    assert [t.done.result() for t in tickets] == [None, None]
    assert len(holdings.settled) == 2
    assert not holdings.unsettled


async def test_a_renewed_record_is_held_and_delivered_again() -> None:
    holdings = Holdings()
    holdings.acquire(TP, 1, 0, [(0, 0, 1)])
    (record,) = read(ShareCompletedFetch(TP, 1, batches(1), {0: 1}, lambda *_: None))
    holdings.handed_out(TP, [record])
    (ticket,) = holdings.queue(TP, {0: RENEW})
    holdings.settle([ticket], None)
    assert holdings.holds(TP, 0)
    assert list(holdings.renewed) == [record]


# --- reading what a fetch acquired ---------------------------------------------------------------


def batches(*sizes: int, start: int = 0) -> deque[Batch]:
    """Batches of ``sizes`` records each, from offset ``start`` on; values are b"<offset>"."""
    data = b""
    offset = start
    for size in sizes:
        builder = RecordBatchBuilder(base_offset=offset)
        for i in range(size):
            builder.append(None, b"%d" % (offset + i), timestamp=0)
        data += builder.build()
        offset += size
    return deque(decode_batches(data))


def read(done: ShareCompletedFetch, wanted: int = 100) -> list[object]:
    records, error = done.take(wanted, None, None)
    assert error is None
    return records


def test_only_acquired_records_are_handed_out_and_missing_ones_are_gaps() -> None:
    answered: list[tuple[TopicPartition, dict[int, int]]] = []
    acquired = {1: 1, 2: 3, 6: 1, 7: 1, 12: 1}  # 7: compacted away; 12: past the batches
    data = batches(3, 3)  # offsets 0-5
    data += batches(2, start=8)  # 6 and 7 missing
    done = ShareCompletedFetch(TP, 1, data, acquired, lambda tp, a: answered.append((tp, a)))
    records = read(done)
    assert [(r.offset, r.delivery_count) for r in records] == [(1, 1), (2, 3)]  # type: ignore[attr-defined]
    assert answered == [(TP, {6: GAP, 7: GAP}), (TP, {12: GAP})]
    assert done.exhausted


def test_records_come_in_pieces_of_the_size_asked() -> None:
    done = ShareCompletedFetch(TP, 1, batches(5), dict.fromkeys(range(5), 1), lambda *_: None)
    assert [r.offset for r in read(done, 2)] == [0, 1]  # type: ignore[attr-defined]
    assert [r.offset for r in read(done, 2)] == [2, 3]  # type: ignore[attr-defined]
    assert done.offsets_left() == [4]


def test_a_transaction_marker_acquired_is_a_gap() -> None:
    marker = end_transaction_batch(
        EndTransactionMarker(ControlType.COMMIT, 0),
        producer_id=1,
        producer_epoch=0,
        timestamp=0,
        base_offset=2,
    )
    data = batches(2)
    data += deque(decode_batches(marker))
    answered: list[dict[int, int]] = []
    done = ShareCompletedFetch(TP, 1, data, {0: 1, 1: 1, 2: 1}, lambda _, a: answered.append(a))
    assert [r.offset for r in read(done)] == [0, 1]  # type: ignore[attr-defined]
    assert answered == [{2: GAP}]


def test_a_record_that_fails_to_deserialize_is_released_after_the_records_before_it() -> None:
    answered: list[dict[int, int]] = []
    done = ShareCompletedFetch(
        TP, 1, batches(4), dict.fromkeys(range(4), 1), lambda _, a: answered.append(a)
    )

    def value(data: bytes | None) -> bytes:
        if data == b"1":
            raise ValueError("bad")
        return data or b""

    records, error = done.take(10, None, value)
    assert ([r.offset for r in records], error) == ([0], None)
    records, error = done.take(10, None, value)
    assert records == []
    assert isinstance(error, ShareRecordDeserializationError)
    assert (error.offset, error.delivery_count, error.origin) == (1, 1, "value")
    assert answered == [{1: RELEASE}]
    records, error = done.take(10, None, value)
    assert ([r.offset for r in records], error) == ([2, 3], None)


def test_a_batch_that_cannot_be_read_has_its_acquired_records_released() -> None:
    good = RecordBatchBuilder(base_offset=0)
    good.append(None, b"0", timestamp=0)
    builder = RecordBatchBuilder(base_offset=1)
    builder.append(None, b"1", timestamp=0)
    builder.append(None, b"2", timestamp=0)
    bad = bytearray(builder.build())
    bad[-1] ^= 0xFF  # the crc no longer matches
    data, error = deque[Batch](), None
    try:  # as the fetcher reads a response: the batches, then what stopped the reading
        for batch in decode_batches(good.build() + bytes(bad), check_crcs=True):
            data.append(batch)
    except CorruptRecordError as exc:
        error = exc
    answered: list[dict[int, int]] = []
    done = ShareCompletedFetch(
        TP, 1, data, {0: 1, 1: 1, 2: 1}, lambda _, a: answered.append(a), error=error
    )
    records, stopped = done.take(10, None, None)
    assert ([r.offset for r in records], stopped) == ([0], None)
    records, stopped = done.take(10, None, None)
    assert records == []
    assert isinstance(stopped, CorruptRecordError)
    assert "its 2 acquired records were released" in str(stopped)
    assert answered == [{1: RELEASE, 2: RELEASE}]
    assert done.exhausted


# --- the member's states --------------------------------------------------------------------------


def member(state: MemberState) -> ShareMembership:
    tasks = BackgroundTasks(restart_delay=0)
    made = ShareMembership(
        Cluster("127.0.0.1:1"),
        "g",
        rack=None,
        backoff_ms=100,
        assigned=lambda _: None,
        tasks=tasks,
        inbox=Inbox(tasks),
        metrics=ShareConsumerMetrics(Metrics()),
    )
    made.state = state
    return made


@every_pair(MemberState)
async def test_every_move_of_the_share_table_works_and_every_other_raises(
    source: MemberState, target: MemberState
) -> None:
    check_move(SHARE_MOVES, member(source), source, target)


def test_every_state_a_share_member_uses_can_reach_closed() -> None:
    used = {s for move in SHARE_MOVES for s in move}
    for start in used - {MemberState.CLOSED}:
        seen, todo = {start}, [start]
        while todo:
            for nxt in SHARE_MOVES.targets(todo.pop()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        assert MemberState.CLOSED in seen, start
