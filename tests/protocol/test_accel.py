"""The compiled message decoders (``kafkawire.protocol._accel``): in use when built, and identical.

The decoding tests of the other modules run against both decoders (see ``conftest.py``); here
the two are compared head to head on every generated class, with valid encodings and with
random, mutated and truncated ones: where the pure decoder succeeds, the compiled one must
succeed on its own (``Decoder.raw``, no fallback) with an identical object (types included);
where the pure decoder raises a DecodeError, the compiled one must fail on its own, and the
chosen decoder must raise the same DecodeError.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import importlib.util
import os
import struct
import subprocess
import sys
import uuid
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkawire.errors import DecodeError
from kafkawire.protocol import codec, codec_for, decode, encode
from kafkawire.testing.strategies import messages
from tests.budgets import examples

from .catalog import all_classes, class_id, group_classes, groups

DISABLED = bool(os.environ.get("KAFKAWIRE_NO_EXTENSIONS"))
BUILT = importlib.util.find_spec("kafkawire.protocol._accel") is not None
needs_accel = pytest.mark.skipif(
    not codec.ACCELERATED, reason="the C extension is not built, or disabled"
)
# About 780 classes, in groups (catalog.groups) whose examples draw every class of theirs: a
# small budget per class keeps the module to a few seconds.
PER_CLASS = settings(max_examples=examples(3))


def assert_same(got: Any, expected: Any, path: str = "") -> None:
    """Equal values of identical types, all the way down (floats bit for bit)."""
    assert type(got) is type(expected), path
    if isinstance(expected, memoryview):
        assert got.tobytes() == expected.tobytes(), path
        assert got.obj is expected.obj, path  # both views of the buffer decoded
    elif isinstance(expected, float):
        assert struct.pack(">d", got) == struct.pack(">d", expected), path
    elif isinstance(expected, tuple):
        assert len(got) == len(expected), path
        for index, (a, b) in enumerate(zip(got, expected, strict=True)):
            assert_same(a, b, f"{path}[{index}]")
    elif dataclasses.is_dataclass(expected):
        for f in dataclasses.fields(expected):
            assert_same(getattr(got, f.name), getattr(expected, f.name), f"{path}.{f.name}")
    else:
        assert got == expected, path


def check_same(cls: type[Any], data: bytes, pos: int = 0, *, chosen_too: bool = True) -> bool:
    """Both decoders agree on ``data`` (see the module's docstring); whether it decoded.

    Without ``chosen_too``, a failure is not also checked through the chosen decoder (whose
    fallback is the pure decoder, so it raises the same error by construction). Plain ``try``
    rather than ``pytest.raises``: this runs some 100,000 times.
    """
    chosen = codec_for(cls)
    try:
        expected = chosen.decode_from_pure(data, pos)
    except DecodeError as exc:
        failure = exc
    else:
        assert_same(chosen.decode_from.raw(data, pos), expected)  # type: ignore[attr-defined]
        assert_same(chosen.decode_from(data, pos), expected)
        return True
    try:
        chosen.decode_from.raw(data, pos)  # type: ignore[attr-defined]
    except ValueError:  # any reason: the pure decoder words it
        pass
    else:
        raise AssertionError(f"the compiled decoder accepted what the pure one refused: {failure}")
    if not chosen_too:
        return False
    raised: DecodeError | None = None
    try:
        chosen.decode_from(data, pos)
    except DecodeError as exc:
        raised = exc
    assert raised is not None, "the chosen decoder accepted what the pure one refused"
    assert (str(raised), raised.path, raised.offset) == (str(failure), failure.path, failure.offset)
    return False


def test_the_compiled_decoders_are_in_use_when_built_and_not_disabled() -> None:
    assert codec.ACCELERATED is (BUILT and not DISABLED)
    for cls in all_classes():
        chosen = codec_for(cls)
        if codec.ACCELERATED:
            assert type(chosen.decode_from).__name__ == "Decoder", cls
        else:
            assert chosen.decode_from is chosen.decode_from_pure


def test_kafkawire_no_extensions_forces_the_pure_decoders() -> None:
    code = (
        "from kafkawire.protocol import codec;"
        "from kafkawire.messages import response_type;"
        "c = codec.codec_for(response_type(1, 12));"
        "print(codec.ACCELERATED, c.decode_from is c.decode_from_pure)"
    )
    for disable, expected in (("1", "False True"), ("", f"{BUILT} {not BUILT}")):
        result = subprocess.run(
            [sys.executable, "-c", code],
            env=dict(os.environ, KAFKAWIRE_NO_EXTENSIONS=disable),
            check=True,
            capture_output=True,
            text=True,
        )
        assert result.stdout.split() == expected.split()


# -- every generated class, head to head -----------------------------------------------------


@needs_accel
@pytest.mark.parametrize("group", groups())
@PER_CLASS
@given(data=st.data())
def test_both_decoders_agree_on_valid_truncated_mutated_and_random_bytes(
    group: str, data: st.DataObject
) -> None:
    for cls in group_classes(group):
        encoded = encode(data.draw(messages(cls), label=class_id(cls)))
        assert check_same(cls, encoded)
        assert check_same(cls, b"\x07" * 3 + encoded, 3)  # at an offset, as after a header
        for cut in range(len(encoded)):
            assert not check_same(cls, encoded[:cut], chosen_too=cut % 8 == 0)
        buffer = bytearray(encoded)
        for _ in range(data.draw(st.integers(1, 3))):
            at = data.draw(st.integers(0, len(buffer)))
            action = data.draw(st.sampled_from(["set", "insert", "delete"]))
            if action == "insert" or not buffer:
                buffer[at:at] = bytes([data.draw(st.integers(0, 255))])
            elif action == "delete":
                del buffer[min(at, len(buffer) - 1)]
            else:
                buffer[min(at, len(buffer) - 1)] = data.draw(st.integers(0, 255))
        check_same(cls, bytes(buffer))
        check_same(cls, data.draw(st.binary(max_size=48)))


# -- corners the generated strategies reach rarely ---------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Varints:
    __flexible__: ClassVar[bool] = False
    small: int = dataclasses.field(default=0, metadata={"kafka_type": "varint"})
    large: int = dataclasses.field(default=0, metadata={"kafka_type": "varlong"})
    many: tuple[int, ...] = dataclasses.field(default=(), metadata={"kafka_type": "[]varlong"})


def _uvarint(value: int, length: int) -> bytes:
    """``value`` as an unsigned varint of exactly ``length`` bytes (padded, or overlong)."""
    out = bytearray()
    for i in range(length):
        out.append((value & 0x7F) | (0x80 if i < length - 1 else 0))
        value >>= 7
    return bytes(out)


@needs_accel
@pytest.mark.parametrize(
    "raw", [0, 1, 2**32, 2**35 - 1, 2**63, 2**64 - 1, 2**64, 2**65 + 1, 2**70 - 1, 2**70 - 2]
)
def test_varints_of_any_width_decode_as_python_reads_them(raw: int) -> None:
    # Python's readers take five bytes for a varint and ten for a varlong, and their zigzag
    # has no width: up to 35 and 70 bits.
    small = _uvarint(raw & (2**35 - 1), 5)
    large = _uvarint(raw, 10)
    count = b"\x00\x00\x00\x02"
    assert check_same(Varints, small + large + count + large + _uvarint(raw % 128, 1))
    assert not check_same(Varints, small + _uvarint(raw, 11) + count)


@needs_accel
def test_nullable_lengths_below_minus_one_and_struct_markers_read_as_in_python() -> None:
    from kafkawire.messages.metadata import v1 as metadata_v1
    from kafkawire.messages.testdata.nullable_struct_message import v0, v2

    # A non-compact nullable string of length -5 is null; a non-nullable one is an error.
    broker = b"\x00\x00\x00\x01" + b"\x00\x01h" + b"\x00\x00\x00\x01" + b"\xff\xfb"
    body = b"\x00\x00\x00\x01" + broker + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x00"
    assert check_same(metadata_v1.MetadataResponse, body)
    assert decode(metadata_v1.MetadataResponse, body).brokers[0].rack is None
    assert not check_same(metadata_v1.MetadataResponse, body.replace(b"\x00\x01h", b"\xff\xfeh"))
    # A nullable struct's marker: 128 and above is null, any other byte is present.
    for cls in (v0.NullableStructMessage, v2.NullableStructMessage):
        data = bytearray(encode(cls()))
        for marker in (0, 1, 5, 127, 128, 255):
            for at in range(len(data)):
                mutated = bytearray(data)
                mutated[at] = marker
                check_same(cls, bytes(mutated))


@needs_accel
def test_tagged_fields_unknown_huge_duplicated_and_known() -> None:
    from kafkawire.messages.testdata.simple_example_message import v1 as example_v1

    cls = example_v1.SimpleExampleMessage
    message = cls(process_id=uuid.UUID(int=1), my_tagged_int_array=(1, 2), my_int16=7)
    data = encode(message)
    assert check_same(cls, data)
    # The message's own tagged-field section is its last byte when no tagged field is set.
    plain = encode(cls(process_id=uuid.UUID(int=1)))
    assert plain.endswith(b"\x00")
    plain = plain[:-1]
    # An unknown tag past 2**31 (Python reads five-byte varints) twice, a count written long,
    # a known tag (0) with bytes to spare.
    sections = (
        _uvarint(2, 1) + _uvarint(2**34, 5) + b"\x01x" + _uvarint(2**34, 5) + b"\x00",
        _uvarint(1, 1) + _uvarint(9, 1) + b"\x00",
        _uvarint(0, 3),
        _uvarint(1, 1) + _uvarint(0, 1) + b"\x03\x00\x00\x01",
    )
    for section in sections:
        assert check_same(cls, plain + section) is (section != sections[-1])


@needs_accel
def test_other_buffers_and_positions_are_left_to_the_pure_decoder() -> None:
    from kafkawire.messages.fetch import v12 as fetch_v12

    message = fetch_v12.FetchResponse(
        responses=(
            fetch_v12.FetchableTopicResponse(
                topic="t", partitions=(fetch_v12.PartitionData(partition_index=1, records=b"r"),)
            ),
        )
    )
    data = encode(message)
    chosen = codec_for(fetch_v12.FetchResponse)
    buf = bytearray(data)  # its bytes fields are bytearray slices
    assert_same(chosen.decode_from(buf, 0), chosen.decode_from_pure(buf, 0))
    view = memoryview(data)
    assert_same(chosen.decode_from(data, 0, view), chosen.decode_from_pure(data, 0, view))  # type: ignore[call-arg]
    assert chosen.decode_from(data, 0, view)[0].responses[0].partitions[0].records.obj is data  # type: ignore[call-arg]
    with pytest.raises(DecodeError):
        chosen.decode_from(data, len(data) + 1)
    with pytest.raises(TypeError):
        chosen.decode_from(data, -1.0)  # type: ignore[arg-type]


def test_a_class_the_extension_refuses_decodes_with_its_pure_decoder() -> None:
    # Two names for one slot: the pure decoder's twin fills both, the compiled decoder would
    # leave one slot unset, so it refuses the class (and its codec keeps the pure decoder).
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Aliased:
        __flexible__: ClassVar[bool] = False
        a: int = dataclasses.field(default=0, metadata={"kafka_type": "int32"})
        b: int = dataclasses.field(default=0, metadata={"kafka_type": "int32"})

    Aliased.b = Aliased.__dict__["a"]  # type: ignore[misc]
    chosen = codec_for(Aliased)
    assert chosen.decode_from is chosen.decode_from_pure
    assert decode(Aliased, b"\x00\x00\x00\x05\x00\x00\x00\x06").a == 5  # b's slot unseen


@needs_accel
def test_the_decoder_refuses_layouts_it_cannot_fill() -> None:
    from kafkawire.protocol import _accel  # type: ignore[attr-defined]

    @dataclasses.dataclass(frozen=True, slots=True)
    class Two:
        a: int
        b: int

    int32 = 4
    with pytest.raises(TypeError, match="slot layout"):  # b would stay unset
        _accel.Decoder(Two, (("a", int32, 0, 0, None),), (), False, False, None)
    with pytest.raises(TypeError, match="share a slot"):
        _accel.Decoder(Two, (("a", int32, 0, 0, None),) * 2, (), False, False, None)
    with pytest.raises(TypeError, match="not an object slot"):
        _accel.Decoder(
            Two, (("a", int32, 0, 0, None), ("c", int32, 0, 0, None)), (), False, False, None
        )
    with pytest.raises(TypeError, match="out of range"):
        _accel.Decoder(
            Two, (("a", 99, 0, 0, None), ("b", int32, 0, 0, None)), (), False, False, None
        )
    with pytest.raises(TypeError, match="needs its Decoder"):
        _accel.Decoder(
            Two, (("a", 14, 0, 0, None), ("b", int32, 0, 0, None)), (), False, False, None
        )
    decoder = _accel.Decoder(
        Two, (("a", int32, 0, 0, None), ("b", int32, 0, 0, None)), (), False, False, None
    )
    assert decoder(b"\x00\x00\x00\x01\x00\x00\x00\x02", 0) == (Two(1, 2), 8)
    with pytest.raises(ValueError, match="past the end"):  # no fallback given
        decoder(b"\x00\x00\x00\x01", 0)


@needs_accel
def test_the_decoder_fills_classes_whose_bases_hold_nothing() -> None:
    # As generated requests derive from RequestMessage[...]: bases with empty __slots__ add
    # nothing to the layout, so the compiled decoder takes the class; a base that holds a slot
    # would leave that slot unset, so it is refused.
    from kafkawire.protocol import _accel  # type: ignore[attr-defined]

    class Stateless:
        __slots__ = ()

    class Holding:
        __slots__ = ("x",)

    @dataclasses.dataclass(frozen=True, slots=True)
    class OnStateless(Stateless):
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class OnHolding(Holding):
        a: int

    int32 = 4
    decoder = _accel.Decoder(OnStateless, (("a", int32, 0, 0, None),), (), False, False, None)
    assert decoder(b"\x00\x00\x00\x07", 0) == (OnStateless(7), 4)
    with pytest.raises(TypeError, match="slot layout"):
        _accel.Decoder(OnHolding, (("a", int32, 0, 0, None),), (), False, False, None)


@needs_accel
def test_the_decoder_refuses_array_widths_whose_bound_could_overflow() -> None:
    # ``count * width`` is the array bound; counts reach 2**35, so a width past the planner's
    # (16 at most) could overflow it (undefined behaviour, a bound that lets anything through).
    from kafkawire.protocol import _accel  # type: ignore[attr-defined]

    @dataclasses.dataclass(frozen=True, slots=True)
    class One:
        a: Any

    string, array_compact = 8, 1 | 4
    with pytest.raises(TypeError, match="out of range"):
        _accel.Decoder(One, (("a", string, array_compact, 2**62, None),), (), False, False, None)
    decoder = _accel.Decoder(One, (("a", string, array_compact, 1, None),), (), False, False, None)
    assert decoder(b"\x02\x02x", 0) == (One(("x",)), 3)
    with pytest.raises(ValueError, match="past the end"):
        decoder(b"\x05\x01", 0)


@needs_accel
def test_plans_nested_past_the_recursion_limit_raise_instead_of_overflowing_the_stack() -> None:
    # Structs can take no bytes, so only the plan bounds the depth; a chain of 300,000 used
    # to recurse in C until the stack overflowed. Now it is the pure decoder's RecursionError.
    # (os._exit: releasing so deep a chain of decoders is itself a deep recursion.)
    code = """if True:
        import dataclasses, os
        from kafkawire.protocol import _accel

        @dataclasses.dataclass(frozen=True, slots=True)
        class One:
            a: object

        @dataclasses.dataclass(frozen=True, slots=True)
        class Empty:
            pass

        decoder = _accel.Decoder(Empty, (), (), False, False, None)
        depth = {depth}
        for _ in range(depth):
            decoder = _accel.Decoder(One, (("a", 14, 0, 0, decoder),), (), False, False, None)
        try:
            obj, pos = decoder.raw(b"", 0)
        except RecursionError:
            print("RecursionError", flush=True)
        else:
            for _ in range(depth):
                obj = obj.a
            print(type(obj).__name__, pos, flush=True)
        os._exit(0)
    """
    for depth, expected in ((50, "Empty 0"), (300_000, "RecursionError")):
        result = subprocess.run(
            [sys.executable, "-c", code.format(depth=depth)],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (result.returncode, result.stdout.strip()) == (0, expected), result.stderr[-2000:]


# -- hostile input and surroundings ---------------------------------------------------------------


@needs_accel
def test_failing_and_succeeding_decodes_leak_nothing() -> None:
    from kafkawire.messages.fetch import v12 as fetch_v12
    from kafkawire.messages.metadata import v12 as metadata_v12

    samples = []
    for cls, message in (
        (
            metadata_v12.MetadataResponse,
            metadata_v12.MetadataResponse(
                brokers=(metadata_v12.MetadataResponseBroker(node_id=1, host="h", port=1),),
                topics=(
                    metadata_v12.MetadataResponseTopic(
                        name="t",
                        topic_id=uuid.UUID(int=5),
                        partitions=(metadata_v12.MetadataResponsePartition(replica_nodes=(1, 2)),),
                    ),
                ),
                unknown_tagged_fields=((7, b"x"),),
            ),
        ),
        (
            fetch_v12.FetchResponse,
            fetch_v12.FetchResponse(
                responses=(
                    fetch_v12.FetchableTopicResponse(
                        topic="t", partitions=(fetch_v12.PartitionData(records=b"abc"),)
                    ),
                )
            ),
        ),
    ):
        data = encode(message)
        samples += [(cls, data[:cut]) for cut in range(len(data) + 1)]
        samples += [(cls, data[:at] + b"\xff" + data[at + 1 :]) for at in range(len(data))]

    def run(rounds: int) -> None:
        for _ in range(rounds):
            for cls, data in samples:
                with contextlib.suppress(ValueError):
                    codec_for(cls).decode_from.raw(data, 0)  # type: ignore[attr-defined]

    # The empty and one-byte buffers are CPython's shared singletons, whose counts any thread
    # moves (pytest-xdist's own, in a worker): only the buffers of this test's own are counted.
    owned = [data for _, data in samples if len(data) > 1]
    # What exists before the test is set aside from the collections below (gc.freeze), which
    # then look at this test's objects only: a worker's heap of every message class, codec and
    # strategy made each of them take most of a second.
    gc.freeze()
    try:
        run(20)  # caches, interned strings, small ints
        gc.collect()
        blocks = sys.getallocatedblocks()
        counts = [sys.getrefcount(data) for data in owned]
        run(200)  # a leak of one block per failing decode would be tens of thousands
        gc.collect()
    finally:
        gc.unfreeze()
    assert sys.getallocatedblocks() - blocks < 500
    assert [sys.getrefcount(data) for data in owned] == counts


@needs_accel
def test_no_half_built_object_is_visible_to_the_gc() -> None:
    # A collection during decoding (here after every allocation) whose callback looks at the
    # young objects must find no tuple with missing items and no half-filled message.
    code = """if True:
        import dataclasses, gc
        from kafkawire.protocol import codec, decode, encode
        from kafkawire.messages.metadata import v12 as m

        assert codec.ACCELERATED
        part = m.MetadataResponsePartition(replica_nodes=(1, 2, 3), isr_nodes=(1,))
        topic = m.MetadataResponseTopic(name="t", partitions=(part,) * 20)
        data = encode(m.MetadataResponse(topics=(topic,) * 3))

        def look(phase, info):
            if phase == "start":
                for obj in gc.get_objects(0):
                    if type(obj) is tuple:
                        list(obj)
                    elif dataclasses.is_dataclass(obj) and type(obj).__module__ == m.__name__:
                        repr(obj)

        gc.callbacks.append(look)
        gc.set_threshold(1)
        for _ in range(5):
            decode(m.MetadataResponse, data)
            try:
                decode(m.MetadataResponse, data[:-3])
            except Exception:
                pass
        gc.set_threshold(700)
        print("ok")
    """
    result = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120
    )
    assert (result.returncode, result.stdout.strip()) == (0, "ok"), result.stderr[-2000:]


@needs_accel
def test_a_few_bytes_claiming_huge_arrays_allocate_nothing_big() -> None:
    import tracemalloc

    from kafkawire.messages.metadata import v12 as metadata_v12

    cls = metadata_v12.MetadataResponse
    for count in (2**20, 2**31 - 2, 2**35 - 2):
        data = b"\x00\x00\x00\x00" + _uvarint(count + 1, 5) + b"\x00" * 64
        tracemalloc.start()
        try:
            assert not check_same(cls, data)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 1 << 20
