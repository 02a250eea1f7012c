"""Record batches: kafkawire.records against aiokafka (Cython and pure Python) and kafka-python.

The workload is one v2 batch of 10,000 records with 100-byte random values and null keys,
uncompressed and lz4:

- *decode* walks the batch and touches every record's value, as a consumer does; kafkawire
  also checks the crc (the peers' record iterators do not). Every library decodes the same
  bytes, which kafkawire built;
- *build* appends every record and produces the batch bytes, crc included. LZ4 levels differ
  by library: aiokafka always compresses at HC level 9, kafka-python in lz4's fast mode, so
  kafkawire is timed both ways (``lz4`` is its default fast mode, ``lz4 hc9`` level 9) and each
  peer fills the row that matches what it does.

aiokafka picks its Cython or pure-Python classes at import time (``AIOKAFKA_NO_EXTENSIONS``),
and its pure classes call the Cython varint and crc helpers when those load, so the
pure-Python figures come from a child interpreter started with ``AIOKAFKA_NO_EXTENSIONS=1``.

kafkawire decodes with its compiled record loop (``kafkawire.records._accel``) when the build
made it, and the *kafkawire (pure)* column times the same decodes with its pure-Python loop
(the ratio there is pure time / compiled time); without the extension (or with
``KAFKAWIRE_NO_EXTENSIONS=1``) the main column is the pure loop and that column is left out.

Times are the best of ``REPEAT`` runs (kafkawire's, of two such series, one before the peers
and one after); ratios are peer time / kafkawire time (above 1:
kafkawire is faster). Run with ``python -m benchmarks`` (every benchmark) or
``python -m benchmarks.bench_records``. Nothing here asserts a timing.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kafkawire.records import Compression, RecordBatchBuilder, batch_v2, decode_batches, v2_records

RECORDS = 10_000
VALUE_SIZE = 100
REPEAT = 15
BASE_TIMESTAMP = 1_700_000_000_000
# task -> (codec, kafkawire's compression level)
TASKS: dict[str, tuple[Compression, int | None]] = {
    "decode none": (Compression.NONE, None),
    "decode lz4": (Compression.LZ4, None),
    "build none": (Compression.NONE, None),
    "build lz4": (Compression.LZ4, None),
    "build lz4 hc9": (Compression.LZ4, 9),
}
_CHILD_FLAG = "--aiokafka-pure"

Timings = dict[str, float | None]
Build = Callable[[Compression], bytes]
Decode = Callable[[bytes], None]


def _values() -> list[bytes]:
    rng = random.Random(0)
    return [rng.randbytes(VALUE_SIZE) for _ in range(RECORDS)]


def _best(function: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(REPEAT):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def _build_ours(values: list[bytes], codec: Compression, level: int | None) -> bytes:
    builder = RecordBatchBuilder(compression=codec, compression_level=level)
    for i, value in enumerate(values):
        builder.append(None, value, timestamp=BASE_TIMESTAMP + i)
    return builder.build()


def _decode_ours(data: bytes) -> None:
    for batch in decode_batches(data):
        for record in batch.records:
            record.value  # noqa: B018 -- touch it, as a consumer would


def _peer(builder_cls: Any, batch_cls: Any, values: list[bytes]) -> tuple[Build, Decode]:
    def build(codec: Compression) -> bytes:
        builder = builder_cls(
            magic=2,
            compression_type=int(codec),
            is_transactional=0,
            producer_id=-1,
            producer_epoch=-1,
            base_sequence=-1,
            batch_size=2**30,
        )
        for i, value in enumerate(values):
            builder.append(i, timestamp=BASE_TIMESTAMP + i, key=None, value=value, headers=[])
        return bytes(builder.build())

    def decode(data: bytes) -> None:
        for record in batch_cls(data):
            record.value  # noqa: B018

    return build, decode


def _time_peer(
    build: Build, decode: Decode, batches: dict[Compression, bytes], lz4: str
) -> Timings:
    """A peer's timings; ``lz4`` names the build row its own lz4 level belongs in."""
    timings: Timings = dict.fromkeys(TASKS)
    for task, (codec, _) in TASKS.items():
        if task.startswith("decode"):
            timings[task] = _best(lambda codec=codec: decode(batches[codec]))
        elif codec is Compression.NONE or task == lz4:
            timings[task] = _best(lambda codec=codec: build(codec))
    return timings


def _batches(values: list[bytes]) -> dict[Compression, bytes]:
    return {
        codec: _build_ours(values, codec, None) for codec in (Compression.NONE, Compression.LZ4)
    }


def _aiokafka_pure() -> Timings:
    """Run in the child interpreter, where aiokafka loaded without its extensions."""
    from aiokafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

    values = _values()
    build, decode = _peer(DefaultRecordBatchBuilder, DefaultRecordBatch, values)
    return _time_peer(build, decode, _batches(values), "build lz4 hc9")


def _aiokafka_pure_in_child() -> Timings:
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_records", _CHILD_FLAG],
        cwd=Path(__file__).resolve().parents[1],  # where ``benchmarks`` imports from
        env=dict(os.environ, AIOKAFKA_NO_EXTENSIONS="1"),
        capture_output=True,
        text=True,
        check=True,
    )
    timings: Timings = json.loads(result.stdout)
    return timings


def _peers(values: list[bytes], batches: dict[Compression, bytes]) -> dict[str, Timings]:
    from aiokafka.record import _crecords

    with warnings.catch_warnings():
        # kafka-python 3.0 loads its schemas through a deprecated importlib.resources call.
        warnings.simplefilter("ignore", DeprecationWarning)
        import kafka.codec
        from kafka.record import default_records as kafka_v2

    build, decode = _peer(_crecords.DefaultRecordBatchBuilder, _crecords.DefaultRecordBatch, values)
    peers = {"aiokafka (Cython)": _time_peer(build, decode, batches, "build lz4 hc9")}
    peers["aiokafka (pure)"] = _aiokafka_pure_in_child()
    if kafka.codec.has_lz4():
        build, decode = _peer(
            kafka_v2.DefaultRecordBatchBuilder, kafka_v2.DefaultRecordBatch, values
        )
        peers["kafka-python"] = _time_peer(build, decode, batches, "build lz4")
    else:
        print("kafka-python skipped: it needs the lz4 package to read and write lz4 batches")
    return peers


@contextlib.contextmanager
def _record_loop(read: v2_records.ReadRecordsFunction) -> Iterator[None]:
    """Decode v2 records with ``read`` (the pure or the compiled loop) for a while."""
    chosen = batch_v2.read_records
    batch_v2.read_records = read
    try:
        yield
    finally:
        batch_v2.read_records = chosen


def _time_pure_decode(batches: dict[Compression, bytes]) -> Timings:
    timings: Timings = dict.fromkeys(TASKS)
    with _record_loop(v2_records.read_records_pure):
        for task, (codec, _) in TASKS.items():
            if task.startswith("decode"):
                timings[task] = _best(lambda codec=codec: _decode_ours(batches[codec]))
    return timings


def _time_ours(values: list[bytes], batches: dict[Compression, bytes]) -> dict[str, float]:
    timings = {}
    for task, (codec, level) in TASKS.items():
        if task.startswith("decode"):
            timings[task] = _best(lambda codec=codec: _decode_ours(batches[codec]))
        else:
            timings[task] = _best(
                lambda codec=codec, level=level: _build_ours(values, codec, level)
            )
    return timings


def main() -> None:
    values = _values()
    batches = _batches(values)
    # Timed before and after the peers, keeping the better: a burst of load from elsewhere on
    # the machine then has to hit both runs to skew the ratios.
    before = _time_ours(values, batches)
    peers: dict[str, Timings] = {}
    if v2_records.ACCELERATED:
        peers["kafkawire (pure)"] = _time_pure_decode(batches)
    peers.update(_peers(values, batches))
    after = _time_ours(values, batches)
    ours = {task: min(before[task], after[task]) for task in TASKS}
    loop = "compiled (_accel)" if v2_records.ACCELERATED else "pure-Python"
    print(
        f"{RECORDS} records of {VALUE_SIZE}-byte values in one v2 batch, best of {REPEAT};"
        f" (ratio) = peer time / kafkawire time; kafkawire's record loop: {loop}"
    )
    print(f"{'':<14}{'kafkawire':>12}" + "".join(f"{peer:>24}" for peer in peers))
    for task, mine in ours.items():
        row = f"{task:<14}{mine * 1000:>9.2f} ms"
        for timings in peers.values():
            theirs = timings[task]
            cell = "-" if theirs is None else f"{theirs * 1000:.2f} ms ({theirs / mine:.2f}x)"
            row += f"{cell:>24}"
        print(row)


if __name__ == "__main__":
    if sys.argv[1:] == [_CHILD_FLAG]:
        print(json.dumps(_aiokafka_pure()))
    else:
        main()
