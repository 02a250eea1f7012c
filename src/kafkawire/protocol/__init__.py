"""The sans-IO protocol core: the introspective serializer and request/response framing.

Nothing here does I/O: bytes in, values out, and back. The async helpers in ``streams`` only
await the reader and writer they are handed.
"""

from kafkawire.errors import DecodeError, EncodeError

from .codec import Codec, codec_for, decode, encode
from .framing import (
    MAX_FRAME_SIZE,
    FrameDecoder,
    RequestHeader,
    ResponseHeader,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    response_correlation_id,
)
from .streams import FrameReader, FrameWriter, read_frame, write_frame
from .versions import VersionConversionError, convert, struct_type

__all__ = [
    "MAX_FRAME_SIZE",
    "Codec",
    "DecodeError",
    "EncodeError",
    "FrameDecoder",
    "FrameReader",
    "FrameWriter",
    "RequestHeader",
    "ResponseHeader",
    "VersionConversionError",
    "codec_for",
    "convert",
    "decode",
    "decode_request",
    "decode_response",
    "encode",
    "encode_request",
    "encode_response",
    "read_frame",
    "response_correlation_id",
    "struct_type",
    "write_frame",
]
