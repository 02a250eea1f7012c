"""What one share fetch acquires of one share partition, and what it sends back (Kafka's
``SharePartition.acquire`` with KIP-1206's acquire modes).

The broker reads the log from the share partition's next fetch offset (its first available
offset, else its end) up to the high watermark: whole record batches, as many as fit in the
partition's byte limit (the first always). Of the offsets those batches hold it acquires the
available ones and the ones never fetched, up to ``max_records``:

- *batch_optimized* (mode 0, and every version before 2): the limit is soft; acquisition stops
  at the end of the log batch in which it was reached. With a ``batch_size``, each run of
  acquired offsets longer than it is cut into ranges at the log batch boundaries that keep
  each range near it.
- *record_limit* (mode 1, v2): exactly ``max_records`` at most; the rest of the last batch
  is taken in flight as available (delivery count 0). Its ranges are not cut.

Every offset of a batch is acquired, records or not (control records, offsets compaction
removed): the member acknowledges those as GAP. Acquired offsets come back as ranges of
consecutive offsets with one delivery count, with the record batches that hold them.

New offsets are not fetched while the partition holds ``max_in_flight`` offsets from its
start (group.share.partition.max.record.locks); released and expired ones still are.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkawire.testing.fake.log import PartitionLog, StoredBatch

from .partition import SharePartition

__all__ = ["AcquiredRange", "Acquisition", "FetchLimits", "acquirable_bytes", "acquire"]


@dataclass(frozen=True, slots=True)
class FetchLimits:
    max_records: int
    max_bytes: int
    batch_size: int  # 0: ranges are not cut
    record_limit: bool  # ShareAcquireMode 1
    max_in_flight: int


@dataclass(frozen=True, slots=True)
class AcquiredRange:
    first: int
    last: int
    delivery_count: int

    @property
    def count(self) -> int:
        return self.last - self.first + 1


@dataclass(frozen=True, slots=True)
class Acquisition:
    ranges: tuple[AcquiredRange, ...]
    records: bytes

    @property
    def count(self) -> int:
        return sum(r.count for r in self.ranges)


NOTHING = Acquisition((), b"")


def acquire(
    partition: SharePartition, log: PartitionLog, member_id: str, lock: int, limits: FetchLimits
) -> Acquisition:
    """Acquire for ``member_id`` under ``lock`` what the module rules allow."""
    partition.follow_log_start(log.log_start_offset)
    start = partition.next_fetch_offset()
    if limits.max_records <= 0 or start >= log.high_watermark:
        return NOTHING
    batches = log.whole_batches(start, limits.max_bytes, log.high_watermark)
    offsets = _chosen(partition, batches, start, limits)
    if not offsets:
        return NOTHING
    acquired = partition.acquire(offsets, member_id, lock)
    if limits.record_limit:
        partition.extend(next(b.last_offset + 1 for b in batches if b.last_offset >= offsets[-1]))
    ranges = _ranges(acquired)
    if limits.batch_size > 0 and not limits.record_limit:
        ranges = [cut for r in ranges for cut in _cut(r, batches, limits.batch_size)]
    first, last = offsets[0], offsets[-1]
    held = [b for b in batches if b.last_offset >= first and b.base_offset <= last]
    return Acquisition(tuple(ranges), b"".join(b.data for b in held))


def _chosen(
    partition: SharePartition, batches: list[StoredBatch], start: int, limits: FetchLimits
) -> list[int]:
    chosen: list[int] = []
    for batch in batches:
        for offset in range(max(batch.base_offset, start), batch.last_offset + 1):
            new = offset >= partition.end_offset
            if new and offset - partition.start_offset >= limits.max_in_flight:
                return chosen
            if partition.is_available(offset):
                chosen.append(offset)
            if limits.record_limit and len(chosen) >= limits.max_records:
                return chosen
        if len(chosen) >= limits.max_records:
            return chosen
    return chosen


def _ranges(acquired: list[tuple[int, int]]) -> list[AcquiredRange]:
    ranges: list[AcquiredRange] = []
    for offset, count in acquired:
        last = ranges[-1] if ranges else None
        if last is not None and last.last + 1 == offset and last.delivery_count == count:
            ranges[-1] = AcquiredRange(last.first, offset, count)
        else:
            ranges.append(AcquiredRange(offset, offset, count))
    return ranges


def _cut(run: AcquiredRange, batches: list[StoredBatch], batch_size: int) -> list[AcquiredRange]:
    """``run`` cut at log batch boundaries once a piece reaches ``batch_size`` offsets
    (Kafka's ``BatchOptimizedStrategy.createBatches``)."""
    if run.count <= batch_size:
        return [run]
    pieces = []
    first = run.first
    for batch in batches:
        if batch.base_offset > run.last:
            break
        if batch.base_offset - first >= batch_size:
            pieces.append(AcquiredRange(first, batch.base_offset - 1, run.delivery_count))
            first = batch.base_offset
    pieces.append(AcquiredRange(first, run.last, run.delivery_count))
    return pieces


def acquirable_bytes(partition: SharePartition, log: PartitionLog, limits: FetchLimits) -> int:
    """About how many bytes a fetch would acquire now: the batches from the next fetch offset
    (what a delayed share fetch weighs against ``min_bytes``)."""
    partition.follow_log_start(log.log_start_offset)
    start = partition.next_fetch_offset()
    full = partition.end_offset - partition.start_offset >= limits.max_in_flight
    if limits.max_records <= 0 or (start == partition.end_offset and full):
        return 0
    return sum(len(b.data) for b in log.whole_batches(start, limits.max_bytes, log.high_watermark))
