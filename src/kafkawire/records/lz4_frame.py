"""LZ4 frame descriptors, and the broken header checksum of magic 0 (KAFKA-3160).

Kafka compresses with the LZ4 *frame* format (KIP-57): ::

    magic 04 22 4D 18 | FLG | BD | [content size, 8 bytes if FLG bit 3] | [dict id, 4 bytes if
    FLG bit 0] | HC | blocks ... | end mark 00 00 00 00 | [content checksum]

``HC`` is the second byte of ``xxh32(FLG .. the byte before HC, seed 0)``. Kafka before 0.10
hashed the magic number too, so magic 0 message sets carry a wrong ``HC``; Kafka's Java client
ignores ``HC`` when it reads magic 0 and writes the broken one when it writes magic 0 (so that
0.8/0.9 brokers accept it). cramjam verifies ``HC`` and rejects those frames, so magic 0 frames
get their ``HC`` recomputed before decoding, and broken again after encoding.

xxh32 is written out here because nothing in the standard library or cramjam exposes it; it
only ever hashes the few bytes of a descriptor.
"""

from __future__ import annotations

from .errors import CorruptRecordError
from .model import BytesLike

__all__ = ["FRAME_MAGIC", "with_header_checksum", "xxh32"]

FRAME_MAGIC = b"\x04\x22\x4d\x18"
_FLG_CONTENT_SIZE = 0x08
_FLG_DICT_ID = 0x01
_MASK = 0xFFFFFFFF
_P1, _P2, _P3, _P4, _P5 = 0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _MASK, 13) * _P1) & _MASK


def xxh32(data: bytes, seed: int = 0) -> int:
    """The 32-bit xxHash of ``data`` (reference algorithm, pure Python; meant for short input)."""
    n = len(data)
    i = 0
    if n >= 16:
        v1, v2, v3, v4 = (
            (seed + _P1 + _P2) & _MASK,
            (seed + _P2) & _MASK,
            seed,
            (seed - _P1) & _MASK,
        )
        while i + 16 <= n:
            v1 = _round(v1, int.from_bytes(data[i : i + 4], "little"))
            v2 = _round(v2, int.from_bytes(data[i + 4 : i + 8], "little"))
            v3 = _round(v3, int.from_bytes(data[i + 8 : i + 12], "little"))
            v4 = _round(v4, int.from_bytes(data[i + 12 : i + 16], "little"))
            i += 16
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _MASK
    else:
        h = (seed + _P5) & _MASK
    h = (h + n) & _MASK
    while i + 4 <= n:
        lane = int.from_bytes(data[i : i + 4], "little")
        h = (_rotl((h + lane * _P3) & _MASK, 17) * _P4) & _MASK
        i += 4
    while i < n:
        h = (_rotl((h + data[i] * _P5) & _MASK, 11) * _P1) & _MASK
        i += 1
    h = ((h ^ (h >> 15)) * _P2) & _MASK
    h = ((h ^ (h >> 13)) * _P3) & _MASK
    return h ^ (h >> 16)


def with_header_checksum(frame: BytesLike, *, broken: bool) -> bytes:
    """A copy of the LZ4 frame ``frame`` whose header checksum is recomputed.

    ``broken=False`` writes the checksum the LZ4 format defines (over the descriptor);
    ``broken=True`` writes the one Kafka < 0.10 computed (over magic number and descriptor).
    Raises :class:`CorruptRecordError` if ``frame`` does not start with an LZ4 frame header.
    """
    if len(frame) < 7 or bytes(frame[:4]) != FRAME_MAGIC:
        raise CorruptRecordError("lz4 payload does not start with an LZ4 frame header")
    flg = frame[4]
    hc_at = 6 + (8 if flg & _FLG_CONTENT_SIZE else 0) + (4 if flg & _FLG_DICT_ID else 0)
    if len(frame) <= hc_at:
        raise CorruptRecordError("lz4 frame header runs past the end of the payload")
    out = bytearray(frame)
    out[hc_at] = (xxh32(bytes(out[0 if broken else 4 : hc_at])) >> 8) & 0xFF
    return bytes(out)
