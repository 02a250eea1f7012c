"""``kafkawire decode``: captured frames printed as JSON through the generated types."""

from __future__ import annotations

import base64
import json
import socket
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kafkawire.messages.metadata.v1 import MetadataRequest
from kafkawire.messages.produce.v3 import (
    PartitionProduceData,
    ProduceRequest,
    TopicProduceData,
)
from kafkawire.protocol import encode_request
from kafkawire.records import Compression, RecordBatchBuilder
from kafkawire.testing.pytest_plugin import Broker

from .conftest import Run

METADATA_V0 = "00000012000300000000000100047465737400000000"


def frames(out: str) -> list[dict[str, Any]]:
    decoder = json.JSONDecoder()
    found, pos = [], 0
    while pos < len(out.rstrip()):
        value, pos = decoder.raw_decode(out, pos)
        found.append(value)
        while pos < len(out) and out[pos].isspace():
            pos += 1
    return found


def test_hex_on_the_command_line(run: Run) -> None:
    result = run("decode", "--hex", METADATA_V0)
    assert result.returncode == 0, result.stderr
    (frame,) = frames(result.stdout)
    assert frame["kind"] == "request"
    assert (frame["api"], frame["api_key"], frame["version"]) == ("Metadata", 3, 0)
    assert frame["header"]["client_id"] == "test"
    assert frame["header"]["correlation_id"] == 1
    assert frame["body"] == {"topics": []}


def test_truncated_frame_says_where(run: Run) -> None:
    # A whole frame of 12 bytes whose client id "test" claims 4 bytes; only 2 follow.
    result = run("decode", "--hex", "0000000c000300000000000100047465")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    (frame,) = frames(result.stdout)
    error = frame["error"]
    assert error["field"] == "RequestHeader.client_id"
    assert error["at_byte"] == 14
    assert error["bytes_there"] == "74 65"
    assert "past the end" in error["reason"]
    assert result.stderr.startswith("Error: byte 14 in RequestHeader.client_id: ")


def test_incomplete_frame_is_reported(run: Run) -> None:
    result = run("decode", "--hex", METADATA_V0[:-4])
    assert result.returncode == 1
    assert "frame at byte 0 needs 22 bytes, the capture has 20" in result.stderr


def test_capture_with_records_from_stdin(run: Run) -> None:
    builder = RecordBatchBuilder(compression=Compression.GZIP)
    builder.append(b"k", b"v\xff", headers=[("h", b"1")], timestamp=5)
    produce = ProduceRequest(
        acks=1,
        timeout_ms=1000,
        topic_data=(
            TopicProduceData(
                name="t",
                partition_data=(PartitionProduceData(index=0, records=builder.build()),),
            ),
        ),
    )
    raw = encode_request(produce, correlation_id=7, client_id="c")
    result = run("decode", input=raw.hex())
    assert result.returncode == 0, result.stderr
    (frame,) = frames(result.stdout)
    (partition,) = frame["body"]["topic_data"][0]["partition_data"]
    (batch,) = partition["records"]
    assert batch["compression"] == "gzip"
    (record,) = batch["records"]
    # Text that is UTF-8 is a string; other bytes are {"base64": ...}.
    assert record["key"] == "k"
    assert record["value"] == {"base64": base64.b64encode(b"v\xff").decode()}
    assert record["headers"] == [["h", "1"]]


def exchange(bootstrap: str, frame: bytes) -> bytes:
    """Send one request frame to the broker and return its response frame, size included."""
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(frame)
        answer = b""
        while len(answer) < 4 or len(answer) < 4 + struct.unpack(">i", answer[:4])[0]:
            chunk = sock.recv(65536)
            assert chunk, "the broker closed the connection"
            answer += chunk
    return answer


@pytest.mark.integration
def test_real_exchange_as_xxd_dump(run: Run, tansu_broker: Broker, tmp_path: Path) -> None:
    request = encode_request(MetadataRequest(topics=None), correlation_id=42, client_id="cap")
    capture = request + exchange(tansu_broker.bootstrap, request)
    dump = subprocess.run(["xxd"], input=capture, capture_output=True, check=True).stdout
    (tmp_path / "capture.txt").write_bytes(dump)
    result = run("decode", str(tmp_path / "capture.txt"))
    assert result.returncode == 0, result.stderr
    asked, answered = frames(result.stdout)
    assert (asked["kind"], answered["kind"]) == ("request", "response")
    assert (answered["api"], answered["version"]) == ("Metadata", 1)
    assert answered["header"]["correlation_id"] == 42
    host, port = tansu_broker.bootstrap.rsplit(":", 1)
    assert [(b["host"], b["port"]) for b in answered["body"]["brokers"]] == [(host, int(port))]


def test_response_without_its_request_needs_a_hint(run: Run) -> None:
    # A Metadata v0 response: correlation id 1, no brokers, no topics.
    response = "0000000c000000010000000000000000"
    result = run("decode", "--hex", response)
    assert result.returncode == 1
    assert "--response-to" in result.stderr
    hinted = run("decode", "--hex", response, "--response-to", "Metadata:0")
    assert hinted.returncode == 0, hinted.stderr
    (frame,) = frames(hinted.stdout)
    assert frame["body"]["brokers"] == []


def test_usage_errors_exit_2(run: Run) -> None:
    assert run("decode", "--hex", "zz").returncode == 2
    assert run("decode", "--response-to", "Nope:1", "--hex", "00").returncode == 2
    assert run("decode", "--no-such-option").returncode == 2


def produce_frame(*batches: bytes) -> bytes:
    """A Produce v3 request frame whose partitions hold ``batches``, one each."""
    request = ProduceRequest(
        acks=1,
        timeout_ms=1000,
        topic_data=(
            TopicProduceData(
                name="t",
                partition_data=tuple(
                    PartitionProduceData(index=i, records=batch) for i, batch in enumerate(batches)
                ),
            ),
        ),
    )
    return encode_request(request, correlation_id=7, client_id="c")


def zstd_batch(*values: bytes) -> bytes:
    builder = RecordBatchBuilder(compression=Compression.ZSTD)
    for value in values:
        builder.append(None, value, timestamp=1)
    return builder.build()


def test_decompression_is_bounded_per_frame(run: Run, tmp_path: Path) -> None:
    # A 3 KB frame whose zstd batches inflate to 2 MiB each: 6 MiB across its partitions,
    # more than the 4 MiB allowed, so the batch that passes it is cut, and the one after it.
    small = zstd_batch(b"shown")
    bomb = zstd_batch(*[bytes(1 << 20)] * 2)
    (tmp_path / "frame.bin").write_bytes(produce_frame(small, bomb, bomb, bomb, small))
    result = run(
        "decode", "--compact", "--max-decompressed", str(4 << 20), str(tmp_path / "frame.bin")
    )
    assert result.returncode == 0, result.stderr
    # The 2 MiB of zeros shown, each written as \u0000, and little more: not the 6 MiB.
    assert len(result.stdout) < 13 << 20
    (frame,) = frames(result.stdout)
    partitions = frame["body"]["topic_data"][0]["partition_data"]
    shown = [p["records"][0] for p in partitions]
    assert [len(b.get("records", [])) for b in shown] == [1, 2, 0, 0, 0]
    assert shown[0]["records"][0]["value"] == "shown"
    assert all("--max-decompressed (4,194,304 bytes)" in b["records_cut"] for b in shown[2:])
    assert frame["batches_cut"] == 3
    assert result.stderr.startswith("Note: 3 compressed batches shown without records")


def test_a_frame_within_the_bound_is_shown_whole(run: Run, tmp_path: Path) -> None:
    bomb = zstd_batch(bytes(1 << 20))
    (tmp_path / "frame.bin").write_bytes(produce_frame(bomb, bomb))
    result = run(
        "decode", "--compact", "--max-decompressed", str(3 << 20), str(tmp_path / "frame.bin")
    )
    assert result.returncode == 0, result.stderr
    (frame,) = frames(result.stdout)
    assert "batches_cut" not in frame
    assert result.stderr == ""


def test_a_dump_that_repeats_too_much_is_cut(run: Run) -> None:
    # 150 bytes of hexdump -C that used to expand to 1 GiB.
    dump = (
        "00000000  00 00 00 12 00 03 00 00  00 00 00 01 00 04 74 65  |..............te|\n"
        "00000010  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n"
        "*\n"
        "40000000\n"
    )
    result = run("decode", "--compact", input=dump)
    assert result.returncode == 1
    last = frames(result.stdout)[-1]
    assert last["at_byte"] == 32
    assert "'*' before line 4" in last["cut"]
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("Error: the capture was cut: ")
