"""The capture formats ``kafkawire decode`` reads: raw bytes, plain hex and hex dumps."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from kafkawire.cli._capture import MAX_REPEATED, CaptureError, read_capture

# 40 bytes: two full dump lines and a short one, with printable bytes ("test") among them.
DATA = bytes.fromhex("00000012000300000000000100047465737400000000") + bytes(range(0x61, 0x73))


def test_raw_bytes_pass_through() -> None:
    assert read_capture(DATA).data == DATA


def test_plain_hex_with_whitespace() -> None:
    assert (
        read_capture(b"0000 0012\n0003 0000 0000 0001 0004 7465 7374 0000 0000\n").data == DATA[:22]
    )


def test_odd_hex_is_an_error() -> None:
    with pytest.raises(CaptureError, match="odd number of hex digits"):
        read_capture(b"000")


@pytest.mark.parametrize("tool", [["xxd"], ["xxd", "-g1"], ["hexdump", "-C"]])
def test_dumps_written_by_the_tools(tool: list[str]) -> None:
    if shutil.which(tool[0]) is None:
        pytest.skip(f"{tool[0]} is not installed")
    dump = subprocess.run(tool, input=DATA, capture_output=True, check=True).stdout
    assert read_capture(dump).data == DATA


def test_xxd_dump() -> None:
    dump = (
        b"00000000: 0000 0012 0003 0000 0000 0001 0004 7465  ..............te\n"
        b"00000010: 7374 0000 0000 6162 6364 6566 6768 696a  st....abcdefghij\n"
        b"00000020: 6b6c 6d6e 6f70 7172                      klmnopqr\n"
    )
    assert read_capture(dump).data == DATA


def test_hexdump_canonical_with_repeated_lines() -> None:
    # hexdump -C writes "*" for lines equal to the one before, up to the next offset.
    dump = (
        b"00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n"
        b"*\n"
        b"00000030  61 62                                             |ab|\n"
        b"00000032\n"
    )
    assert read_capture(dump).data == bytes(48) + b"ab"


def test_netcat_dump_with_direction_markers() -> None:
    # netcat's hex dump: a direction marker, the offset, bytes, then "# " and the text.
    dump = (
        b"> 00000000 00 00 00 12 00 03 00 00 00 00 00 01 00 04 74 65 # ..............te\n"
        b"> 00000010 73 74 00 00 00 00                               # st....\n"
        b"< 00000000 61 62 63 64 65 66 67 68 69 6a 6b 6c 6d 6e 6f 70 # abcdefghijklmnop\n"
        b"< 00000010 71 72                                           # qr\n"
    )
    assert read_capture(dump).data == DATA


def test_short_line_whose_text_looks_like_hex() -> None:
    # The text column of a last line "ab" must not be read as the byte 0xab.
    dump = b"00000000: 6162  ab\n"
    assert read_capture(dump).data == b"ab"


def test_unreadable_line_is_named() -> None:
    with pytest.raises(CaptureError, match="line 2"):
        read_capture(b"00000000  00 00 00 01  |....|\nhello world\n")


def test_repeats_past_the_limit_are_cut_and_said() -> None:
    # A 150-byte dump whose "*" stands for 1 GiB: read up to the "*", and the cut said.
    dump = (
        b"00000000  00 00 00 12 00 03 00 00  00 00 00 01 00 04 74 65  |..............te|\n"
        b"00000010  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n"
        b"*\n"
        b"40000000\n"
    )
    read = read_capture(dump)
    assert read.data == dump_bytes(dump)
    assert read.cut is not None
    assert "line 4" in read.cut
    assert f"{MAX_REPEATED:,} bytes" in read.cut
    assert "read up to byte 32" in read.cut


def test_repeats_within_the_limit_are_read() -> None:
    limit = MAX_REPEATED + 32  # the two lines shown, then exactly MAX_REPEATED repeated
    dump = (
        b"00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n"
        b"00000010  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n"
        b"*\n" + f"{limit:08x}\n".encode()
    )
    read = read_capture(dump)
    assert read.cut is None
    assert len(read.data) == limit


def dump_bytes(dump: bytes) -> bytes:
    """The bytes of a dump's full lines (offset, 16 bytes, text), without its "*"."""
    return b"".join(
        bytes.fromhex(line[10:58].decode()) for line in dump.splitlines() if b"|" in line
    )
