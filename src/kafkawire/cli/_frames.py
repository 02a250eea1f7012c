"""Walking a capture frame by frame: requests, and the responses paired with them.

A response does not say which API it answers; its correlation id names the request. Frames
whose first four bytes are the correlation id of a request seen earlier (and not yet answered)
are read as that request's response, anything else as a request. Those four bytes can also be
a request's API key and version (Produce v3 is 00 00 00 03), so a frame that does not decode
one way is tried the other way before it is reported.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

from kafkawire.errors import DecodeError
from kafkawire.messages import APIS
from kafkawire.protocol import decode_request, decode_response

from ._json import RecordsBudget, message_json

__all__ = ["ApiVersion", "decode_frames"]

_SIZE = struct.Struct(">i")
ApiVersion = tuple[int, int]  # (API key, version)


def decode_frames(
    capture: bytes, response_to: ApiVersion | None = None, *, max_decompressed: int
) -> Iterator[dict[str, Any]]:
    """One JSON object per frame: what it decodes to, or where its bytes stop making sense.

    ``response_to`` is the API and version to read responses with whose request the capture
    does not hold. The record batches of a frame decompress to at most ``max_decompressed``
    bytes together; ``batches_cut`` counts those shown without their records.
    """
    pending: dict[int, ApiVersion] = {}
    pos = 0
    while pos < len(capture):
        if len(capture) - pos < _SIZE.size:
            yield _broken(
                pos, f"{len(capture) - pos} bytes after the last frame, too few for a size"
            )
            return
        (size,) = _SIZE.unpack_from(capture, pos)
        if size < 0:
            yield _broken(pos, f"frame at byte {pos} has a negative size ({size})")
            return
        if pos + 4 + size > len(capture):
            yield _broken(
                pos,
                f"frame at byte {pos} needs {4 + size} bytes, the capture has {len(capture) - pos}",
            )
            return
        yield {
            "at_byte": pos,
            "size": size,
            **_decode(
                capture[pos + 4 : pos + 4 + size],
                pos + 4,
                pending,
                response_to,
                max_decompressed,
            ),
        }
        pos += 4 + size


def _decode(
    payload: bytes,
    start: int,
    pending: dict[int, ApiVersion],
    response_to: ApiVersion | None,
    max_decompressed: int,
) -> dict[str, Any]:
    paired = pending.get(_SIZE.unpack_from(payload)[0]) if len(payload) >= 4 else None
    attempts: list[ApiVersion | None] = [paired, None] if paired else [None]
    if not paired and response_to:
        attempts.append(response_to)
    failures: list[DecodeError] = []
    for api in attempts:
        budget = RecordsBudget(max_decompressed)  # a failed attempt spends nothing of it
        try:
            return (
                _as_request(payload, pending, budget)
                if api is None
                else _as_response(payload, api, pending, budget)
            )
        except DecodeError as exc:
            failures.append(exc)
    return _located(failures[0], payload, start, hint=not paired and not response_to)


def _as_request(
    payload: bytes, pending: dict[int, ApiVersion], budget: RecordsBudget
) -> dict[str, Any]:
    header, body = decode_request(payload)
    api = (header.request_api_key, header.request_api_version)
    pending[header.correlation_id] = api
    return _shown("request", api, header, body, budget)


def _as_response(
    payload: bytes, api: ApiVersion, pending: dict[int, ApiVersion], budget: RecordsBudget
) -> dict[str, Any]:
    header, body = decode_response(payload, *api)
    pending.pop(header.correlation_id, None)
    return _shown("response", api, header, body, budget)


def _shown(
    kind: str, api: ApiVersion, header: object, body: object, budget: RecordsBudget
) -> dict[str, Any]:
    shown = {
        "kind": kind,
        "api": APIS[api[0]].name,
        "api_key": api[0],
        "version": api[1],
        "header": message_json(header, budget),
        "body": message_json(body, budget),
    }
    if budget.cut_batches:
        shown["batches_cut"] = budget.cut_batches
    return shown


def _located(exc: DecodeError, payload: bytes, start: int, *, hint: bool) -> dict[str, Any]:
    reason = exc.reason
    # A response read as a request fails somewhere in the body its first bytes point to
    # (correlation id 1 reads as Produce v1), so the hint goes with every unpaired failure.
    if hint:
        reason += " (if this is a response, say to what: --response-to API:VERSION)"
    return {
        "error": {
            "field": f"{exc.cls_name}.{exc.path}" if exc.path else exc.cls_name,
            "at_byte": start + exc.offset,
            "reason": reason,
            "bytes_there": payload[exc.offset : exc.offset + 16].hex(" "),
        }
    }


def _broken(pos: int, reason: str) -> dict[str, Any]:
    return {"at_byte": pos, "error": {"at_byte": pos, "reason": reason}}
