"""read_committed filtering and control records, as Kafka's consumer applies them."""

from __future__ import annotations

import pytest

from kafkawire.messages.fetch import v4 as fetch_v4
from kafkawire.records import (
    AbortedTransaction,
    Batch,
    ControlType,
    CorruptRecordError,
    EndTransactionMarker,
    InvalidRecordError,
    LegacyBatchBuilder,
    ReadCommittedFilter,
    Record,
    RecordBatchBuilder,
    control_type,
    decode_batches,
    decode_end_transaction_marker,
    end_transaction_batch,
    read_committed,
)


def _data(base_offset: int, producer_id: int = -1, *, transactional: bool = False) -> bytes:
    builder = RecordBatchBuilder(
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1,
        transactional=transactional,
    )
    builder.append(None, f"at {base_offset}".encode(), timestamp=base_offset)
    builder.append(None, f"at {base_offset + 1}".encode(), timestamp=base_offset)
    return builder.build()


def _marker(base_offset: int, producer_id: int, kind: ControlType) -> bytes:
    marker = EndTransactionMarker(kind, coordinator_epoch=0)
    return end_transaction_batch(
        marker, producer_id=producer_id, producer_epoch=0, timestamp=0, base_offset=base_offset
    )


def _log() -> list[Batch]:
    """Producer 1 aborts, producer 2 commits, in between a plain batch, then 1 commits."""
    parts = [
        _data(0, 1, transactional=True),  # 0-1: aborted
        _data(2, 2, transactional=True),  # 2-3: committed at 7
        _data(4),  # 4-5: not transactional
        _marker(6, 1, ControlType.ABORT),  # 6
        _marker(7, 2, ControlType.COMMIT),  # 7
        _data(8, 1, transactional=True),  # 8-9: producer 1's next transaction, committed
        _data(10, 3),  # 10-11: idempotent, not transactional: always visible
        _marker(12, 1, ControlType.COMMIT),  # 12
    ]
    return list(decode_batches(b"".join(parts)))


def _offsets(batches: list[Batch]) -> list[int]:
    return [r.offset for b in batches for r in b.records]


def test_aborted_transactions_and_markers_are_dropped() -> None:
    aborted = [AbortedTransaction(producer_id=1, first_offset=0)]
    assert _offsets(list(read_committed(_log(), aborted))) == [2, 3, 4, 5, 8, 9, 10, 11]


def test_the_fetch_responses_own_aborted_transactions_work_as_they_are() -> None:
    aborted = (fetch_v4.AbortedTransaction(producer_id=1, first_offset=0),)
    assert _offsets(list(read_committed(_log(), aborted))) == [2, 3, 4, 5, 8, 9, 10, 11]


@pytest.mark.parametrize("aborted", [None, []])
def test_without_aborted_transactions_only_control_batches_are_dropped(
    aborted: list[AbortedTransaction] | None,
) -> None:
    assert _offsets(list(read_committed(_log(), aborted))) == [0, 1, 2, 3, 4, 5, 8, 9, 10, 11]


def test_an_abort_starting_later_leaves_earlier_batches_visible() -> None:
    # Producer 1 listed as aborted from offset 8: its first transaction (0-1) stays visible.
    aborted = [AbortedTransaction(producer_id=1, first_offset=8)]
    assert _offsets(list(read_committed(_log(), aborted))) == [0, 1, 2, 3, 4, 5, 10, 11]


def test_the_filter_takes_batches_one_at_a_time() -> None:
    log = _log()
    keep = ReadCommittedFilter([AbortedTransaction(producer_id=2, first_offset=2)])
    assert [keep.accepts(b) for b in log] == [True, False, True, False, False, True, True, False]


def test_legacy_batches_always_pass() -> None:
    builder = LegacyBatchBuilder(1, base_offset=0)
    builder.append(None, b"v", timestamp=0)
    [batch] = decode_batches(builder.build())
    assert ReadCommittedFilter([AbortedTransaction(producer_id=-1, first_offset=0)]).accepts(batch)


def test_an_empty_control_batch_is_dropped_without_looking_inside() -> None:
    empty = RecordBatchBuilder(producer_id=1, producer_epoch=0, transactional=True, control=True)
    [batch] = decode_batches(empty.build())
    assert not ReadCommittedFilter([]).accepts(batch)


def _control_record(key: bytes | None, value: bytes | None = None) -> Record:
    return Record(0, 0, key, value)


def test_control_types_beyond_the_markers_are_named_or_kept_as_ints() -> None:
    assert control_type(_control_record(bytes.fromhex("00000002"))) is ControlType.LEADER_CHANGE
    assert control_type(_control_record(bytes.fromhex("00010063"))) == 99


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        (None, b"", "no valid key"),
        (b"\x00\x00\x00", b"", "no valid key"),
        (bytes.fromhex("00000002"), bytes(6), "is type 2"),
        (bytes.fromhex("00000001"), bytes(5), "no valid value"),
        (bytes.fromhex("00000000"), None, "no valid value"),
    ],
)
def test_malformed_markers_are_errors(key: bytes | None, value: bytes | None, reason: str) -> None:
    with pytest.raises(CorruptRecordError, match=reason):
        decode_end_transaction_marker(_control_record(key, value))


def test_newer_marker_versions_keep_their_known_fields() -> None:
    record = _control_record(bytes.fromhex("00000000"), bytes.fromhex("000100000009ff"))
    assert decode_end_transaction_marker(record) == EndTransactionMarker(
        ControlType.ABORT, 9, version=1
    )


def test_only_abort_and_commit_make_end_transaction_batches() -> None:
    with pytest.raises(InvalidRecordError, match="ABORT or COMMIT"):
        end_transaction_batch(
            EndTransactionMarker(ControlType.LEADER_CHANGE, 0),
            producer_id=1,
            producer_epoch=0,
            timestamp=0,
        )
