"""``kafkawire produce``: records from lines of input."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import BinaryIO

import click
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from kafkawire.errors import KafkawireError
from kafkawire.producer.batch import Delivery

from ._common import (
    CONTEXT_SETTINGS,
    BrokerArgs,
    Failure,
    broker_options,
    debug_option,
    format_option,
    key_values,
    plural,
    run,
)
from ._input import Header, InputRecord, InvalidLine, json_record, read_lines, text_record

__all__ = ["produce"]

_CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("topic")
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
) -> None:
    """Send each line of stdin (or --file) to TOPIC as a record.

    With --format json each line is an object with "value" and optionally "key", "headers"
    and "partition"; keys and values are strings (sent as UTF-8), {"base64": "..."} or
    null: what consume --format json prints. Shows a progress bar with the rate when stderr
    is a terminal, and a summary at the end.

    \b
    Examples:
      echo hello | kafkawire produce greetings -b localhost:9092
      kafkawire produce orders --key-separator : --header source=import < orders.txt
      kafkawire produce orders --format json --file records.jsonl --compression zstd
      kafkawire consume a --format json --exit-at-end | kafkawire produce b --format json
    """
    common: list[Header] = [(k, v.encode()) for k, v in headers.items()]
    separator = key_separator.encode() if key_separator else None

    def parse(line: bytes) -> InputRecord:
        return json_record(line, common) if fmt == "json" else text_record(line, separator, common)

    options = {"compression_type": compression}
    started = time.monotonic()
    with _progress() as advance:
        count, partitions, error = run(
            _send_all(
                broker, topic=topic, source=source, parse=parse, options=options, advance=advance
            )
        )
    seconds = time.monotonic() - started
    summary = f"{plural(count, 'record')} to {topic}"
    if partitions:
        numbers = ",".join(map(str, sorted(partitions)))
        summary += f" ({'partitions' if len(partitions) > 1 else 'partition'} {numbers})"
    if error:
        raise Failure(f"{error}; {summary} before it")
    # A rate over a fraction of a second says more about start-up than about throughput.
    rate = f", {count / seconds:,.0f} records/s" if seconds >= 1 else ""
    click.echo(f"Produced {summary} in {seconds:.1f} s{rate}", err=True)


async def _send_all(
    broker: BrokerArgs,
    *,
    topic: str,
    source: BinaryIO,
    parse: Callable[[bytes], InputRecord],
    options: dict[str, str],
    advance: Callable[[], None],
) -> tuple[int, set[int], str | None]:
    """Send every line; return how many records were written, to which partitions, and the
    error that stopped it (a bad line stops the input, a failed delivery the run)."""
    deliveries: list[Delivery] = []
    error = None
    async with broker.producer(**options) as producer:
        number = 0
        async for line in read_lines(source):
            number += 1
            try:
                record = parse(line)
            except InvalidLine as exc:
                error = f"line {number}: {exc}"
                break
            deliveries.append(
                await producer.send(
                    topic,
                    record.value,
                    record.key,
                    partition=record.partition,
                    headers=record.headers,
                )
            )
            advance()
        await producer.flush()
    # Every delivery is done once the producer is closed; reading them one by one costs
    # nothing, where gathering them would make a task for each record.
    partitions: set[int] = set()
    failed: list[KafkawireError] = []
    for delivery in deliveries:
        try:
            partitions.add(delivery.result().partition)
        except KafkawireError as exc:
            failed.append(exc)
    if failed and error is None:
        error = f"{plural(len(failed), 'record')} failed, the first with: {failed[0]}"
    return len(deliveries) - len(failed), partitions, error


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
