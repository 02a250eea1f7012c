"""Reading and writing one frame over asyncio-style streams.

These only await the reader and writer they are handed (``asyncio.StreamReader`` and
``asyncio.StreamWriter`` fit the protocols below), so the protocol package itself never imports
asyncio.
"""

from __future__ import annotations

from typing import Protocol

from kafkawire.errors import ConnectionClosedError

from .framing import MAX_FRAME_SIZE, check_frame_size

__all__ = ["FrameReader", "FrameWriter", "read_frame", "write_frame"]


class FrameReader(Protocol):
    """What :func:`read_frame` reads from: an ``asyncio.StreamReader`` fits."""

    async def readexactly(self, n: int, /) -> bytes:
        """Exactly ``n`` bytes; an ``EOFError`` if the stream ends first."""
        ...


class FrameWriter(Protocol):
    """What :func:`write_frame` writes to: an ``asyncio.StreamWriter`` fits."""

    def write(self, data: bytes, /) -> None:
        """Queue ``data`` to be sent."""
        ...

    async def drain(self) -> None:
        """Wait until the queued bytes may be added to without flooding the peer."""
        ...


async def read_frame(reader: FrameReader, *, max_frame_size: int = MAX_FRAME_SIZE) -> bytes:
    """Read one frame and return its payload (the bytes after the size prefix).

    Raises :class:`ConnectionClosedError` if the stream ends first (``asyncio`` signals that
    with ``IncompleteReadError``, an ``EOFError``) and :class:`FrameError` for a size prefix
    that is negative or over ``max_frame_size``, before reading the body.
    """
    try:
        prefix = await reader.readexactly(4)
        size = int.from_bytes(prefix, "big", signed=True)
        check_frame_size(size, max_frame_size)
        return await reader.readexactly(size)
    except EOFError as exc:
        raise ConnectionClosedError("the connection closed inside a frame") from exc


async def write_frame(writer: FrameWriter, frame: bytes) -> None:
    """Write one whole frame (as built by ``encode_request``) and wait for the buffer to drain."""
    writer.write(frame)
    await writer.drain()
