"""The one error tree of kafkawire.

Everything kafkawire raises on purpose derives from :class:`KafkawireError`:

- :class:`EncodeError`: a value cannot be written as the wire type its field declares
  (you broke the protocol);
- :class:`DecodeError`: bytes from the peer do not form a valid message (the peer did);
- :class:`FrameError`: a size prefix that no valid frame can have (negative, or past the limit);
- :class:`UnknownMessageError`: no generated class exists for an (api key, version) pair;
- :class:`ConnectionClosedError`: the peer closed the stream, possibly inside a frame.

Every error has a ``retriable`` flag: whether sending the same request again may succeed.

Broker error codes map onto named subclasses of :class:`BrokerError` (see ``error_codes``).
"""

from __future__ import annotations

__all__ = [
    "ConnectionClosedError",
    "DecodeError",
    "EncodeError",
    "FrameError",
    "KafkawireError",
    "ProtocolError",
    "UnknownMessageError",
]


class KafkawireError(Exception):
    """Root of every error kafkawire raises on purpose."""

    retriable: bool = False


class ProtocolError(KafkawireError):
    """Bytes or values that do not follow the Kafka wire protocol."""


class _PathError(ProtocolError):
    """A protocol error located at a field path inside a message class, at a byte offset."""

    def __init__(self, cls_name: str, path: str, offset: int, reason: str) -> None:
        self.cls_name = cls_name
        self.path = path
        self.offset = offset
        self.reason = reason
        super().__init__(self._render())

    def _render(self) -> str:
        where = f"{self.cls_name}.{self.path}" if self.path else self.cls_name
        return f"{where} at byte {self.offset}: {self.reason}"

    def within(self, cls_name: str, field: str) -> None:
        """Re-anchor the error at the enclosing class, as it bubbles up out of ``field``."""
        self.path = f"{field}.{self.path}" if self.path else field
        self.cls_name = cls_name
        self.args = (self._render(),)


class DecodeError(_PathError):
    """Bytes that cannot be decoded as the class they were read as.

    ``cls_name`` is the outermost class, ``path`` the dotted field path (array elements as
    ``[i]``) and ``offset`` the byte offset in the buffer of the value being read when decoding
    failed (for a string or bytes field, its data after the length prefix).
    """


class EncodeError(_PathError):
    """A value that cannot be written as the wire type of its field.

    ``offset`` is the number of bytes written before the bad field.
    """


class UnknownMessageError(KafkawireError, LookupError):
    """No generated message class exists for the requested API key and version."""


class FrameError(ProtocolError):
    """A frame size prefix that is negative or larger than the configured limit."""


class ConnectionClosedError(KafkawireError):
    """The connection closed before a whole frame arrived; a new connection may succeed."""

    retriable = True
