"""The buffer a decompressor writes into: one ``bytes`` object, filled in place.

Decompressing into a ``bytearray`` and returning ``bytes`` of it holds the output twice at the
end, so a payload at the limit peaked at twice the limit. Here the output is a ``bytes`` object
from the start, written through ``io.BytesIO``, which lends its buffer without copying:

- ``bytes(capacity)`` is allocated zeroed by ``calloc``, so the pages the decompressor never
  writes are never touched;
- while the ``BytesIO`` holds the only reference to it, ``getbuffer()`` is a writable view of
  that very object (CPython copies only a buffer that something else refers to);
- ``truncate`` and ``getvalue()`` shrink it in place to the bytes written and hand it out.

Shrinking in place has a cost, though: glibc serves a big block from fresh ``mmap`` pages
unless a block at least that large was freed before, and a block shrunk to its output is freed
smaller than the next guess, so every payload paid page faults on fresh pages (decoding a
1 MiB zstd batch took a quarter longer). So when the buffer and a copy of its output fit in
the limit together, the output is copied out and the whole buffer freed, for the allocator to
hand to the next payload; only near the limit, where memory matters more, is it shrunk in
place.

Were an interpreter to copy in ``getvalue()``, the result would be the same, only the peak
higher; ``tests/records/test_bounded_memory.py`` measures it.
"""

from __future__ import annotations

import io
from collections.abc import Callable

__all__ = ["filled"]


def filled(capacity: int, fill: Callable[[memoryview], int], *, limit: int) -> bytes:
    """The first ``n`` bytes that ``fill`` writes into a new ``capacity``-byte buffer.

    ``fill`` gets a writable view of the buffer and returns ``n``, how many bytes it wrote
    from the start. It must not keep the view, nor slices of it, past its return. The buffer
    and the result take more than ``max(capacity, limit)`` bytes at no time. What it
    raises propagates; the buffer goes once that exception is handled (its traceback
    holds it until then).
    """
    file = io.BytesIO(bytes(capacity))
    with file.getbuffer() as view:
        size = fill(view)
        if size < capacity and capacity + size <= limit:
            return bytes(view[:size])
    file.truncate(size)
    return file.getvalue()
