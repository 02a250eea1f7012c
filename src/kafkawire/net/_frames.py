"""The socket's end of a connection: an asyncio protocol that splits what arrives into frames.

Rules:

- Bytes are fed to the sans-IO :class:`~kafkawire.protocol.FrameDecoder` as they arrive, and
  each whole frame's payload is handed to ``on_frame`` at once, in the same step (no reader
  task to wake, no read call per frame): a response is settled as its bytes are read.
- The stream ends once, with ``on_lost(reason, cause, by_peer)``: the peer closing it
  (``by_peer``; "inside a frame" when a frame was cut short), a socket or TLS error, a frame
  size prefix the decoder refuses, or whatever ``on_frame`` raised (a response that breaks
  the protocol). Nothing more is read after it.
- Writing is the transport's; :meth:`FrameProtocol.drain` waits while the transport's buffer
  is over its high-water mark (asyncio pauses the protocol), and returns once the stream has
  ended: what waited learns how from its request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from kafkawire.errors import ConnectionClosedError, KafkawireError
from kafkawire.protocol import FrameDecoder

__all__ = ["FrameProtocol", "OnFrame", "OnLost"]

_log = logging.getLogger(__name__)

OnFrame = Callable[[bytes], None]
"""Told each frame's payload (the bytes after its size) as it arrives."""
OnLost = Callable[[str, BaseException | None, bool], None]
"""Told once why the stream ended: ``(reason, cause, by_peer)``."""


class FrameProtocol(asyncio.Protocol):
    """Frames in, flow control out, for one connection; ``peer`` names it in logs."""

    def __init__(self, peer: str, max_frame_size: int) -> None:
        self.peer = peer
        self.transport: asyncio.Transport | None = None
        self.on_frame: OnFrame | None = None  # set by the connection before any data comes
        self.on_lost: OnLost | None = None
        self._decoder = FrameDecoder(max_frame_size)
        self._ended = False
        self._paused = False
        self._drain_waiters: list[asyncio.Future[None]] = []
        self.closed = asyncio.get_running_loop().create_future()  # done once the socket is

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        on_frame = self.on_frame
        assert on_frame is not None
        try:
            frames = self._decoder.frames(data)
            while not self._ended:  # what a frame settles may end the connection
                payload = next(frames, None)
                if payload is None:
                    return
                on_frame(payload)
        except (KafkawireError, OSError) as exc:
            self._end(str(exc), exc, by_peer=False)
        except Exception as exc:
            _log.exception("unexpected error reading from %s", self.peer)
            self._end(f"unexpected error: {exc!r}", exc, by_peer=False)

    def eof_received(self) -> bool:
        where = " inside a frame" if self._decoder.buffered else ""
        self._end(
            "the broker closed the connection",
            ConnectionClosedError(f"the connection closed{where}"),
            by_peer=True,
        )
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is None:
            self._end("the connection closed", ConnectionClosedError("the connection closed"))
        else:
            self._end(str(exc), exc, by_peer=False)
        self._wake_drainers()
        if not self.closed.done():
            self.closed.set_result(None)

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        self._wake_drainers()

    async def drain(self) -> None:
        """Wait while the transport's buffer is full (see the module doc)."""
        if not self._paused or self._ended:
            return
        waiter = asyncio.get_running_loop().create_future()
        self._drain_waiters.append(waiter)
        try:
            await waiter
        finally:
            if waiter in self._drain_waiters:
                self._drain_waiters.remove(waiter)

    def end(self) -> None:
        """The connection is closing: read nothing more, and let writers waiting go on."""
        self._ended = True
        self._wake_drainers()

    def _end(self, reason: str, cause: BaseException | None, *, by_peer: bool = False) -> None:
        if self._ended:
            return
        self._ended = True
        if self.on_lost is not None:
            self.on_lost(reason, cause, by_peer)

    def _wake_drainers(self) -> None:
        waiters, self._drain_waiters = self._drain_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
