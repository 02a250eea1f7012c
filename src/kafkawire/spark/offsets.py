"""Which partitions a read covers and where each range starts and ends (driver side).

End offsets come from the high watermark of a Fetch, not from ListOffsets "latest": the
embedded Tansu broker answers that wrongly (docs/design.md), and the high watermark is what a
reader stops at anyway. The earliest offsets come from ListOffsets "earliest". Offsets cross
into Spark as ``{topic: {"partition": offset}}`` JSON maps, as Spark's Kafka source writes them.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from dataclasses import dataclass

from kafkawire.client import EARLIEST as LIST_EARLIEST
from kafkawire.client import KafkaClient
from kafkawire.cluster import TopicPartition
from kafkawire.errors import UnknownTopicOrPartitionError

from .options import EARLIEST, LATEST, OffsetSpec, OptionError, ReadOptions, Timestamps

__all__ = [
    "UNRESOLVED_START",
    "Bounds",
    "DataLossError",
    "OffsetRange",
    "Offsets",
    "current_bounds",
    "data_lost",
    "from_json",
    "next_end",
    "rate_limited",
    "split",
    "starting_offsets",
    "to_json",
]

Offsets = dict[TopicPartition, int]
UNRESOLVED_START = {"kafkawire": "startingOffsets, resolved by batch 0"}
"""A stream's initial offset: never a ``{topic: {partition: offset}}`` map (its value is no
map), so no stream's offsets equal it."""
_UNKNOWN_TOPIC = UnknownTopicOrPartitionError.code
_log = logging.getLogger(__name__)


class DataLossError(RuntimeError):
    """Records a read was to return are gone (deleted by retention, or the topic recreated)."""


@dataclass(frozen=True, slots=True)
class Bounds:
    """A partition's first offset still kept and the offset after its last record."""

    earliest: int
    latest: int


@dataclass(frozen=True, slots=True)
class OffsetRange:
    """The records ``[start, end)`` of one partition: what one Spark task reads.

    ``start`` may be :data:`~.options.EARLIEST` (a partition that appeared after the stream
    started): the task reads from the first offset still kept.
    """

    topic: str
    partition: int
    start: int
    end: int


async def _partitions(
    client: KafkaClient, options: ReadOptions, *, must_exist: bool
) -> list[TopicPartition]:
    """The partitions a read covers. With ``must_exist``, a topic named by subscribe or assign
    that the cluster does not have is an error naming it (a stream that has started reads on
    without it, as it does without a partition that went away)."""
    if options.pattern is not None:
        metadata = await client.cluster.refresh_metadata(None)
        pattern = re.compile(options.pattern)
        topics = sorted(t for t in metadata.topics if pattern.fullmatch(t))
        return [TopicPartition(t, p) for t in topics for p in sorted(metadata.topics[t].partitions)]
    named = sorted({t for t, _ in options.assign} or set(options.subscribe))
    # Asked each time, not taken from the client's cache: a kept client (.worker) would see
    # partitions added to a topic only when its metadata ages out.
    metadata = await client.cluster.refresh_metadata(named)
    found = {t: metadata.topics[t] for t in named if t in metadata.topics}
    missing = [t for t in named if t not in found or found[t].error_code == _UNKNOWN_TOPIC]
    if missing and must_exist:
        option = "assign" if options.assign else "subscribe"
        raise UnknownTopicOrPartitionError(
            f"the topic {missing[0]!r} (option {option}) does not exist"
        )
    if options.assign:
        return [TopicPartition(t, p) for t, p in options.assign]
    return [TopicPartition(t, p) for t in found for p in sorted(found[t].partitions)]


async def _bounds(client: KafkaClient, tp: TopicPartition) -> Bounds:
    earliest = (await client.list_offsets(tp.topic, tp.partition, LIST_EARLIEST)).offset
    # Tansu answers a Fetch with max_wait_ms=0 with no partitions at all: wait 1 ms. Only the
    # high watermark is wanted: the answer is left undecoded, and asked as small as can be
    # (a broker sends a first batch whole however few bytes are asked for; Tansu sent more
    # unless max_bytes said so, and receiving and decoding that was most of latestOffset).
    fetched = await client.fetch_partition(
        tp.topic, tp.partition, earliest, max_wait_ms=1, max_bytes=1, partition_max_bytes=1
    )
    return Bounds(earliest, fetched.high_watermark)


async def current_bounds(
    client: KafkaClient, options: ReadOptions, *, must_exist: bool = False
) -> dict[TopicPartition, Bounds]:
    """Every subscribed partition, with its bounds now (``must_exist``: see ``_partitions``)."""
    partitions = await _partitions(client, options, must_exist=must_exist)
    bounds = await asyncio.gather(*(_bounds(client, tp) for tp in partitions))
    return dict(zip(partitions, bounds, strict=True))


async def starting_offsets(
    client: KafkaClient, spec: OffsetSpec, bounds: dict[TopicPartition, Bounds]
) -> Offsets:
    """Where ``spec`` says each partition starts (or ends: the same rules apply)."""
    if isinstance(spec, Timestamps):
        return await _by_time(client, spec, bounds)
    if isinstance(spec, str):
        return {tp: b.earliest if spec == "earliest" else b.latest for tp, b in bounds.items()}
    offsets: Offsets = {}
    for tp, b in bounds.items():
        given = spec.get(tp.topic, {}).get(tp.partition)
        if given is None:
            raise OptionError(f"the offsets given name no offset for {tp.topic}/{tp.partition}")
        offsets[tp] = {EARLIEST: b.earliest, LATEST: b.latest}.get(given, given)
    return offsets


async def _by_time(
    client: KafkaClient, spec: Timestamps, bounds: dict[TopicPartition, Bounds]
) -> Offsets:
    """Each partition's first offset at or after its time; the end where there is none, or an
    error (Spark's startingOffsetsByTimestampStrategy "error")."""
    times: dict[TopicPartition, int] = {}
    for tp in bounds:
        at = spec.at if isinstance(spec.at, int) else spec.at.get(tp.topic, {}).get(tp.partition)
        if at is None:
            raise OptionError(f"the timestamps given name none for {tp.topic}/{tp.partition}")
        times[tp] = at
    listed = await asyncio.gather(
        *(client.list_offsets(tp.topic, tp.partition, at) for tp, at in times.items())
    )
    offsets: Offsets = {}
    for (tp, b), found in zip(bounds.items(), listed, strict=True):
        if found.offset < 0 and spec.if_none == "error":
            raise OptionError(
                f"{tp.topic}/{tp.partition} has no record at or after the timestamp"
                f" {times[tp]}; set startingOffsetsByTimestampStrategy to latest to start"
                " such a partition at its end"
            )
        offsets[tp] = found.offset if found.offset >= 0 else b.latest
    return offsets


def data_lost(options: ReadOptions, message: str, instead: str) -> None:
    """Raise :class:`DataLossError`, or with failOnDataLoss false log ``message`` and go on
    as ``instead`` says."""
    if options.fail_on_data_loss:
        raise DataLossError(f"{message} (set failOnDataLoss to false to read on)")
    _log.warning("%s; %s (failOnDataLoss is false)", message, instead)


def next_end(
    begin: Offsets,
    bounds: dict[TopicPartition, Bounds],
    target: Offsets | None,
    max_rows: int | None,
    options: ReadOptions,
) -> Offsets:
    """Where a stream's next batch ends: at each partition's end now, no further than
    ``target`` (the end of a trigger(availableNow=True) run) and, with ``max_rows``, about that
    many records past ``begin``.

    A partition that came after the stream started begins at its earliest offset; one that went
    away stays where it was. A log that now ends below ``begin`` was replaced: data loss.
    """
    end = {tp: b.latest for tp, b in bounds.items()}
    origin = {tp: begin.get(tp, b.earliest) for tp, b in bounds.items()}
    end.update({tp: o for tp, o in begin.items() if tp not in end})
    if target is not None:  # partitions newer than the target do not move, none moves back
        stop = {tp: max(target.get(tp, o), o) for tp, o in origin.items()}
        end = {tp: min(o, stop.get(tp, o)) for tp, o in end.items()}
    for tp, offset in end.items():
        if offset < begin.get(tp, offset):
            message = (
                f"{tp.topic}/{tp.partition}: the log ends at {offset}, below the offset"
                f" {begin[tp]} the stream has reached; was the topic created again?"
            )
            data_lost(options, message, "reading it from its start")
            origin[tp] = bounds[tp].earliest  # the new log is read from its start
    if max_rows is not None:
        end = rate_limited({**begin, **origin}, end, max_rows)
    return end


def rate_limited(start: Offsets, end: Offsets, max_rows: int) -> Offsets:
    """``end`` cut so that about ``max_rows`` records are read, shared out by each partition's
    backlog as Spark's Kafka source does (a partition with any backlog moves by at least one)."""
    sizes = {tp: end[tp] - start.get(tp, end[tp]) for tp in end}
    total = sum(sizes.values())
    if total <= max_rows:
        return end
    limited: Offsets = {}
    for tp, offset in end.items():
        share = max_rows * sizes[tp] / total
        begin = start.get(tp, offset)
        limited[tp] = min(offset, begin + (math.floor(share) if share >= 1 else math.ceil(share)))
    return limited


def split(ranges: list[OffsetRange], min_partitions: int, max_records: int) -> list[OffsetRange]:
    """One range per partition, cut into pieces of at most ``max_records`` records, and into
    more pieces (by size) until there are at least ``min_partitions``."""
    known = [r for r in ranges if r.start >= 0]
    total = sum(r.end - r.start for r in known)
    per_piece = max_records
    if min_partitions > len(ranges) and total > 0:
        per_piece = min(per_piece, max(1, -(-total // min_partitions)))
    pieces = [r for r in ranges if r.start < 0]
    for r in known:
        pieces += [
            OffsetRange(r.topic, r.partition, s, min(s + per_piece, r.end))
            for s in range(r.start, r.end, per_piece)
        ]
    return pieces or ranges[:1]  # an empty read is still one (empty) task


def to_json(offsets: Offsets) -> dict[str, dict[str, int]]:
    """Spark's offset form, topics and partitions in order so equal offsets give equal JSON."""
    out: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        out.setdefault(tp.topic, {})[str(tp.partition)] = offsets[tp]
    return out


def from_json(offsets: dict[str, dict[str, int]]) -> Offsets:
    return {TopicPartition(t, int(p)): o for t, ps in offsets.items() for p, o in ps.items()}
