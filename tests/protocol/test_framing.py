"""Splitting streams into frames, with size limits, sans-IO and over asyncio streams."""

from __future__ import annotations

import asyncio

import pytest

from kafkawire.errors import ConnectionClosedError, DecodeError, FrameError
from kafkawire.messages.metadata import v0 as metadata_v0
from kafkawire.protocol import FrameDecoder, encode_request, read_frame, write_frame

FRAME = encode_request(metadata_v0.MetadataRequest(topics=()), correlation_id=1, client_id="t")


def test_frames_arrive_byte_by_byte_and_several_at_once() -> None:
    decoder = FrameDecoder()
    received: list[bytes] = []
    for byte in FRAME:
        received += decoder.feed(bytes((byte,)))
    assert received == [FRAME[4:]]
    assert decoder.feed(FRAME * 3 + FRAME[:5]) == [FRAME[4:]] * 3
    assert decoder.buffered == 5


@pytest.mark.parametrize(
    ("prefix", "message"),
    [
        (b"\xff\xff\xff\xfe", "negative"),
        (b"\x7f\xff\xff\xff", "exceeds the limit of 1024 bytes"),
    ],
)
def test_bad_size_prefixes(prefix: bytes, message: str) -> None:
    with pytest.raises(FrameError, match=message):
        FrameDecoder(max_frame_size=1024).feed(prefix)


def test_frames_before_a_bad_prefix_are_taken_first() -> None:
    """A connection answers the requests whose frames came whole before the stream broke."""
    frames = FrameDecoder(max_frame_size=1024).frames(FRAME * 2 + b"\xff\xff\xff\xfe")
    assert [next(frames), next(frames)] == [FRAME[4:]] * 2
    with pytest.raises(FrameError, match="negative"):
        next(frames)


async def test_read_and_write_one_frame_over_streams() -> None:
    reader = asyncio.StreamReader()
    reader.feed_data(FRAME + FRAME[:6])
    reader.feed_eof()
    assert await read_frame(reader) == FRAME[4:]
    with pytest.raises(ConnectionClosedError):
        await read_frame(reader)


async def test_read_frame_refuses_a_two_gigabyte_prefix_before_reading_it() -> None:
    reader = asyncio.StreamReader()
    reader.feed_data(b"\x7f\xff\xff\xff")  # and nothing after: reading the body would hang
    with pytest.raises(FrameError, match="exceeds the limit"):
        await asyncio.wait_for(read_frame(reader), timeout=1)


async def test_write_frame_drains() -> None:
    written: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            written.append(data)

        async def drain(self) -> None:
            written.append(b"<drained>")

    await write_frame(Writer(), FRAME)
    assert written == [FRAME, b"<drained>"]


def test_trailing_bytes_after_a_response_are_refused_unless_allowed(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kafkawire.messages.metadata import v12 as metadata_v12
    from kafkawire.protocol import decode_response, encode_response, framing

    # Logged once per class in a process; this test runs once per decoder.
    monkeypatch.setattr(framing, "_WARNED_TRAILING", set())

    frame = encode_response(metadata_v12.MetadataResponse(), correlation_id=3)
    payload = frame[4:] + b"\x00"
    with pytest.raises(DecodeError, match="1 trailing bytes"):
        decode_response(payload, 3, 12)
    header, body = decode_response(payload, 3, 12, trailing_ok=True)
    assert (header.correlation_id, body) == (3, metadata_v12.MetadataResponse())
    assert "MetadataResponse v12: ignored 1 trailing bytes" in caplog.text
    # Other counts of trailing bytes neither log again nor grow what is remembered.
    for extra in range(2, 50):
        decode_response(frame[4:] + b"\x00" * extra, 3, 12, trailing_ok=True)
    assert caplog.text.count("trailing bytes") == 1
    assert {metadata_v12.MetadataResponse} == framing._WARNED_TRAILING
