"""``kafkawire decode``: the protocol debugger."""

from __future__ import annotations

import json
from typing import BinaryIO

import click

from kafkawire.messages import APIS

from ._capture import Capture, CaptureError, parse_hex, read_capture
from ._common import CONTEXT_SETTINGS, Failure, debug_option
from ._frames import ApiVersion, decode_frames

__all__ = ["decode"]

_API_BY_NAME = {info.name.lower(): key for key, info in APIS.items()}


def _api_version(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> ApiVersion | None:
    if value is None:
        return None
    api, _, version = value.partition(":")
    key = int(api) if _digits(api) else _API_BY_NAME.get(api.lower())
    if key not in APIS or not _digits(version) or int(version) not in APIS[key].versions:
        raise click.BadParameter(f"{value!r} is not API:VERSION (e.g. Metadata:12 or 3:12)")
    return key, int(version)


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()  # str.isdigit() takes "²", which int() refuses


@click.command(context_settings=CONTEXT_SETTINGS)
@click.argument("capture", type=click.File("rb"), default="-")
@click.option(
    "--hex", "hex_text", metavar="HEX", help="Decode these hex digits instead of CAPTURE."
)
@click.option(
    "--response-to",
    metavar="API:VERSION",
    callback=_api_version,
    help="Read responses whose request is not in the capture as this API and version.",
)
@click.option("--compact", is_flag=True, help="One JSON object per line instead of indented.")
@click.option(
    "--max-decompressed",
    type=click.IntRange(min=0),
    default=16 * 1024 * 1024,
    show_default="16 MiB",
    metavar="BYTES",
    help="The most the record batches of one frame may decompress to, together.",
)
@debug_option
def decode(
    capture: BinaryIO,
    hex_text: str | None,
    response_to: ApiVersion | None,
    compact: bool,
    max_decompressed: int,
) -> None:
    """Print captured Kafka frames as JSON, through kafkawire's generated types.

    CAPTURE (a file, or - for stdin, the default) holds whole frames, each with its 4-byte
    size: raw bytes, plain hex, or a hex dump written by xxd, hexdump -C or nc -x. Responses
    are paired with the requests before them by correlation id, which gives their API and
    version. Record batches inside Produce and Fetch are decoded too.

    Bytes fields are shown as {"base64": "..."}; record keys, values and header values are
    strings when they are UTF-8 and {"base64": "..."} when not. Where bytes stop making sense,
    the frame's "error" names the field, the byte offset in the capture and the bytes there,
    and the command exits with 1.

    What is cut is said: compressed batches past --max-decompressed are shown without their
    records ("records_cut" says why; the frame's "batches_cut" counts them, and a note goes
    to stderr); a hex dump whose "*" lines stand for more than 64 MiB in all is read up to
    that "*", and a last object {"at_byte", "cut"} says so (exit 1).

    \b
    Examples:
      kafkawire decode --hex 00000012000300000000000100047465737400000000
      xxd capture.bin | kafkawire decode
      kafkawire decode --response-to Metadata:0 response.hex
      kafkawire decode --compact capture.bin | jq .body
    """
    try:
        read = (
            Capture(parse_hex(hex_text)) if hex_text is not None else read_capture(capture.read())
        )
    except CaptureError as exc:
        raise click.BadParameter(str(exc), param_hint="--hex" if hex_text else "CAPTURE") from None
    indent = None if compact else 2
    failures = []
    batches_cut = 0
    for frame in decode_frames(read.data, response_to, max_decompressed=max_decompressed):
        click.echo(json.dumps(frame, indent=indent, ensure_ascii=False))
        if "error" in frame:
            failures.append(frame["error"])
        batches_cut += frame.get("batches_cut", 0)
    if batches_cut:
        batches = (
            "1 compressed batch" if batches_cut == 1 else f"{batches_cut:,} compressed batches"
        )
        click.echo(
            f"Note: {batches} shown without records: a frame's batches may decompress to"
            f" --max-decompressed ({max_decompressed:,} bytes)",
            err=True,
        )
    if read.cut:
        click.echo(json.dumps({"at_byte": len(read.data), "cut": read.cut}, indent=indent))
        raise Failure(f"the capture was cut: {read.cut}")
    if failures:
        first = failures[0]
        where = f" in {first['field']}" if "field" in first else ""
        count = f"{len(failures)} frames could not be decoded; the first: " if failures[1:] else ""
        raise Failure(f"{count}byte {first['at_byte']}{where}: {first['reason']}")
