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


def _large_frame(size: int) -> bytes:
    return size.to_bytes(4, "big") + bytes(i % 251 for i in range(size))


@pytest.mark.parametrize("piece", [1, 7, 4096, 65536])
def test_a_large_frame_in_pieces_comes_whole_with_what_follows_it(piece: int) -> None:
    """A frame arriving a socket read at a time (its pieces held apart, joined once): the
    same payload, ``buffered`` counting what is held, and the bytes after it in the piece
    that completes it start the next frame."""
    big = _large_frame(200_000)
    stream = FRAME + big + FRAME * 2 + FRAME[:3]
    decoder = FrameDecoder()
    received: list[bytes] = []
    fed = 0
    for start in range(0, len(stream), piece):
        received += decoder.feed(stream[start : start + piece])
        fed = min(start + piece, len(stream))
        done = sum(4 + len(payload) for payload in received)
        assert decoder.buffered == fed - done
    assert received == [FRAME[4:], big[4:], FRAME[4:], FRAME[4:]]
    assert decoder.buffered == 3


def test_pieces_of_a_frame_are_copied_when_the_caller_may_change_them() -> None:
    big = _large_frame(1000)
    decoder = FrameDecoder()
    assert decoder.feed(big[:500]) == []
    reused = bytearray(big[500:900])
    assert decoder.feed(reused) == []  # type: ignore[arg-type]
    reused[:] = b"\x00" * len(reused)  # a caller reusing its buffer changes nothing held
    assert decoder.feed(big[900:] + FRAME) == [big[4:], FRAME[4:]]


def test_a_bad_prefix_after_a_frame_in_pieces_is_raised_after_that_frame() -> None:
    big = _large_frame(1000)
    decoder = FrameDecoder(max_frame_size=1024)
    assert decoder.feed(big[:10]) == []
    frames = decoder.frames(big[10:] + b"\xff\xff\xff\xfe")
    assert next(frames) == big[4:]
    with pytest.raises(FrameError, match="negative"):
        next(frames)


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
