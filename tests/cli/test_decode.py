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
