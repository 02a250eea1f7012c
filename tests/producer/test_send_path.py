"""``send``'s one-call path (:mod:`kafkawire.producer.send_path`): the compiled ``SendPath``
gives what its pure twin gives, state for state, and the records it leaves to the full path
are decided there as before (headers, timestamps, other types, new topics, a full batch, a
closed producer, a transaction)."""

from __future__ import annotations

import asyncio
import contextlib
import enum
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkawire.errors import ClientClosedError
from kafkawire.producer import Producer, send_path
from kafkawire.producer.accumulator import RecordAccumulator, _Waiter
from kafkawire.producer.batch import RECORD_OVERHEAD, Delivery
from kafkawire.producer.errors import TransactionStateError
from kafkawire.producer.partitioner import StickyPartitioner, partition_for_key
from kafkawire.records import Compression
from kafkawire.testing.fake import FakeCluster
from tests.budgets import examples
from tests.net.fakebroker import WAIT

needs_accel = pytest.mark.skipif(
    not send_path.ACCELERATED, reason="the C extension is not built, or disabled"
)


class Index(enum.IntEnum):
    ONE = 1


# Mostly records the one-call path may take, and some of every kind it leaves to the full
# path or refuses: topics unknown, or of a count never stored (0), other types, partitions.
common = st.tuples(
    st.sampled_from(("a", "b")),
    st.binary(max_size=120) | st.none(),
    st.none() | st.binary(max_size=12),
    st.none() | st.integers(0, 3),
)
odd = st.tuples(
    st.sampled_from(("a", "b", "unknown", "none")),
    st.binary(max_size=120) | st.none() | st.builds(bytearray, st.binary(max_size=4)),
    st.none() | st.binary(max_size=12) | st.just("text"),
    st.none() | st.sampled_from([-1, 6, True, 1.0, Index.ONE, 2**70, "0"]),
)
records = st.sampled_from([common] * 5 + [odd]).flatmap(lambda kind: kind)


def _position(count: int, batch_size: int) -> st.SearchStrategy[tuple[int, int] | None]:
    """A topic's sticky position: mostly one the next record stays on; none yet, or one that
    moves on (its partition gone, or batch_size bytes reached)."""
    staying = st.tuples(st.integers(0, count - 1), st.integers(0, 100))
    moving = st.tuples(st.integers(0, 4), st.integers(0, 5_000))
    at_the_edge = st.tuples(
        st.integers(0, count - 1), st.sampled_from([batch_size - 1, batch_size])
    )
    kinds = [staying, staying, staying, st.none(), moving, at_the_edge]
    return st.sampled_from(kinds).flatmap(lambda kind: kind)


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """A producer's state as send() may meet it, and records to send."""
    counts = {"a": draw(st.integers(1, 4)), "b": draw(st.integers(1, 4)), "none": 0}
    batch_size = draw(st.integers(100, 5_000))
    positions = {}
    for topic in ("a", "b"):
        position = draw(_position(counts[topic], batch_size))
        if position is not None:
            positions[topic] = position
    return {
        "counts": counts,
        "batch_size": batch_size,
        "buffer_memory": draw(st.integers(100, 50_000)),
        "max_record_size": draw(st.integers(30, 300)),
        # Records already queued by the full path, per partition: their value lengths.
        "queued": {
            (topic, partition): draw(st.lists(st.integers(0, 120), max_size=3))
            for topic, count in counts.items()
            for partition in range(count)
        },
        "positions": positions,
        "waiting": draw(st.sampled_from([False] * 7 + [True])),
        "partitioner": draw(st.sampled_from([None, None, None, "in range", "may refuse"])),
        "records": draw(st.lists(records, max_size=30)),
    }


def _chooser(kind: str | None, calls: list[tuple[Any, ...]]) -> Callable[..., Any] | None:
    """A user's partitioner as the producer calls it (``_choose_partition``: it checks the
    choice), logging its calls."""
    if kind is None:
        return None

    def choose(topic: str, key: bytes | None, size: int, count: int) -> int:
        calls.append((topic, key, size, count))
        chosen = (size + len(key or b"")) % (count + (kind == "may refuse"))
        if chosen >= count:
            raise ValueError(f"the partitioner chose {chosen} for {topic!r}")
        return chosen

    return choose


def _setting_up(scenario: dict[str, Any], calls: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    accumulator = RecordAccumulator(
        batch_size=scenario["batch_size"],
        linger=1.0,
        buffer_memory=scenario["buffer_memory"],
        compression=Compression.NONE,
        compression_level=None,
        delivery_timeout=60.0,
    )
    for (topic, partition), lengths in scenario["queued"].items():
        for length in lengths:
            size = RECORD_OVERHEAD + length
            accumulator.append(topic, partition, None, b"q" * length, (), 0, size)
    if scenario["waiting"]:
        future = asyncio.get_running_loop().create_future()
        accumulator._waiters.append(_Waiter(scenario["buffer_memory"], future))
    sticky = StickyPartitioner(scenario["batch_size"])
    sticky._current.update(scenario["positions"])
    counts = dict(scenario["counts"])
    return accumulator, sticky, counts, _chooser(scenario["partitioner"], calls)


def _outcome(path: Any, *record: Any) -> tuple[Any, ...]:
    try:
        sent = path.send(*record)
    except Exception as exc:
        return ("raised", type(exc), str(exc))
    if isinstance(sent, Delivery):
        return ("delivery", sent._offset, sent._key_size, sent._value_size, sent.starts_batch)
    return ("full path", sent)


def _state(accumulator: RecordAccumulator, sticky: StickyPartitioner) -> tuple[Any, ...]:
    batches = {}
    for topic, opened in accumulator._open.items():
        for partition, batch in opened.items():
            records = [(r.key, r.value) for r in batch.records()]
            batches[topic, partition] = (batch.memory, records)
    woken = accumulator.wakeup.is_set()
    accumulator.wakeup.clear()
    return batches, accumulator._memory.used, dict(sticky._current), woken


@needs_accel
@settings(max_examples=examples(50))
@given(scenarios())
def test_the_compiled_send_path_gives_what_the_pure_one_gives(scenario: dict[str, Any]) -> None:
    async def run() -> None:
        logs: tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]] = ([], [])
        twins = []
        for made, log in zip((send_path.SendPath, send_path.SendPathPure), logs, strict=True):
            accumulator, sticky, counts, choose = _setting_up(scenario, log)
            path = made(accumulator, sticky, counts, scenario["max_record_size"], choose)
            twins.append((path, accumulator, sticky))
        (compiled, *c_state), (pure, *p_state) = twins
        assert _state(*c_state) == _state(*p_state)
        for record in scenario["records"]:
            assert _outcome(compiled, *record) == _outcome(pure, *record)
            assert _state(*c_state) == _state(*p_state)
        assert logs[0] == logs[1]

    asyncio.run(run())


def _accumulator(batch_size: int, buffer_memory: int = 10_000) -> RecordAccumulator:
    return RecordAccumulator(
        batch_size=batch_size,
        linger=1.0,
        buffer_memory=buffer_memory,
        compression=Compression.NONE,
        compression_level=None,
        delivery_timeout=60.0,
    )


twins = pytest.mark.parametrize(
    "make", [send_path.SendPath, send_path.SendPathPure], ids=["C", "pure"]
)


@twins
async def test_sticky_bytes_count_once_and_a_move_is_left_to_the_full_path(make: Any) -> None:
    # Batches of 1,000 bytes: the partition's batch has room when the sticky partition moves
    # on (as when its batch went out on linger and a new one started).
    accumulator = _accumulator(1_000)
    sticky = StickyPartitioner(300)
    path = make(accumulator, sticky, {"t": 3}, 1_000, None)
    assert path.send("t", b"v" * 79, None, None) is None  # no position yet: the full path draws
    partition = sticky.partition("t", 3, 100)  # what the full path does, then appends
    accumulator.append("t", partition, None, b"v" * 79, (), 0, 100)
    assert isinstance(path.send("t", b"v" * 79, None, None), Delivery)
    assert sticky._current["t"] == (partition, 200)  # counted once, when appended
    assert isinstance(path.send("t", b"v" * 79, None, None), Delivery)
    assert sticky._current["t"] == (partition, 300)
    # batch_size bytes went to it: the next record moves on, which is the full path's draw.
    assert path.send("t", b"v" * 79, None, None) is None
    assert sticky._current["t"] == (partition, 300)
    assert accumulator._open["t"][partition].memory == 300


@twins
async def test_the_record_that_fills_its_batch_wakes_the_sender(make: Any) -> None:
    accumulator = _accumulator(300)
    path = make(accumulator, StickyPartitioner(300), {"t": 1}, 1_000, None)
    accumulator.append("t", 0, None, b"v" * 79, (), 0, 100)
    accumulator.wakeup.clear()
    assert isinstance(path.send("t", b"v" * 79, None, 0), Delivery)
    assert not accumulator.wakeup.is_set()
    assert isinstance(path.send("t", b"v" * 79, None, 0), Delivery)  # 300 bytes: full
    assert accumulator.wakeup.is_set()
    assert path.send("t", b"", None, 0) is None  # no room left: a new batch, the full path's


# --- what the full path still decides, through Producer.send ----------------------------------


async def _sends_through_the_full_path(
    producer: Producer, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[Any, ...]]:
    """Record each call of the full path (``Producer._send``) from now on."""
    calls: list[tuple[Any, ...]] = []
    full = producer._send

    async def spied(*args: Any) -> Delivery:
        calls.append(args)
        return await full(*args)

    monkeypatch.setattr(producer, "_send", spied)
    return calls


@contextlib.asynccontextmanager
async def _producing_to_a_known_topic(
    fake_cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[Producer, list[tuple[Any, ...]]]]:
    """A producer that knows topic "t" and has an open batch for its partition 0, and the
    calls of its full path from then on."""
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, linger_ms=1) as producer:
        await asyncio.wait_for(producer.send_and_wait("t", b"first", partition=0), WAIT)
        yield producer, await _sends_through_the_full_path(producer, monkeypatch)


async def test_headers_and_timestamps_are_the_full_paths(
    fake_cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with _producing_to_a_known_topic(fake_cluster, monkeypatch) as (producer, full):
        with_headers = await producer.send("t", b"h", partition=0, headers=[("h", b"1")])
        stamped = await producer.send("t", b"s", partition=0, timestamp_ms=1234)
        assert len(full) == 2
        await asyncio.wait_for(asyncio.gather(with_headers, stamped), WAIT)
    written = fake_cluster.records("t", 0)
    assert [h.key for h in written[1].headers] == ["h"]
    assert written[2].timestamp == 1234


async def test_a_value_that_is_not_bytes_is_refused_by_the_full_path(
    fake_cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with _producing_to_a_known_topic(fake_cluster, monkeypatch) as (producer, full):
        with pytest.raises(TypeError, match=r"send\(\): the value is str"):
            await producer.send("t", "text", partition=0)
        sent = await producer.send("t", bytearray(b"ba"), partition=0)  # taken, as bytes
        assert len(full) == 2
        assert (await asyncio.wait_for(sent, WAIT)).serialized_value_size == 2


async def test_a_topic_not_known_yet_goes_through_the_full_path_then_the_short_one(
    fake_cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, linger_ms=1) as producer:
        full = await _sends_through_the_full_path(producer, monkeypatch)
        deliveries = [await producer.send("t", b"v", partition=0) for _ in range(3)]
        assert len(full) == 1  # the metadata, and the first batch; then its open batch
        placed = await asyncio.wait_for(asyncio.gather(*deliveries), WAIT)
    assert [m.offset for m in placed] == [0, 1, 2]


async def test_a_record_that_does_not_fit_the_open_batch_starts_one_on_the_full_path(
    fake_cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, batch_size=300, linger_ms=60_000) as producer:
        await producer.send("t", b"v" * 79, partition=0)  # 100 bytes: a batch
        full = await _sends_through_the_full_path(producer, monkeypatch)
        taken = [await producer.send("t", b"v" * 79, partition=0) for _ in range(2)]
        assert not full  # 300 bytes: full
        assert not any(d.starts_batch for d in taken)
        started = await producer.send("t", b"v" * 79, partition=0)
        assert len(full) == 1
        assert started.starts_batch
        assert producer._yield_due  # the next full-path send lets the sender run first
        await producer.flush()


async def test_a_closed_producer_refuses_on_the_full_path(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    producer = Producer(fake_cluster.bootstrap, linger_ms=1)
    async with producer:
        await asyncio.wait_for(producer.send_and_wait("t", b"v", partition=0), WAIT)
        open_path = producer._fast
    assert open_path is not None
    assert producer._fast is None
    with pytest.raises(ClientClosedError):
        await producer.send("t", b"v", partition=0)


async def test_a_transactional_producer_takes_the_full_path_which_checks_the_transaction(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, transactional_id="tx", linger_ms=1) as producer:
        assert producer._fast is None  # every record: check_sendable
        with pytest.raises(TransactionStateError):
            await producer.send("t", b"v", partition=0)
        producer.begin_transaction()
        await producer.send("t", b"v", partition=0)
        await producer.commit_transaction()


async def test_records_go_where_the_partitioners_put_them_on_either_path(
    fake_cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keyless records stick to a partition for batch_size bytes, counted once each, and
    keyed ones go to their key's, whichever path takes them (draws made deterministic)."""
    monkeypatch.setattr(
        StickyPartitioner,
        "_next",
        staticmethod(lambda count, previous: 0 if previous is None else (previous + 1) % count),
    )
    fake_cluster.create_topic("t", partitions=3)
    expected_sticky = StickyPartitioner(500)
    plan = [(b"k%d" % i if i % 5 == 0 else None, b"v" * (i % 40)) for i in range(300)]
    expected = [
        partition_for_key(key, 3)
        if key is not None
        else expected_sticky.partition("t", 3, RECORD_OVERHEAD + len(value))
        for key, value in plan
    ]
    async with Producer(fake_cluster.bootstrap, batch_size=500, linger_ms=60_000) as producer:
        deliveries = [await producer.send("t", value, key) for key, value in plan]
        await producer.flush()
    placed = [d.result().partition for d in deliveries]
    assert placed == expected


async def test_a_users_partitioner_is_called_once_per_record_on_either_path(
    fake_cluster: FakeCluster,
) -> None:
    """Its choice is where the record goes, also when the record then takes the full path (a
    batch to start): it is not asked again. A choice out of range is refused, naming it."""
    fake_cluster.create_topic("t", partitions=3)
    calls: list[bytes | None] = []

    def round_robin(topic: str, key: bytes | None, partition_count: int) -> int:
        calls.append(key)
        return 7 if key == b"bad" else len(calls) % partition_count

    async with Producer(
        fake_cluster.bootstrap, batch_size=300, linger_ms=60_000, partitioner=round_robin
    ) as producer:
        deliveries = [await producer.send("t", b"v" * 79, b"%d" % i) for i in range(30)]
        with pytest.raises(ValueError, match=r"the partitioner chose 7 for 't' of 3 partitions"):
            await producer.send("t", b"v", b"bad")
        await producer.flush()
    assert calls == [b"%d" % i for i in range(30)] + [b"bad"]
    assert [d.result().partition for d in deliveries] == [(i + 1) % 3 for i in range(30)]
