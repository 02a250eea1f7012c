"""Message codec speed against kio (native reader, pure writer) and kafka-python 3.

Three payloads: MetadataResponse v12 with 1,000 topics x 12 partitions, FetchResponse v12 and
ProduceRequest v9 of similar size (records are opaque bytes to all three codecs). Each library
decodes the same bytes and encodes the object it decoded; times are the best of several runs
(kafkawire's, of two such series, one before the peers and one after).

kafkawire decodes with its compiled decoders (``kafkawire.protocol._accel``) when the build
made them; the *kafkawire (pure)* row times the same decodes with its pure-Python decoders
(``Codec.decode_from_pure``), and each row's ``x`` columns compare it with both: peer time /
kafkawire time, above 1 meaning kafkawire is faster. Without the extension (or with
``KAFKAWIRE_NO_EXTENSIONS=1``) the main row is the pure decoder and the pure row is left out.
Encoding is pure Python either way. Run with ``make bench`` or ``python -m benchmarks``;
nothing here asserts a timing.
"""

from __future__ import annotations

import io
import time
import uuid
from collections.abc import Callable
from typing import Any

from kafkawire.messages.fetch import v12 as fetch_v12
from kafkawire.messages.metadata import v12 as metadata_v12
from kafkawire.messages.produce import v9 as produce_v9
from kafkawire.protocol import codec, codec_for, decode, encode

REPEATS = 7
RECORDS = bytes(range(256)) * 2  # 512 opaque bytes of "record batch" per partition


def metadata_response() -> Any:
    brokers = tuple(
        metadata_v12.MetadataResponseBroker(node_id=i, host=f"broker-{i}.example", port=9092)
        for i in range(3)
    )
    topics = tuple(
        metadata_v12.MetadataResponseTopic(
            name=f"topic-{t:04d}",
            topic_id=uuid.UUID(int=t + 1),
            partitions=tuple(
                metadata_v12.MetadataResponsePartition(
                    partition_index=p,
                    leader_id=p % 3,
                    leader_epoch=7,
                    replica_nodes=(0, 1, 2),
                    isr_nodes=(0, 1, 2),
                )
                for p in range(12)
            ),
        )
        for t in range(1000)
    )
    return metadata_v12.MetadataResponse(brokers=brokers, cluster_id="bench", topics=topics)


def fetch_response() -> Any:
    topics = tuple(
        fetch_v12.FetchableTopicResponse(
            topic=f"topic-{t:04d}",
            partitions=tuple(
                fetch_v12.PartitionData(
                    partition_index=p, high_watermark=1000, last_stable_offset=1000, records=RECORDS
                )
                for p in range(10)
            ),
        )
        for t in range(100)
    )
    return fetch_v12.FetchResponse(session_id=1, responses=topics)


def produce_request() -> Any:
    topics = tuple(
        produce_v9.TopicProduceData(
            name=f"topic-{t:04d}",
            partition_data=tuple(
                produce_v9.PartitionProduceData(index=p, records=RECORDS) for p in range(10)
            ),
        )
        for t in range(100)
    )
    return produce_v9.ProduceRequest(acks=-1, timeout_ms=30000, topic_data=topics)


def best(action: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def _kio(kind: str, module: str, name: str) -> tuple[Callable[[bytes], Any], Callable[[Any], Any]]:
    import importlib

    from kio.serial import entity_reader, entity_writer

    cls = getattr(importlib.import_module(f"kio.schema.{module}.{kind}"), name)
    reader, writer = entity_reader(cls), entity_writer(cls)

    def write(value: Any) -> bytes:
        out = io.BytesIO()
        writer(out, value)
        return out.getvalue()

    return (lambda data: reader(data, 0)[0]), write


def _kafka_python(cls: Any, version: int) -> tuple[Callable[[bytes], Any], Callable[[Any], Any]]:
    return (lambda data: cls.decode(data, version=version)), (
        lambda obj: obj.encode()  # decoded objects carry their version
    )


def peers(case: str) -> dict[str, tuple[Callable[[bytes], Any], Callable[[Any], Any]]]:
    found: dict[str, tuple[Callable[[bytes], Any], Callable[[Any], Any]]] = {}
    try:
        kio_names = {
            "metadata": ("response", "metadata.v12", "MetadataResponse"),
            "fetch": ("response", "fetch.v12", "FetchResponse"),
            "produce": ("request", "produce.v9", "ProduceRequest"),
        }
        found["kio"] = _kio(*kio_names[case])
    except ImportError as exc:
        print(f"  (kio not installed: {exc})")
    try:
        from kafka.protocol.consumer.fetch import FetchResponse
        from kafka.protocol.metadata import MetadataResponse
        from kafka.protocol.producer.produce import ProduceRequest

        kafka_python = {
            "metadata": (MetadataResponse, 12),
            "fetch": (FetchResponse, 12),
            "produce": (ProduceRequest, 9),
        }
        found["kafka-python"] = _kafka_python(*kafka_python[case])
    except ImportError as exc:
        print(f"  (kafka-python not installed: {exc})")
    return found


def _decode_pure(cls: type[Any], data: bytes) -> Any:
    """``decode`` with the pure-Python decoder (trailing bytes left unchecked: there are none)."""
    return codec_for(cls).decode_from_pure(data, 0)[0]


def run(case: str, message: Any) -> None:
    data = encode(message)
    cls = type(message)

    def ours() -> tuple[float, float]:
        return best(lambda: decode(cls, data)), best(lambda: encode(message))

    before = ours()
    rows: dict[str, tuple[float, float | None]] = {}
    if codec.ACCELERATED:
        rows["kafkawire (pure)"] = (best(lambda: _decode_pure(cls, data)), None)
    for name, (peer_decode, peer_encode) in peers(case).items():
        decoded = peer_decode(data)
        rows[name] = (
            best(lambda peer_decode=peer_decode: peer_decode(data)),
            best(lambda peer_encode=peer_encode, decoded=decoded: peer_encode(decoded)),
        )
    after = ours()
    ours_decode, ours_encode = min(before[0], after[0]), min(before[1], after[1])
    pure_decode = rows.get("kafkawire (pure)", (ours_decode, None))[0]
    decoder = "compiled (_accel)" if codec.ACCELERATED else "pure-Python"
    print(f"{case}: {cls.__name__} v{cls.__version__}, {len(data):,} bytes; decoder: {decoder}")
    print(f"  {'library':<18}{'decode ms':>10}{'x':>8}{'x pure':>8}{'encode ms':>11}{'x':>8}")
    print(f"  {'kafkawire':<18}{ours_decode * 1e3:>10.2f}{'':>16}{ours_encode * 1e3:>11.2f}")
    for name, (their_decode, their_encode) in rows.items():
        line = f"  {name:<18}{their_decode * 1e3:>10.2f}{their_decode / ours_decode:>7.2f}x"
        if name != "kafkawire (pure)" and codec.ACCELERATED:
            line += f"{their_decode / pure_decode:>7.2f}x"
        else:
            line += f"{'':>8}"
        if their_encode is not None:
            line += f"{their_encode * 1e3:>11.2f}{their_encode / ours_encode:>7.2f}x"
        print(line.rstrip())
    print("  (x = time / kafkawire's time, x pure = time / kafkawire's pure-Python decode time:")
    print("   above 1 means kafkawire is faster)")


def main() -> None:
    run("metadata", metadata_response())
    run("fetch", fetch_response())
    run("produce", produce_request())


if __name__ == "__main__":
    main()
