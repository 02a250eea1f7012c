"""Cross-checks against two independent implementations: aiokafka and kafka-python.

Their batches decode with ours and ours decode with theirs, for every magic x codec each
supports. Combinations a peer cannot do are skipped with the reason: aiokafka refuses LZ4 at
magic 0 (KAFKA-3160), neither writes zstd below magic 2 (KIP-110), and kafka-python needs the
optional ``python-snappy``, ``lz4`` (with ``xxhash`` for magic 0) and ``zstandard`` packages.
"""

from __future__ import annotations

import importlib.util
import types
import warnings
from typing import Any

import pytest
from hypothesis import given

from kafkawire.records import Compression, decode_batches

from .helpers import COMBINATIONS, SETTINGS, RecordInput, build, record_inputs

with warnings.catch_warnings():
    # kafka-python 3.0 loads its schemas through a deprecated importlib.resources call.
    warnings.simplefilter("ignore", DeprecationWarning)
    from aiokafka.record import default_records as aiokafka_v2
    from aiokafka.record import legacy_records as aiokafka_legacy
    from aiokafka.record import memory_records as aiokafka_memory
    from kafka.record import default_records as kafka_v2
    from kafka.record import legacy_records as kafka_legacy
    from kafka.record import memory_records as kafka_memory

_MODULES = {
    "aiokafka": types.SimpleNamespace(
        DefaultRecordBatchBuilder=aiokafka_v2.DefaultRecordBatchBuilder,
        LegacyRecordBatchBuilder=aiokafka_legacy.LegacyRecordBatchBuilder,
        MemoryRecords=aiokafka_memory.MemoryRecords,
    ),
    "kafka-python": types.SimpleNamespace(
        DefaultRecordBatchBuilder=kafka_v2.DefaultRecordBatchBuilder,
        LegacyRecordBatchBuilder=kafka_legacy.LegacyRecordBatchBuilder,
        MemoryRecords=kafka_memory.MemoryRecords,
    ),
}
PEERS = tuple(_MODULES)
_KAFKA_PYTHON_NEEDS = {
    Compression.SNAPPY: ("snappy",),
    Compression.LZ4: ("lz4",),
    Compression.ZSTD: ("zstandard",),
}


def _skip_reason(peer: str, magic: int, codec: Compression) -> str | None:
    if peer == "aiokafka":
        if magic == 0 and codec is Compression.LZ4:
            return "aiokafka refuses LZ4 for magic 0 (KAFKA-3160)"
        return None
    needed = _KAFKA_PYTHON_NEEDS.get(codec, ())
    if codec is Compression.LZ4 and magic == 0:
        needed = (*needed, "xxhash")
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if missing:
        return f"kafka-python needs the missing package(s) {', '.join(missing)} for {codec.name}"
    return None


CASES = [
    pytest.param(
        peer,
        magic,
        codec,
        id=f"{peer}-magic{magic}-{codec.name.lower()}",
        marks=[pytest.mark.skip(reason=reason)]
        if (reason := _skip_reason(peer, magic, codec))
        else [],
    )
    for peer in PEERS
    for magic, codec in COMBINATIONS
]


def _peer_builder(peer: str, magic: int, codec: Compression) -> Any:
    module = _MODULES[peer]
    if magic == 2:
        return module.DefaultRecordBatchBuilder(
            magic=2,
            compression_type=int(codec),
            is_transactional=0,
            producer_id=-1,
            producer_epoch=-1,
            base_sequence=-1,
            batch_size=2**30,
        )
    return module.LegacyRecordBatchBuilder(
        magic=magic, compression_type=int(codec), batch_size=2**30
    )


def _peer_records(peer: str, data: bytes) -> list[tuple[Any, ...]]:
    records = _MODULES[peer].MemoryRecords(data)
    out: list[tuple[Any, ...]] = []
    while records.has_next():
        batch = records.next_batch()
        assert batch.validate_crc()
        out.extend((r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in batch)
    return out


@pytest.mark.parametrize(("peer", "magic", "codec"), CASES)
def test_peer_reads_our_batches(peer: str, magic: int, codec: Compression) -> None:
    @SETTINGS
    @given(inputs=record_inputs(magic, min_size=1))
    def check(inputs: list[RecordInput]) -> None:
        data = build(magic, codec, inputs, base_offset=0)
        expected = [
            (i, timestamp if magic else None, key, value, headers)
            for i, (key, value, timestamp, headers) in enumerate(inputs)
        ]
        assert _peer_records(peer, data) == expected

    check()


@pytest.mark.parametrize(("peer", "magic", "codec"), CASES)
def test_we_read_peer_batches(peer: str, magic: int, codec: Compression) -> None:
    @SETTINGS
    @given(inputs=record_inputs(magic, min_size=1))
    def check(inputs: list[RecordInput]) -> None:
        builder = _peer_builder(peer, magic, codec)
        for i, (key, value, timestamp, headers) in enumerate(inputs):
            if magic == 2:
                builder.append(i, timestamp=timestamp, key=key, value=value, headers=list(headers))
            else:
                builder.append(i, timestamp=timestamp, key=key, value=value)
        data = bytes(builder.build())
        records = [r for b in decode_batches(data) for r in b.records]
        # Peers leave a magic 1 wrapper at offset 0 for the broker to assign; the offsets are
        # still 0, 1, ... as the peers (and Kafka's Java client) read them.
        assert [r.offset for r in records] == list(range(len(inputs)))
        assert [r.offset for r in records] == [peer[0] for peer in _peer_records(peer, data)]
        assert [(r.key, r.value) for r in records] == [(k, v) for k, v, _, _ in inputs]
        if magic:
            assert [r.timestamp for r in records] == [t for _, _, t, _ in inputs]
        assert [tuple((h.key, h.value) for h in r.headers) for r in records] == [
            h for *_, h in inputs
        ]

    check()
