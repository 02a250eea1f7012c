"""``kafkawire consume``: records of a topic's partitions, read directly, as a member of a
consumer group (``--group``) that commits what it printed, or as a member of a share group
(``--share-group``) that acknowledges what it printed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import AsyncGenerator, Callable, Sequence

import click

from kafkawire.client import EARLIEST, LATEST, KafkaClient
from kafkawire.consumer import AcknowledgeType, ConsumerRecord
from kafkawire.records import Record

from ._common import (
    CONTEXT_SETTINGS,
    INT64,
    BrokerArgs,
    Failure,
    broker_options,
    debug_option,
    format_option,
    plural,
    run,
    timestamp_ms,
    topic_name,
)
from ._json import record_json
from ._stats import CONSUMER, KAFKA_CLIENT, Stats, stats_option

__all__ = ["consume"]


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("topic", callback=topic_name)
@click.option("--from-beginning", is_flag=True, help="Start at the earliest offset.")
@click.option(
    "--offset",
    type=click.IntRange(-INT64, INT64),
    metavar="N",
    help="Start at offset N; a negative N starts N records before the end.",
)
@click.option(
    "--timestamp",
    callback=timestamp_ms,
    metavar="T",
    help="Start at the first record at or after T (ms since the epoch, or ISO 8601).",
)
@click.option(
    "--partition",
    "partitions",
    type=click.IntRange(min=0),
    metavar="P",
    multiple=True,
    help="Read only this partition (repeatable). [default: all]",
)
@click.option(
    "--max-messages", type=click.IntRange(min=1), metavar="N", help="Stop after N records."
)
@click.option(
    "-e",
    "--exit-at-end",
    is_flag=True,
    help="Stop at the end of the partitions instead of waiting.",
)
@format_option("text: the values; json: a JSON object per line.")
@click.option(
    "--group",
    metavar="G",
    help="Read as a member of consumer group G: its partitions are shared with the group's "
    "other members, and what was printed is committed (on exit too).",
)
@click.option(
    "--share-group",
    metavar="G",
    help="Read as a member of share group G (KIP-932, Kafka 4.1+): records are shared "
    "among the group's members one by one, and each one printed is acknowledged (accepted); "
    "what was fetched but not printed is released for the others. Where the group starts "
    "reading is the group's setting (share.auto.offset.reset).",
)
@stats_option
@broker_options
@debug_option
def consume(
    *,
    broker: BrokerArgs,
    topic: str,
    from_beginning: bool,
    offset: int | None,
    timestamp: int | None,
    partitions: Sequence[int],
    max_messages: int | None,
    exit_at_end: bool,
    fmt: str,
    group: str | None,
    share_group: str | None,
    stats: bool,
) -> None:
    """Print the records of TOPIC: new ones, unless told where to start.

    With --format json each record is a line {"topic", "partition", "offset", "timestamp",
    "key", "value", "headers"}; keys, values and header values are strings when they are
    UTF-8 and {"base64": "..."} when not, and headers are [key, value] pairs. Ctrl-C stops
    (exit code 130), after --group has committed what was printed.
    --stats adds, at the end, the client's rates and latencies (with --group, the consumer's:
    fetches, lag, commits, rebalances).

    \b
    Examples:
      kafkawire consume orders -b localhost:9092
      kafkawire consume orders --from-beginning --max-messages 10 --format json
      kafkawire consume orders --partition 0 --offset -5 --exit-at-end
      kafkawire consume orders --timestamp 2026-11-23T09:00 --format json | jq .value
      kafkawire consume orders --group billing --from-beginning
      kafkawire consume orders --share-group workers --max-messages 100
      kafkawire consume orders --group billing --max-messages 1000 --stats
    """
    starts = [from_beginning, offset is not None, timestamp is not None]
    if sum(starts) > 1:
        raise click.UsageError("give one of --from-beginning, --offset and --timestamp")
    if group is not None and (offset is not None or timestamp is not None or partitions):
        raise click.UsageError(
            "--group takes its partitions and positions from the group: "
            "not with --offset, --timestamp or --partition"
        )
    if group is not None and exit_at_end:
        raise click.UsageError("--group reads until stopped: not with --exit-at-end")
    if share_group is not None and (group is not None or any(starts) or partitions or exit_at_end):
        raise click.UsageError(
            "--share-group reads what the share group hands out: not with --group, "
            "--from-beginning, --offset, --timestamp, --partition or --exit-at-end"
        )
    start = EARLIEST if from_beginning else timestamp if timestamp is not None else LATEST
    count = 0

    def show(partition: int, record: Record | ConsumerRecord) -> bool:
        nonlocal count
        count += 1
        if fmt == "json":
            sys.stdout.write(
                json.dumps({"topic": topic, "partition": partition, **record_json(record)}) + "\n"
            )
        else:
            sys.stdout.buffer.write((record.value or b"") + b"\n")
        sys.stdout.flush()
        return max_messages is not None and count >= max_messages

    shown = Stats(stats)
    reading = (
        _read_in_group(broker, topic, group, from_beginning=from_beginning, show=show, stats=shown)
        if group is not None
        else _read_shared(broker, topic, share_group, show=show)
        if share_group is not None
        else _read(
            broker,
            topic,
            list(partitions),
            start=start,
            offset=offset,
            exit_at_end=exit_at_end,
            show=show,
            stats=shown,
        )
    )
    started = time.monotonic()
    # Ctrl-C is how a reader without --max-messages ends: the group commits what was printed
    # as it leaves (asyncio.run cancels the reading), then the summary, and exit 130 as for
    # any command interrupted (Kafka's console consumer too), so a script can tell it from
    # the end of --max-messages or --exit-at-end.
    interrupted = False
    try:
        run(reading)
    except KeyboardInterrupt:
        interrupted = True
    shown.print(time.monotonic() - started, [] if group else [("records read", count)])
    click.echo(f"Consumed {plural(count, 'record')}", err=True)
    if interrupted:
        raise click.exceptions.Exit(130)


async def _read(
    broker: BrokerArgs,
    topic: str,
    partitions: list[int],
    *,
    start: int,
    offset: int | None,
    exit_at_end: bool,
    show: Callable[[int, Record | ConsumerRecord], bool],
    stats: Stats,
) -> None:
    async with broker.client() as client:
        stats.watch(client, KAFKA_CLIENT)
        starts = {
            p: await _first(client, topic, p, start, offset)
            for p in partitions or await _partitions_of(client, topic)
        }
        async with contextlib.aclosing(
            _merged(client, topic, starts, exit_at_end=exit_at_end)
        ) as records:
            async for partition, record in records:
                if show(partition, record):
                    return


async def _read_in_group(
    broker: BrokerArgs,
    topic: str,
    group: str,
    *,
    from_beginning: bool,
    show: Callable[[int, Record | ConsumerRecord], bool],
    stats: Stats,
) -> None:
    """As a member of ``group``: commits what was shown, as it goes and when it stops."""
    reset = "earliest" if from_beginning else "latest"
    async with broker.consumer(topic, group_id=group, auto_offset_reset=reset) as consumer:
        stats.watch(consumer, CONSUMER)
        async for record in consumer:
            done = show(record.partition, record)
            if done:
                await consumer.commit()
                return


async def _read_shared(
    broker: BrokerArgs,
    topic: str,
    group: str,
    *,
    show: Callable[[int, Record | ConsumerRecord], bool],
) -> None:
    """As a member of share group ``group``: each record printed is accepted (the last ones
    on exit, with the close of the share sessions); the rest is released when it closes."""
    async with broker.share_consumer(
        topic, group_id=group, share_acknowledgement_mode="explicit"
    ) as consumer:
        async for record in consumer:
            done = show(record.partition, record)
            consumer.acknowledge(record, AcknowledgeType.ACCEPT)
            if done:
                await consumer.commit()
                return


async def _merged(
    client: KafkaClient, topic: str, starts: dict[int, int], *, exit_at_end: bool
) -> AsyncGenerator[tuple[int, Record]]:
    """The records of all the partitions, as they come; a partition's error ends them all."""
    queue: asyncio.Queue[tuple[int, Record] | Exception | None] = asyncio.Queue(maxsize=1000)

    async def pump(partition: int, offset: int) -> None:
        try:
            async for record in client.records(topic, partition, offset, stop_at_end=exit_at_end):
                await queue.put((partition, record))
        except Exception as exc:  # handed to the reader of the queue, which raises it
            await queue.put(exc)
            return
        await queue.put(None)  # this partition reached its end

    pumps = [asyncio.create_task(pump(p, offset)) for p, offset in starts.items()]
    try:
        running = len(pumps)
        while running:
            item = await queue.get()
            if item is None:
                running -= 1
            elif isinstance(item, Exception):
                raise item
            else:
                yield item
    finally:
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)


async def _first(
    client: KafkaClient, topic: str, partition: int, start: int, offset: int | None
) -> int:
    if offset is not None and offset >= 0:
        return offset
    found = (
        await client.list_offsets(topic, partition, start if offset is None else LATEST)
    ).offset
    if offset is not None:  # N records before the end, never before the beginning
        earliest = (await client.list_offsets(topic, partition, EARLIEST)).offset
        return max(found + offset, earliest)
    if found < 0:  # no record at or after the timestamp: from the end
        return (await client.list_offsets(topic, partition, LATEST)).offset
    return found


async def _partitions_of(client: KafkaClient, topic: str) -> list[int]:
    metadata = await client.cluster.metadata([topic])
    described = metadata.topics.get(topic)
    if described is None or not described.partitions:
        raise Failure(f"topic {topic!r} does not exist")
    return sorted(described.partitions)
