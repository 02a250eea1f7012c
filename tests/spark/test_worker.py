"""The clients a Spark Python process keeps between tasks (kafkawire.spark.worker), and a read
task's fetch one page ahead (kafkawire.spark.reading), without Spark.

The fake cluster runs on an event loop in a thread of its own: the process's worker loop is
another thread, and the test's calls block as a Spark task's do.
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import threading
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable

from kafkawire.errors import EventLoopError, InvalidRecordError, TopicAuthorizationFailedError
from kafkawire.producer import SendBatchError
from kafkawire.spark.offsets import OffsetRange
from kafkawire.spark.options import ReadOptions, read_options, write_options
from kafkawire.spark.reading import read_range
from kafkawire.spark.source import StreamReader
from kafkawire.spark.worker import leased_client, leased_producer, worker_loop
from kafkawire.spark.writing import ArrowWriter
from kafkawire.testing.fake import CUT, FakeCluster
from kafkawire.testing.fake.faults import answer_partitions, refuse_partition
from kafkawire.testing.fake.thread import FakeClusterThread

TOPIC = "kept"
BATCHES, PER_BATCH = 3, 10
ROWS = BATCHES * PER_BATCH
_CHILD_WAIT = 60  # seconds; a guard only: a child that works reports in milliseconds


@pytest.fixture
def fake() -> Iterator[FakeClusterThread]:
    """One broker, TOPIC with one partition of BATCHES batches of PER_BATCH records."""

    def fill(cluster: FakeCluster) -> None:
        cluster.create_topic(TOPIC, partitions=1)
        for b in range(BATCHES):
            cluster.produce(TOPIC, 0, [b"%d" % (b * PER_BATCH + i) for i in range(PER_BATCH)])

    with FakeClusterThread(num_brokers=1) as threaded:
        threaded.call(fill)
        yield threaded


def _options_given(fake: FakeClusterThread, **more: str) -> dict[str, str]:
    return {"kafka.bootstrap.servers": fake.bootstrap, "subscribe": TOPIC, **more}


def _options(fake: FakeClusterThread, **more: str) -> ReadOptions:
    return read_options(_options_given(fake, **more), streaming=False)


def _offsets(pages: Iterator[Any]) -> list[int]:
    return [offset for page in pages for offset in page.column("offset").to_pylist()]


def _read(fake: FakeClusterThread, start: int = 0, end: int = ROWS) -> list[int]:
    return _offsets(read_range(_options(fake), OffsetRange(TOPIC, 0, start, end)))


def test_a_client_is_kept_between_calls_and_lent_to_one_at_a_time(
    fake: FakeClusterThread,
) -> None:
    options = _options(fake)
    with leased_client(options) as first:
        pass
    with leased_client(options) as again:
        assert again is first
        with leased_client(options) as meanwhile:
            assert meanwhile is not first
    # A write's options to the same brokers with the same security take the same client.
    writing = write_options({"kafka.bootstrap.servers": fake.bootstrap, "topic": TOPIC})
    with leased_client(writing) as shared:
        assert shared in (first, meanwhile)


def test_other_security_settings_never_share_a_client(fake: FakeClusterThread) -> None:
    with leased_client(_options(fake)) as plain:
        pass
    named = _options(fake, **{"kafka.security.protocol": "PLAINTEXT"})
    with leased_client(named) as other:
        assert other is not plain


@pytest.mark.parametrize("kind", ["client", "producer"])
def test_a_lease_that_raises_closes_its_client(fake: FakeClusterThread, kind: str) -> None:
    options = write_options({"kafka.bootstrap.servers": fake.bootstrap, "topic": TOPIC})
    lease = leased_client if kind == "client" else leased_producer
    with pytest.raises(ValueError, match="the task failed"), lease(options) as failed:
        raise ValueError("the task failed")
    if kind == "client":
        assert failed.cluster.closed
    else:
        assert not failed.health().sender_running
    with lease(options) as again:
        assert again is not failed


def test_a_write_fails_on_a_refused_delivery_and_drops_its_producer(
    fake: FakeClusterThread,
) -> None:
    """No batch waits for the deliveries of those before it, yet none is lost unseen: the
    refusal fails the task (at a later batch, or at its flush), and its producer is closed."""
    options = write_options({"kafka.bootstrap.servers": fake.bootstrap, "topic": TOPIC})
    with leased_producer(options) as kept:
        pass
    batch = pa.RecordBatch.from_pydict({"value": pa.array([b"x"] * PER_BATCH, pa.binary())})
    fake.call(
        lambda c: c.control(
            refuse_partition(0, InvalidRecordError.code), api_key="Produce", keep=True
        )
    )
    with pytest.raises(SendBatchError, match="InvalidRecordError"):
        ArrowWriter(options).write(iter([batch] * BATCHES))
    assert not kept.health().sender_running


def test_a_kept_client_closed_meanwhile_is_not_lent_again(fake: FakeClusterThread) -> None:
    options = _options(fake)
    with leased_client(options) as kept:
        pass
    worker_loop().run(kept.close())
    with leased_client(options) as again:
        assert again is not kept
        assert not again.cluster.closed


def test_a_read_that_fails_closes_its_client_and_the_next_reads_anew(
    fake: FakeClusterThread,
) -> None:
    with leased_client(_options(fake)) as kept:
        pass
    refused = fake.call(
        lambda c: c.control(answer_partitions(TopicAuthorizationFailedError.code), api_key="Fetch")
    )
    with pytest.raises(TopicAuthorizationFailedError):
        _read(fake)
    assert kept.cluster.closed
    fake.call(lambda _: refused.remove())
    assert _read(fake) == list(range(ROWS))


def test_a_connection_cut_under_a_kept_client_is_opened_again(fake: FakeClusterThread) -> None:
    assert _read(fake) == list(range(ROWS))
    with leased_client(_options(fake)) as kept:
        pass
    fake.call(lambda c: c.control(lambda request, ctx: CUT, api_key="Fetch"))
    assert _read(fake) == list(range(ROWS))
    with leased_client(_options(fake)) as after:
        assert after is kept  # the cut was retried on a new connection: nothing surfaced


def test_a_stream_with_a_kept_client_sees_a_partition_added(fake: FakeClusterThread) -> None:
    reader = StreamReader(read_options(_options_given(fake), streaming=True))
    start = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    assert reader.latestOffset(start, ReadAllAvailable()) == {TOPIC: {"0": ROWS}}

    def grow(cluster: FakeCluster) -> None:
        cluster.add_partitions(TOPIC, 2)
        cluster.produce(TOPIC, 1, [b"new"])

    fake.call(grow)
    assert reader.latestOffset(start, ReadAllAvailable()) == {TOPIC: {"0": ROWS, "1": 1}}


def test_a_streams_latest_offset_fetches_no_records(fake: FakeClusterThread) -> None:
    """Only the high watermark is wanted: the Fetch asks for one byte in all (a broker sends
    the first batch whole anyway; Tansu sent far more unless max_bytes said so too)."""
    reader = StreamReader(read_options(_options_given(fake), streaming=True))
    start = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    asked: list[tuple[int, int]] = []

    def record(request: Any, ctx: Any) -> None:
        partitions = [p.partition_max_bytes for t in request.topics for p in t.partitions]
        asked.append((request.max_bytes, max(partitions)))

    fake.call(lambda c: c.control(record, api_key="Fetch", keep=True))
    reader.latestOffset(start, ReadAllAvailable())
    assert asked == [(1, 1)]


def test_consecutive_ranges_read_each_offset_once(
    fake: FakeClusterThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a stream's micro-batches read them: through the kept client, a page a batch."""
    monkeypatch.setattr("kafkawire.spark.reading._FETCH_BYTES", 1)
    ranges = [(0, 7), (7, 19), (19, 20), (20, ROWS)]
    assert [o for start, end in ranges for o in _read(fake, start, end)] == list(range(ROWS))


def test_the_next_page_is_fetched_while_spark_takes_one(
    fake: FakeClusterThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kafkawire.spark.reading._FETCH_BYTES", 1)  # a batch a fetch
    fetches: list[int] = []
    second = threading.Event()

    def count(request: Any, ctx: Any) -> None:
        fetches.append(1)
        if len(fetches) == 2:
            second.set()

    fake.call(lambda c: c.control(count, api_key="Fetch", keep=True))
    pages = read_range(_options(fake), OffsetRange(TOPIC, 0, 0, ROWS))
    first = next(pages)  # handed to "Spark", which holds it: the reader is suspended
    assert first.column("offset").to_pylist() == list(range(PER_BATCH))
    assert second.wait(timeout=30), "the second page was not fetched while the first was held"
    assert _offsets(pages) == list(range(PER_BATCH, ROWS))


def test_a_read_stopped_early_drops_its_fetch_and_the_next_reads_all(
    fake: FakeClusterThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kafkawire.spark.reading._FETCH_BYTES", 1)
    with leased_client(_options(fake)) as kept:
        pass
    pages = read_range(_options(fake), OffsetRange(TOPIC, 0, 0, ROWS))
    next(pages)
    pages.close()  # as Spark does after a LIMIT: the page fetched ahead is not wanted
    assert kept.cluster.closed
    assert _read(fake) == list(range(ROWS))


def test_a_kept_client_is_never_used_from_another_event_loop(fake: FakeClusterThread) -> None:
    with leased_client(_options(fake)) as client:
        with pytest.raises(EventLoopError):
            asyncio.run(client.list_offsets(TOPIC, 0))
        assert worker_loop().run(client.list_offsets(TOPIC, 0)).offset == ROWS

    async def from_the_loop_itself() -> None:
        worker_loop().run(asyncio.sleep(0))

    with pytest.raises(RuntimeError, match="loop's own thread"):
        worker_loop().run(from_the_loop_itself())


@pytest.mark.filterwarnings("ignore:.*use of fork\\(\\) may lead to deadlocks:DeprecationWarning")
def test_a_forked_child_makes_its_own_loop_and_clients(fake: FakeClusterThread) -> None:
    parent = worker_loop()
    with leased_client(_options(fake)) as kept:
        pass
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, never return into pytest
        try:
            child = worker_loop()
            with leased_client(_options(fake)) as own:
                mine = own is not kept and child is not parent
            report = f"{mine} {_read(fake) == list(range(ROWS))}"
        except BaseException as error:  # reported to the parent, whatever it is
            report = repr(error)
        os.write(writable, report.encode())
        os._exit(0)
    os.close(writable)
    with os.fdopen(readable, "rb") as pipe:
        if not select.select([pipe], [], [], _CHILD_WAIT)[0]:  # a child on the parent's loop
            os.kill(pid, signal.SIGKILL)  # would wait for ever: its thread is not there
        report = pipe.read().decode()
    os.waitpid(pid, 0)
    assert report == "True True"
    with leased_client(_options(fake)) as after:
        assert after is kept
    assert _read(fake) == list(range(ROWS))


def test_an_interrupted_wait_cancels_its_work() -> None:
    """Ctrl-C in the thread waiting on :meth:`WorkerLoop.run` stops the work on the loop too
    (the demo's main thread waits so, and must not leave its producer running)."""
    worker = worker_loop()
    cancelled = threading.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    main = threading.main_thread().ident
    assert main is not None
    timer = threading.Timer(0.2, signal.pthread_kill, (main, signal.SIGINT))  # as Ctrl-C does
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        worker.run(forever())
    timer.join()
    assert cancelled.wait(5)
