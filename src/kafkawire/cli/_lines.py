"""The lines of ``produce``'s input, read off the event loop, and an end to them on Ctrl-C.

The stream is read on a daemon thread of its own, a chunk at a time when asked, not on
asyncio's default executor: a read blocked on a terminal or an idle pipe cannot be stopped,
and ``asyncio.run`` waits for the default executor's threads when it ends, so Ctrl-C hung
until the next line or end of input. :meth:`LineReader.interrupt` ends the lines at once; what
was read and not given (an unfinished line, the rest of a chunk) is counted, never dropped
unsaid.

Lines are read in time linear in their length (a line's pieces are joined once, when its end
arrives), and a line longer than the limit is refused as soon as its length passes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import os
import queue
import threading
from collections.abc import AsyncIterator, Callable
from typing import BinaryIO

__all__ = ["InvalidLine", "LineReader"]

_CHUNK = 1 << 16


class InvalidLine(ValueError):
    """A line of input that does not say what record to produce."""


class LineReader:
    """The lines of ``stream`` without their line ends (``\\n`` or ``\\r\\n``).

    ``unsent`` is how many bytes were read and not given as lines when :meth:`interrupt`
    ended them (the rest of a chunk, an unfinished line).
    """

    def __init__(self, stream: BinaryIO, max_length: int) -> None:
        self._chunks = _Chunks(_reading(stream))
        self._max_length = max_length
        self.interrupted = False
        self.unsent = 0

    def interrupt(self) -> None:
        """End the lines: the line being used is the last; a read under way is not waited for.
        Call it in the event loop (``loop.add_signal_handler`` does)."""
        self.interrupted = True
        self._chunks.interrupt()

    async def lines(self) -> AsyncIterator[bytes]:
        """Each line; a line longer than ``max_length`` bytes raises :class:`InvalidLine`."""
        pieces: list[bytes] = []  # the line being read, when it started in an earlier chunk
        pending = 0
        try:
            while chunk := await self._chunks.read():
                lines = chunk.split(b"\n")
                if len(lines) == 1:
                    pieces.append(chunk)
                    pending += len(chunk)
                    self._check_length(pending)
                    continue
                if pieces:
                    lines[0] = b"".join([*pieces, lines[0]])
                for index, line in enumerate(lines[:-1]):
                    self._check_length(len(line))
                    yield line.removesuffix(b"\r")
                    if self.interrupted:
                        # Every line after this one, and the unfinished last, were not given.
                        self.unsent = sum(len(rest) + 1 for rest in lines[index + 1 :]) - 1
                        return
                pieces = [lines[-1]] if lines[-1] else []
                pending = len(lines[-1])
                self._check_length(pending)
            if self.interrupted:
                self.unsent = pending
            elif pieces:
                yield b"".join(pieces).removesuffix(b"\r")
        finally:
            self._chunks.close()

    def _check_length(self, length: int) -> None:
        if length > self._max_length:
            raise InvalidLine(f"longer than the limit of {self._max_length:,} bytes")


def _reading(stream: BinaryIO) -> Callable[[int], bytes]:
    """How to read a chunk of ``stream``: from its file descriptor when it has one. A thread
    blocked in a buffered stream's read holds the stream's lock, and Python, exiting after
    an interrupt, aborts when it cannot take the lock of stdin ("could not acquire lock ...
    at interpreter shutdown"); nothing was read through the buffer before."""
    try:
        return functools.partial(os.read, stream.fileno())
    except (AttributeError, io.UnsupportedOperation):  # in memory: never blocks
        return getattr(stream, "read1", stream.read)


class _Chunks:
    """Chunks of a stream, each read on a daemon thread when :meth:`read` asks for it."""

    def __init__(self, read: Callable[[int], bytes]) -> None:
        self._read = read
        self._asks: queue.SimpleQueue[asyncio.Future[bytes] | None] = queue.SimpleQueue()
        self._waiting: asyncio.Future[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._interrupted = False

    async def read(self) -> bytes:
        """The next chunk; ``b""`` at the end of the stream or once interrupted."""
        if self._interrupted:
            return b""
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="kafkawire input", daemon=True)
            self._thread.start()
        self._waiting = asyncio.get_running_loop().create_future()
        self._asks.put(self._waiting)
        try:
            return await self._waiting
        finally:
            self._waiting = None

    def interrupt(self) -> None:
        self._interrupted = True
        if self._waiting is not None and not self._waiting.done():
            self._waiting.set_result(b"")  # the thread's read, when it returns, is not used

    def close(self) -> None:
        """Let the thread end (after the read it may be blocked in)."""
        if self._thread is not None:
            self._asks.put(None)

    def _serve(self) -> None:
        while (asked := self._asks.get()) is not None:
            try:
                outcome: bytes | BaseException = self._read(_CHUNK)
            except Exception as exc:  # raised in the event loop, by read()
                outcome = exc
            # The loop may have closed while a read waited (interrupted): nobody is asking.
            with contextlib.suppress(RuntimeError):
                asked.get_loop().call_soon_threadsafe(_settle, asked, outcome)


def _settle(future: asyncio.Future[bytes], outcome: bytes | BaseException) -> None:
    if future.done():  # interrupted meanwhile
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)
