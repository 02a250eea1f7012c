"""Frames: a 4-byte big-endian size, then a header, then a message body.

Requests carry request header v0-v2 (API key, version, correlation id, client id, tags);
responses carry response header v0-v1 (correlation id, tags). Which header version goes with a
message is a fact of the generated class (``__header_version__``), so ApiVersions responses,
which always use header v0, need no special case here.

A response does not say which API it answers: the caller passes the API key and version of the
request it sent, matched by correlation id (see :func:`response_correlation_id`).
"""

from __future__ import annotations

import functools
import logging
import struct
from collections.abc import Iterator
from typing import Any

from kafkawire.errors import DecodeError, EncodeError, FrameError, UnknownMessageError
from kafkawire.messages import request_type, response_type
from kafkawire.messages.request_header import v0 as request_header_v0
from kafkawire.messages.request_header import v1 as request_header_v1
from kafkawire.messages.request_header import v2 as request_header_v2
from kafkawire.messages.response_header import v0 as response_header_v0
from kafkawire.messages.response_header import v1 as response_header_v1

from .codec import codec_for

__all__ = [
    "MAX_FRAME_SIZE",
    "FrameDecoder",
    "RequestHeader",
    "ResponseHeader",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
    "response_correlation_id",
]

# Kafka's own default for socket.request.max.bytes; fetch responses stay well below it.
MAX_FRAME_SIZE = 100 * 1024 * 1024
"""The default bound on one frame's size, in bytes (100 MiB)."""

RequestHeader = (
    request_header_v0.RequestHeader
    | request_header_v1.RequestHeader
    | request_header_v2.RequestHeader
)
"""A request header of any version (v0 to v2)."""
ResponseHeader = response_header_v0.ResponseHeader | response_header_v1.ResponseHeader
"""A response header of any version (v0 or v1)."""

_REQUEST_HEADERS: dict[int, type[Any]] = {
    0: request_header_v0.RequestHeader,
    1: request_header_v1.RequestHeader,
    2: request_header_v2.RequestHeader,
}
_RESPONSE_HEADERS: dict[int, type[Any]] = {
    0: response_header_v0.ResponseHeader,
    1: response_header_v1.ResponseHeader,
}
_SIZE = struct.Struct(">i")
_log = logging.getLogger(__name__)
# Classes whose trailing bytes were logged: bounded by the number of generated classes.
_WARNED_TRAILING: set[type[Any]] = set()
_API_KEY_AND_VERSION = struct.Struct(">hh")
# Every request header starts with the API key and version (int16 each), then the
# correlation id; after the frame's size prefix.
_CORRELATION_ID = struct.Struct(">i")
_CORRELATION_ID_AT = 4 + _API_KEY_AND_VERSION.size
# The response class of each API key and version a connection reads (at most the API
# versions kafkawire knows; an unknown one raises and is not kept).
_response_class = functools.lru_cache(maxsize=1024)(response_type)


def _message_class(obj: object, kind: str) -> type[Any]:
    cls: type[Any] = type(obj)
    if getattr(cls, "__kind__", None) != kind:
        raise EncodeError(cls.__name__, "", 0, f"not a generated {kind} class")
    return cls


def encode_request(request: object, *, correlation_id: int, client_id: str | None) -> bytes:
    """A whole request frame: size, request header, body."""
    cls: Any = _message_class(request, "request")  # Any: a class is hashable, for the cache
    out = bytearray(_header_frame(cls, client_id))
    try:
        _CORRELATION_ID.pack_into(out, _CORRELATION_ID_AT, correlation_id)
    except struct.error:
        out = _header_encoded(cls, correlation_id, client_id)  # the codec says what is wrong
    codec_for(cls).encode_into(request, out)
    _SIZE.pack_into(out, 0, len(out) - 4)
    return bytes(out)


@functools.lru_cache(maxsize=1024)
def _header_frame(cls: Any, client_id: str | None) -> bytes:
    """The size prefix and request header of a ``cls`` request with correlation id 0: the
    header is the same for every request of a class but for its correlation id, which
    :func:`encode_request` writes in (a request costs no header object and codec run)."""
    return bytes(_header_encoded(cls, 0, client_id))


def _header_encoded(cls: type[Any], correlation_id: int, client_id: str | None) -> bytearray:
    header_cls = _REQUEST_HEADERS[cls.__header_version__]
    fields: dict[str, Any] = {
        "request_api_key": cls.__api_key__,
        "request_api_version": cls.__version__,
        "correlation_id": correlation_id,
    }
    if cls.__header_version__ >= 1:
        fields["client_id"] = client_id
    out = bytearray(4)
    codec_for(header_cls).encode_into(header_cls(**fields), out)
    return out


def encode_response(response: object, *, correlation_id: int) -> bytes:
    """A whole response frame: size, response header, body (for brokers and test peers)."""
    cls = _message_class(response, "response")
    header_cls = _RESPONSE_HEADERS[cls.__header_version__]
    out = bytearray(4)
    codec_for(header_cls).encode_into(header_cls(correlation_id=correlation_id), out)
    codec_for(cls).encode_into(response, out)
    _SIZE.pack_into(out, 0, len(out) - 4)
    return bytes(out)


def _decode_after_header(
    cls: type[Any], payload: bytes, pos: int, *, trailing_ok: bool = False
) -> Any:
    body, pos = codec_for(cls).decode_from(payload, pos)
    if pos != len(payload):
        extra = len(payload) - pos
        if not trailing_ok:
            raise DecodeError(cls.__name__, "", pos, f"{extra} trailing bytes")
        if cls not in _WARNED_TRAILING:
            _WARNED_TRAILING.add(cls)
            _log.warning(
                "%s v%d: ignored %d trailing bytes after the response",
                cls.__name__,
                cls.__version__,
                extra,
            )
    return body


def decode_request(payload: bytes) -> tuple[RequestHeader, Any]:
    """The header and body of a request frame's payload (the bytes after the size)."""
    if len(payload) < _API_KEY_AND_VERSION.size:
        raise DecodeError("RequestHeader", "", 0, "input ends inside the field")
    api_key, version = _API_KEY_AND_VERSION.unpack_from(payload, 0)
    try:
        cls = request_type(api_key, version)
    except UnknownMessageError as exc:
        raise DecodeError("RequestHeader", "request_api_key", 0, str(exc)) from None
    header, pos = codec_for(_REQUEST_HEADERS[cls.__header_version__]).decode_from(payload, 0)
    return header, _decode_after_header(cls, payload, pos)


def decode_response(
    payload: bytes, api_key: int, api_version: int, *, trailing_ok: bool = False
) -> tuple[ResponseHeader, Any]:
    """The header and body of a response payload to a request of ``api_key`` at ``api_version``.

    With ``trailing_ok``, bytes left after a complete response are ignored (and logged once per
    class) instead of raising: Kafka's Java client never checks for them, and some
    brokers send them (librdkafka's mock cluster repeats the tagged fields of flexible Metadata
    responses). The response itself must still decode completely.
    """
    cls = _response_class(api_key, api_version)
    header, pos = codec_for(_RESPONSE_HEADERS[cls.__header_version__]).decode_from(payload, 0)
    return header, _decode_after_header(cls, payload, pos, trailing_ok=trailing_ok)


def response_correlation_id(payload: bytes) -> int:
    """The correlation id every response header starts with."""
    if len(payload) < _SIZE.size:
        raise DecodeError("ResponseHeader", "correlation_id", 0, "input ends inside the field")
    correlation_id: int = _SIZE.unpack_from(payload, 0)[0]
    return correlation_id


def check_frame_size(size: int, max_frame_size: int) -> None:
    """Refuse a size prefix before anything is allocated for it."""
    if size < 0:
        raise FrameError(f"frame size prefix {size} is negative")
    if size > max_frame_size:
        raise FrameError(
            f"frame of {size} bytes exceeds the limit of {max_frame_size} bytes "
            "(the max_frame_size setting)"
        )


class FrameDecoder:
    """Splits a byte stream into frame payloads: feed it bytes, get whole frames back.

    Sans-IO in the manner of h11: it never reads or waits; a partial frame stays buffered until
    more bytes are fed. A bad size prefix raises :class:`FrameError`, after which the stream is
    unusable (there is no way to find the next frame boundary).

    A frame that arrives in pieces (a fetch response of megabytes comes a socket read of
    256 KiB at a time) keeps them apart and joins them once, when it is whole: appending each
    to one buffer copied the buffer again at its resizes, and the payload once more out of
    it (the Spark reader's 4 MiB fetches: 53-67 ns a record in here before, 16 after).
    """

    def __init__(self, max_frame_size: int = MAX_FRAME_SIZE) -> None:
        self._buffer = bytearray()  # bytes that begin no frame still coming in pieces
        self._pieces: list[bytes] = []  # the payload of the frame coming in pieces, so far
        self._held = 0  # their bytes
        self._missing = 0  # the bytes of its payload still to come; 0: none is coming
        self._max_frame_size = max_frame_size

    @property
    def buffered(self) -> int:
        """Bytes held that do not yet form a whole frame."""
        pieces = _SIZE.size + self._held if self._missing else 0
        return len(self._buffer) + pieces

    def feed(self, data: bytes) -> list[bytes]:
        """Add ``data`` and return the payloads of the frames it completes, in order."""
        return list(self.frames(data))

    def frames(self, data: bytes) -> Iterator[bytes]:
        """:meth:`feed`, one payload at a time: a bad size prefix raises :class:`FrameError`
        only once the frames before it were taken (a connection answers their requests
        first, as one reading frame by frame does). Every byte of ``data`` is held before
        the first payload is given."""
        buffer = self._buffer
        missing = self._missing
        if not missing:
            buffer += data
        elif len(data) < missing:
            self._keep(data)
            return
        else:
            rest = memoryview(data)
            payload = b"".join((*self._pieces, rest[:missing]))
            buffer += rest[missing:]
            self._pieces, self._held, self._missing = [], 0, 0
            yield payload
        while len(buffer) >= _SIZE.size:
            (size,) = _SIZE.unpack_from(buffer, 0)
            check_frame_size(size, self._max_frame_size)
            if len(buffer) - _SIZE.size < size:  # the rest comes in pieces: keep them apart
                with memoryview(buffer) as view:
                    self._missing = size
                    self._keep(bytes(view[_SIZE.size :]))
                del buffer[:]
                return
            with memoryview(buffer) as view:
                payload = bytes(view[4 : 4 + size])
            del buffer[: 4 + size]
            yield payload

    def _keep(self, piece: bytes) -> None:
        """Hold ``piece`` of the frame coming in pieces (a copy, unless it cannot change)."""
        self._pieces.append(piece if type(piece) is bytes else bytes(piece))
        self._held += len(piece)
        self._missing -= len(piece)
