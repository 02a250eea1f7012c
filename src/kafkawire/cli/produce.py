"""``kafkawire produce``: records from lines of input."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

import click
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from kafkawire.errors import KafkawireError
from kafkawire.producer import Producer

from ._common import (
    CONTEXT_SETTINGS,
    BrokerArgs,
    Failure,
    Interrupted,
    broker_options,
    debug_option,
    format_option,
    key_values,
    plural,
    run,
    topic_name,
)
from ._input import Header, InputRecord, InvalidLine, json_record, numbered_records, text_record
from ._lines import LineReader
from ._stats import PRODUCER, Stats, stats_option
from ._tally import DeliveryTally

__all__ = ["produce"]

_CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
# A JSON string may write a byte as six characters (\u0000): a JSON line up to six times
# max_request_size may still hold a record that fits.
_JSON_EXPANSION = 6


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("topic", callback=topic_name)
@click.option(
    "--file",
    "source",
    type=click.File("rb"),
    default="-",
    metavar="FILE",
    help="Read FILE instead of stdin.",
)
@format_option("text: a record per line; json: an object per line.")
@click.option(
    "--key-separator", metavar="SEP", help="text: the key is what comes before the first SEP."
)
@click.option(
    "--header",
    "headers",
    multiple=True,
    metavar="KEY=VALUE",
    callback=key_values,
    help="A header on every record (repeatable).",
)
@click.option(
    "--compression",
    type=click.Choice(_CODECS),
    default="none",
    show_default=True,
    help="Compress each batch with this codec.",
)
@click.option(
    "--partition",
    type=click.IntRange(min=0),
    metavar="N",
    help="Send every record to partition N. [default: by key, as Kafka's Java client does]",
)
@stats_option
@broker_options
@debug_option
def produce(
    *,
    broker: BrokerArgs,
    topic: str,
    source: BinaryIO,
    fmt: str,
    key_separator: str | None,
    headers: dict[str, str],
    compression: str,
    partition: int | None,
    stats: bool,
) -> None:
    """Send each line of stdin (or --file) to TOPIC as a record.

    With --format json each line is an object with "value" and optionally "key", "headers",
    "partition" and "timestamp"; keys and values are strings (sent as UTF-8),
    {"base64": "..."} or null: what consume --format json prints (its "topic" and "offset"
    are ignored). --partition sends every record to that partition, whatever the lines say.
    A line longer than a record can be (the producer's max_request_size, six times that for
    JSON) is refused. Shows a progress bar with the rate when stderr is a terminal, and a
    summary at the end; a bad line stops the input, and the summary says how many records
    before it were written. Ctrl-C stops reading: what was sent is delivered, the summary
    says after which line it stopped and how many bytes read were not sent, and the exit
    code is 130 (a second Ctrl-C stops at once). --stats adds the producer's rates and
    latencies.

    \b
    Examples:
      echo hello | kafkawire produce greetings -b localhost:9092
      kafkawire produce orders --key-separator : --header source=import < orders.txt
      kafkawire produce orders --format json --file records.jsonl --compression zstd
      kafkawire consume a --format json --exit-at-end | kafkawire produce b --format json
      kafkawire produce orders --stats < orders.txt
    """
    common: list[Header] = [(k, v.encode()) for k, v in headers.items()]
    separator = key_separator.encode() if key_separator else None

    def parse(line: bytes) -> InputRecord:
        return json_record(line, common) if fmt == "json" else text_record(line, separator, common)

    target = _Target(topic, partition, _JSON_EXPANSION if fmt == "json" else 1)
    started = time.monotonic()
    shown = Stats(stats)
    with _progress() as advance:
        tally, error, interrupted = run(
            _send_all(
                broker,
                target,
                source=source,
                parse=parse,
                compression=compression,
                advance=advance,
                stats=shown,
            )
        )
    seconds = time.monotonic() - started
    shown.print(seconds)  # before the summary: a failure below still shows them
    records = plural(tally.written, "record")
    where = f"to {topic}"
    if tally.partitions:
        numbers = ",".join(map(str, sorted(tally.partitions)))
        where += f" ({'partitions' if len(tally.partitions) > 1 else 'partition'} {numbers})"
    failure = Interrupted if interrupted else Failure
    if tally.failed:
        # Records queued after the failed one may have been written after it: no "before it".
        failed = f"{plural(tally.failed, 'record')} failed, the first with: {tally.first_failure}"
        raise failure(f"{error + '; ' if error else ''}{failed}; {records} written {where}")
    if error:
        raise failure(f"{error}; {records} written {where} before it")
    # A rate over a fraction of a second says more about start-up than about throughput.
    rate = f", {tally.written / seconds:,.0f} records/s" if seconds >= 1 else ""
    click.echo(f"Produced {records} {where} in {seconds:.1f} s{rate}", err=True)


@dataclass(frozen=True)
class _Target:
    topic: str
    partition: int | None  # --partition: every record goes there
    expansion: int  # how many bytes of a line may stand for one byte of its record


async def _send_all(
    broker: BrokerArgs,
    target: _Target,
    *,
    source: BinaryIO,
    parse: Callable[[bytes], InputRecord],
    compression: str,
    advance: Callable[[], None],
    stats: Stats,
) -> tuple[DeliveryTally, str | None, bool]:
    """Send every line; return the tally of the deliveries, the error that stopped the
    input (a bad line, a record the producer refuses, or a failed delivery, or Ctrl-C) and
    whether Ctrl-C did."""
    tally = DeliveryTally()
    error = None
    number = 0
    async with broker.producer(compression_type=compression) as producer:
        stats.watch(producer, PRODUCER)
        topic = target.topic
        if target.partition is not None:
            await _check_partition(producer, topic, target.partition)
        reader = LineReader(source, producer.settings.max_request_size * target.expansion)
        records = numbered_records(reader, parse)
        try:
            with _on_interrupt(reader.interrupt):
                async with contextlib.aclosing(records):
                    async for number, record in records:
                        try:
                            delivery = await producer.send(
                                topic,
                                record.value,
                                record.key,
                                partition=_first(target.partition, record.partition),
                                timestamp_ms=record.timestamp,
                                headers=record.headers,
                            )
                        except KafkawireError as exc:
                            error = f"line {number}: {exc}"
                            break
                        await tally.add(delivery)
                        if tally.failed:  # later records would be written after a gap
                            break
                        advance()
        except InvalidLine as exc:
            error = str(exc)
        if reader.interrupted:
            where = f"after line {number}" if number else "before the first line"
            unsent = f": {plural(reader.unsent, 'byte')} read after it were not sent"
            error = f"interrupted {where}{unsent if reader.unsent else ''}"
        await producer.flush()
    tally.settle()
    return tally, error, reader.interrupted


@contextlib.contextmanager
def _on_interrupt(interrupt: Callable[[], None]) -> Iterator[None]:
    """Ctrl-C (SIGINT) calls ``interrupt`` once; a second one stops at once, as before
    (KeyboardInterrupt). Only the main thread gets signals (not a test's CliRunner thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()

    def first() -> None:
        loop.remove_signal_handler(signal.SIGINT)  # back to KeyboardInterrupt
        interrupt()

    loop.add_signal_handler(signal.SIGINT, first)
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)


async def _check_partition(producer: Producer, topic: str, partition: int) -> None:
    partitions = await producer.partitions_for(topic)
    if partition not in partitions:
        raise click.BadParameter(
            f"topic {topic!r} has {plural(len(partitions), 'partition')}"
            f" (0-{len(partitions) - 1}): {partition} is not one of them",
            param_hint="'--partition'",
        )


def _first(*numbers: int | None) -> int | None:
    return next((n for n in numbers if n is not None), None)


@contextlib.contextmanager
def _progress() -> Iterator[Callable[[], None]]:
    """A progress bar on stderr, when it is a terminal, of the records handed to the producer
    and their rate. The producer's buffer is bounded, so on long input that rate is the
    delivery rate; the bar is transient, and the summary line gives the delivered count."""
    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda: None
        return
    columns = (
        SpinnerColumn(),
        TextColumn("{task.completed:,} records queued"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[rate]}"),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("produce", total=None, rate="")
        unshown = 0
        shown_at = time.monotonic()

        # Updating the bar for every record would cost more than queueing the record.
        def advance() -> None:
            nonlocal unshown, shown_at
            unshown += 1
            if time.monotonic() - shown_at >= 0.1:
                bar.advance(task, unshown)
                speed = bar.tasks[task].speed
                bar.update(task, rate=f"{speed:,.0f} records/s" if speed else "")
                unshown, shown_at = 0, time.monotonic()

        yield advance
