"""The introspective serializer: one codec per message class, derived once, then cached.

A codec is built from a class's dataclass fields and the wire facts in their metadata
(``kafka_type``, ``nullable``, ``tag``, ``flexible``) plus the class's ``__flexible__``. It is
Python source written for that class and compiled at first use, so the hot path has no
per-field dispatch: adjacent fixed-width fields share one ``struct.Struct``, strings are sliced
and decoded in place, and nested structs call their own compiled codecs.

Invariants the generated source keeps:

- every length and count is checked against the bytes left before anything is read or
  allocated; element counts are bounded by the bytes left, so no input allocates more than a
  small multiple of its own size, and nothing recurses deeper than the schema nests;
- a decoder tracks the field it is reading in one local (``field``), so any failure becomes a
  ``DecodeError`` naming the class, field path and byte offset; nested errors gain their
  parent's path on the way up;
- objects are filled as instances of a mutable twin class with the same ``__slots__`` and bases
  and then given the frozen class (``__class__`` assignment), which costs a seventh of the
  dataclass ``__init__``; a class whose layout does not allow that is refused when its codec is
  built. (The bases of generated classes, ``RequestMessage`` and ``ResponseMessage``, hold no
  slots and no ``__setattr__``, so the twin stays mutable.)

Decoding also exists compiled: when the optional extension ``kafkawire.protocol._accel`` is
built and not disabled (:data:`ACCELERATED`, see :mod:`._accelerated`), a codec's
``decode_from`` interprets the same field plan in C and falls back to the Python decoder
(``decode_from_pure``) on any failure, so errors are the Python decoder's by construction.
"""

from __future__ import annotations

import contextlib
import dataclasses
import linecache
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from kafkawire.errors import DecodeError, EncodeError

from ._accelerated import ACCELERATED, compiled_decoder
from ._fields import PlannedField, element_width, plan
from ._runtime import (
    SMALL_ARRAY,
    FixedSpot,
    array_structs,
    check_unknown_tags,
    encode_failure,
    reason,
    uuid_from_bytes,
)
from ._source import Indent, Source
from .primitives import (
    FIXED_FORMATS,
    read_uvarint,
    read_varint,
    read_varlong,
    uvarint,
    varint,
    varlong,
)

__all__ = ["ACCELERATED", "Codec", "codec_for", "decode", "encode"]

T = TypeVar("T")

_VARINTS = {"varint": (read_varint, varint), "varlong": (read_varlong, varlong)}
_DECODE_FAILURES = (struct.error, IndexError, ValueError, OverflowError)
_ENCODE_FAILURES = (struct.error, TypeError, ValueError, AttributeError, OverflowError)


@dataclass(frozen=True, slots=True)
class Codec:
    """The compiled encoder and decoders of one class.

    ``decode_from`` is the C decoder of ``kafkawire.protocol._accel`` when that extension is in
    use (:data:`ACCELERATED`), else ``decode_from_pure``, the Python one written for the class.
    Both take ``(buf, pos)`` and return ``(obj, pos)``, with the same results and errors.
    """

    cls: type[Any]
    encode_into: Callable[[Any, bytearray], None]
    decode_from: Callable[[bytes, int], tuple[Any, int]]
    source: str
    # Whether the class, or a struct it nests, has a records field: then its decoder takes the
    # memoryview of the buffer as a third argument, so a whole decode makes only one.
    holds_records: bool
    decode_from_pure: Callable[[bytes, int], tuple[Any, int]]


_CODECS: dict[type[Any], Codec] = {}


def codec_for(cls: type[T]) -> Codec:
    """The codec of ``cls``, built on first use."""
    codec = _CODECS.get(cls)
    if codec is None:
        codec = _CODECS[cls] = _CodecBuilder(cls).build()
    return codec


def _chosen_decoder(cls: type[Any]) -> object:
    """The ``decode_from`` of the cached codec of ``cls`` (what a wrapped codec_for returns
    may differ, see tests/protocol/conftest.py)."""
    codec_for(cls)
    return _CODECS[cls].decode_from


def encode(obj: object) -> bytes:
    """The wire bytes of a message body (no size prefix, no header)."""
    out = bytearray()
    codec_for(type(obj)).encode_into(obj, out)
    return bytes(out)


def decode(cls: type[T], data: bytes | bytearray | memoryview) -> T:
    """Decode a whole buffer as one ``cls``; trailing bytes are an error."""
    buf = data if type(data) is bytes else bytes(data)
    obj, pos = codec_for(cls).decode_from(buf, 0)
    if pos != len(buf):
        raise DecodeError(cls.__name__, "", pos, f"{len(buf) - pos} trailing bytes")
    result: T = obj
    return result


# --- planning: what each field is on the wire ----------------------------------------------


# --- source generation ---------------------------------------------------------------------


def _short(what: str) -> str:
    """Source for the check that ``n`` bytes of ``what`` remain."""
    return f'raise ValueError(f"{what} of {{n}} bytes runs past the end ({{end - pos}} left)")'


class _CodecBuilder:
    def __init__(self, cls: type[Any]) -> None:
        self.cls = cls
        self.name = cls.__name__
        self.fields, self.flexible = plan(cls)
        self.holds_records = any(
            f.element == "records" or (f.struct is not None and codec_for(f.struct).holds_records)
            for f in self.fields
        )
        self.namespace: dict[str, Any] = {
            "DecodeError": DecodeError,
            "EncodeError": EncodeError,
            "_DECODE_FAILURES": _DECODE_FAILURES,
            "_ENCODE_FAILURES": _ENCODE_FAILURES,
            "_reason": reason,
            "_check_tags": check_unknown_tags,
            "_uvarint": read_uvarint,
            "_uv": uvarint,
            "_I16": struct.Struct(">h"),
            "_I32": struct.Struct(">i"),
            "_uuid": uuid_from_bytes,
            "_memoryview": memoryview,
            "_Cls": cls,
        }

    def build(self) -> Codec:
        src = Source(self.namespace)
        self._decoder(src)
        self._encoder(src)
        text = "\n".join(src.lines) + "\n"
        filename = f"<kafkawire codec {self.cls.__module__}.{self.cls.__qualname__}>"
        # Registered with linecache so tracebacks through generated code show its lines.
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        exec(compile(text, filename, "exec"), self.namespace)
        pure = self.namespace["decode_from"]
        compiled = compiled_decoder(
            self.cls,
            self.fields,
            self.flexible,
            holds_records=self.holds_records,
            pure=pure,
            nested=_chosen_decoder,
        )
        return Codec(
            self.cls,
            self.namespace["encode_into"],
            pure if compiled is None else compiled,
            text,
            self.holds_records,
            pure,
        )

    # --- decoding ---

    def _decoder(self, src: Source) -> None:
        src.namespace["_Twin"] = self._twin()
        if self.holds_records:
            # Records fields are views of the frame; one memoryview serves the whole decode.
            src.line("def decode_from(buf, pos, view=None):")
            src.line("    if view is None:")
            src.line("        view = _memoryview(buf)")
        else:
            src.line("def decode_from(buf, pos):")
        with src.indent():
            src.line("o = _Twin()")
            failure = f"DecodeError({self.name!r}, field, pos, _reason(exc))"
            with self._guarded(src, "DecodeError", "_DECODE_FAILURES", failure):
                src.line("end = len(buf)")
                self._decode_fields(src)
                if self.flexible:
                    self._decode_tags(src)
            src.line("o.__class__ = _Cls  # the filled twin becomes the frozen class")
            src.line("return o, pos")
        src.line("")

    def _twin(self) -> type[Any]:
        """A mutable class with the same slots, whose instances can become ``self.cls``."""
        slots = getattr(self.cls, "__slots__", None)
        # The same bases too: Python allows the __class__ assignment only between classes whose
        # layouts derive from the same base.
        twin = type(f"_{self.name}Builder", self.cls.__bases__, {"__slots__": slots or ()})
        try:
            twin().__class__ = self.cls
        except TypeError:
            raise TypeError(
                f"{self.name}: kafkawire codecs need @dataclass(frozen=True, slots=True) classes "
                "whose bases hold no slots, as codegen writes them"
            ) from None
        return twin

    def _runs(self) -> list[list[PlannedField]]:
        """The untagged fields in wire order, adjacent fixed-width ones grouped in one run."""
        runs: list[list[PlannedField]] = []
        for f in self.fields:
            if f.tag is not None:
                continue
            if f.fixed and runs and runs[-1][-1].fixed:
                runs[-1].append(f)
            else:
                runs.append([f])
        return runs

    def _decode_fields(self, src: Source) -> None:
        for run in self._runs():
            src.line(f"field = {', '.join(f.name for f in run)!r}")
            if run[0].fixed:
                fmt = struct.Struct(">" + "".join(f.fixed or "" for f in run))
                targets = ", ".join(f"o.{f.name}" for f in run)
                src.line(f"({targets},) = {src.const(fmt, 'S')}.unpack_from(buf, pos)")
                src.line(f"pos += {fmt.size}")
            else:
                self._decode_value(src, run[0], f"o.{run[0].name}")

    def _decode_length(self, src: Source, f: PlannedField, what: str) -> None:
        """Read a length or count into ``n``; ``n`` is -1 for null."""
        if f.compact:
            # Lengths below 16384 (one or two varint bytes) are read inline: a call to the
            # general varint reader costs more than the rest of a small struct.
            src.line("n = buf[pos]")
            src.line("if n < 128:")
            src.line("    pos += 1")
            src.line("elif buf[pos + 1] < 128:")
            src.line("    n = (n & 127) | (buf[pos + 1] << 7)")
            src.line("    pos += 2")
            src.line("else:")
            src.line("    n, pos = _uvarint(buf, pos)")
            src.line("n -= 1")
        else:
            fmt = "_I16" if f.element == "string" and not f.is_array else "_I32"
            src.line(f"(n,) = {fmt}.unpack_from(buf, pos)")
            src.line(f"pos += {2 if fmt == '_I16' else 4}")
        if not f.nullable:
            src.line("if n < 0:")
            src.line(f'    raise ValueError("null {what} in a field that is not nullable")')

    def _null_or(
        self, src: Source, f: PlannedField, target: str
    ) -> Indent | contextlib.nullcontext[None]:
        """For a nullable field, write the null branch and return the indent of the other."""
        if not f.nullable:
            return contextlib.nullcontext()
        src.line("if n < 0:")
        src.line(f"    {target} = None")
        src.line("else:")
        return src.indent()

    def _decode_value(self, src: Source, f: PlannedField, target: str) -> None:
        if f.is_array:
            self._decode_array(src, f, target)
        elif f.element in ("string", "bytes", "records"):
            self._decode_length(src, f, f.element)
            with self._null_or(src, f, target):
                src.line("if n > end - pos:")
                src.line(f"    {_short(f.element)}")
                src.line(f"{target} = {_slice(f.element)}")
                src.line("pos += n")
        else:
            self._decode_scalar(src, f, target)

    def _decode_scalar(self, src: Source, f: PlannedField, target: str) -> None:
        """A fixed-width value, a uuid, a varint or a struct (never an array)."""
        if f.fixed:
            fmt = struct.Struct(">" + f.fixed)
            src.line(f"({target},) = {src.const(fmt, 'S')}.unpack_from(buf, pos)")
            src.line(f"pos += {fmt.size}")
        elif f.element == "uuid":
            src.line("if end - pos < 16:")
            src.line('    raise ValueError("a uuid needs 16 bytes")')
            src.line(f"{target} = _uuid(buf[pos:pos + 16])")
            src.line("pos += 16")
        elif f.element in _VARINTS:
            reader = src.const(_VARINTS[f.element][0], "r")
            src.line(f"{target}, pos = {reader}(buf, pos)")
        else:
            assert f.struct is not None
            codec = codec_for(f.struct)
            # The pure decoder nests pure decoders only: it is the C decoder's fallback.
            nested = src.const(codec.decode_from_pure, "d")
            call = f"{nested}(buf, pos, view)" if codec.holds_records else f"{nested}(buf, pos)"
            if f.nullable:
                # Kafka writes a nullable struct behind a marker byte: -1 for null, 1 if present.
                src.line("pos += 1")
                src.line("if buf[pos - 1] >= 128:")
                src.line(f"    {target} = None")
                src.line("else:")
                src.line(f"    {target}, pos = {call}")
            else:
                src.line(f"{target}, pos = {call}")

    def _decode_array(self, src: Source, f: PlannedField, target: str) -> None:
        self._decode_length(src, f, "array")
        with self._null_or(src, f, target):
            fixed = FIXED_FORMATS.get(f.element)
            width = element_width(f)
            # Each element takes at least `width` bytes, so the count is bounded by what is
            # left; zero-width elements (an empty struct) are bounded by the buffer itself.
            limit = f"n * {width} > end - pos" if width else "n > end"
            src.line(f"if {limit}:")
            src.line('    raise ValueError(f"array of {n} elements runs past the end")')
            if fixed:
                structs = array_structs(fixed)
                small, large = src.const(structs.small, "A"), src.const(structs.large, "L")
                packer = f"({small}[n] if n < {SMALL_ARRAY} else {large}(n))"
                src.line(f"{target} = {packer}.unpack_from(buf, pos)")
                src.line(f"pos += n * {width}")
                return
            src.line("items = [None] * n")
            src.line("for idx in range(n):")
            with src.indent():
                element = dataclasses.replace(f, is_array=False, nullable=False)
                self._decode_value(src, element, "value")
                src.line("items[idx] = value")
            src.line("idx = -1")
            src.line(f"{target} = tuple(items)")

    def _decode_tags(self, src: Source) -> None:
        tagged = sorted((f for f in self.fields if f.tag is not None), key=lambda f: f.tag or 0)
        src.line("field = '(tagged fields)'")
        for f in tagged:
            src.line(f"o.{f.name} = {src.const(f.default, 'D')}")
        src.line("if buf[pos] == 0:")
        src.line("    pos += 1")
        src.line("    o.unknown_tagged_fields = ()")
        src.line("else:")
        with src.indent():
            src.line("count, pos = _uvarint(buf, pos)")
            src.line("if count * 2 > end - pos:")
            src.line('    raise ValueError(f"{count} tagged fields cannot fit")')
            src.line("unknown = []")
            src.line("for _ in range(count):")
            with src.indent():
                src.line("tag, pos = _uvarint(buf, pos)")
                src.line("n, pos = _uvarint(buf, pos)")
                src.line("if n > end - pos:")
                src.line(f"    {_short('tagged field')}")
                keyword = "if"
                for f in tagged:
                    src.line(f"{keyword} tag == {f.tag}:")
                    with src.indent():
                        src.line(f"field = {f.name!r}")
                        reader = src.const(self._tag_decoder(f), "t")
                        src.line(f"o.{f.name} = {reader}(buf[pos:pos + n])")
                    keyword = "elif"
                if tagged:
                    src.line("else:")
                    src.line("    unknown.append((tag, buf[pos:pos + n]))")
                else:
                    src.line("unknown.append((tag, buf[pos:pos + n]))")
                src.line("pos += n")
            src.line("o.unknown_tagged_fields = tuple(unknown)")

    def _tag_decoder(self, f: PlannedField) -> Callable[[bytes], Any]:
        """A function that decodes a tagged field's value from exactly its own bytes."""
        src = Source(self.namespace)
        name = f"_tag_decode_{f.name}"
        src.line(f"def {name}(buf):")
        with src.indent():
            src.line("view = _memoryview(buf)")
            src.line("pos = 0")
            src.line("end = len(buf)")
            self._decode_value(src, dataclasses.replace(f, tag=None), "value")
            src.line("if pos != end:")
            src.line('    raise ValueError(f"tagged field has {end - pos} bytes left over")')
            src.line("return value")
        exec(
            compile("\n".join(src.lines), f"<kafkawire tag {self.name}.{f.name}>", "exec"),
            self.namespace,
        )
        decoder: Callable[[bytes], Any] = self.namespace[name]
        return decoder

    # --- encoding ---

    def _encoder(self, src: Source) -> None:
        src.line("def encode_into(o, out):")
        with src.indent():
            src.line("if o.__class__ is not _Cls:")
            src.line(
                f"    raise EncodeError({self.name!r}, '', len(out), "
                f"f'expected a {self.name} of {self.cls.__module__}, got {{type(o).__name__}}')"
            )
            src.namespace["_encode_failure"] = partial(
                encode_failure, cls_name=self.name, spots=self._fixed_spots()
            )
            failure = "_encode_failure(field, len(out), exc, o)"
            with self._guarded(src, "EncodeError", "_ENCODE_FAILURES", failure):
                self._encode_fields(src)
                if self.flexible:
                    self._encode_tags(src)
                if not (self.fields or self.flexible):
                    src.line("pass  # nothing on the wire")

    @contextlib.contextmanager
    def _guarded(self, src: Source, error: str, failures: str, failure: str) -> Iterator[None]:
        """Wrap the body in the handlers that turn any failure into ``error`` at the field.

        An error from a nested struct gains this class and field on its path; a low-level
        failure (``failures``, as ``exc``) raises the expression ``failure``. ``field`` and
        ``idx`` are the locals the body keeps current.
        """
        src.line("field = ''")
        src.line("idx = -1")
        src.line("try:")
        with src.indent():
            yield
        src.line(f"except {error} as exc:")
        src.line(f"    exc.within({self.name!r}, field if idx < 0 else f'{{field}}[{{idx}}]')")
        src.line("    raise")
        src.line(f"except {failures} as exc:")
        src.line(f"    raise {failure} from None")

    def _fixed_spots(self) -> dict[str, tuple[FixedSpot, ...]]:
        """The fixed-width fields each encoder statement writes, by the ``field`` label it sets.

        A run of adjacent fixed-width fields is one ``struct.pack``, an array of them another;
        when one fails, ``encode_failure`` looks here for the value at fault.
        """
        spots: dict[str, tuple[FixedSpot, ...]] = {}
        for run in self._runs():
            if run[0].fixed:
                at = 0
                found = []
                for f in run:
                    width = struct.calcsize(">" + (f.fixed or ""))
                    found.append(FixedSpot(f.name, f.element, False, at, width))
                    at += width
                spots[", ".join(f.name for f in run)] = tuple(found)
        for f in self.fields:
            if f.element in FIXED_FORMATS and (f.is_array or f.tag is not None):
                width = struct.calcsize(">" + FIXED_FORMATS[f.element])
                spots[f.name] = (FixedSpot(f.name, f.element, f.is_array, 0, width),)
        return spots

    def _encode_fields(self, src: Source) -> None:
        for run in self._runs():
            src.line(f"field = {', '.join(f.name for f in run)!r}")
            if run[0].fixed:
                fmt = struct.Struct(">" + "".join(f.fixed or "" for f in run))
                values = ", ".join(f"o.{f.name}" for f in run)
                src.line(f"out += {src.const(fmt, 'S')}.pack({values})")
            else:
                src.line(f"value = o.{run[0].name}")
                self._encode_value(src, run[0])

    def _encode_null(self, src: Source, f: PlannedField, marker: str) -> Indent:
        """Write a null (or refuse one) when ``value is None``; return the indent of the else."""
        src.line("if value is None:")
        with src.indent():
            if f.nullable:
                src.line(f"out += {marker}")
            else:
                src.line('raise ValueError("None in a field that is not nullable at this version")')
        src.line("else:")
        return src.indent()

    def _encode_length(self, src: Source, f: PlannedField, length: str) -> None:
        if f.compact:
            src.line(f"n = {length} + 1")
            src.line("if n < 128:")
            src.line("    out.append(n)")
            src.line("else:")
            src.line("    out += _uv(n)")
        else:
            fmt = "_I16" if f.element == "string" and not f.is_array else "_I32"
            src.line(f"out += {fmt}.pack({length})")

    def _null_marker(self, f: PlannedField) -> str:
        if f.compact:
            return "b'\\x00'"
        return (
            "b'\\xff\\xff'"
            if f.element == "string" and not f.is_array
            else "b'\\xff\\xff\\xff\\xff'"
        )

    def _encode_value(self, src: Source, f: PlannedField) -> None:
        if f.is_array:
            with self._encode_null(src, f, self._null_marker(f)):
                self._encode_length(src, f, "len(value)")
                fixed = FIXED_FORMATS.get(f.element)
                if fixed:
                    structs = array_structs(fixed)
                    small, large = src.const(structs.small, "A"), src.const(structs.large, "L")
                    src.line("n = len(value)")
                    src.line(
                        f"out += ({small}[n] if n < {SMALL_ARRAY} else {large}(n)).pack(*value)"
                    )
                    return
                src.line("for idx, value in enumerate(value):")
                with src.indent():
                    self._encode_value(src, dataclasses.replace(f, is_array=False, nullable=False))
                src.line("idx = -1")
        elif f.element in ("string", "bytes", "records"):
            with self._encode_null(src, f, self._null_marker(f)):
                data = "value.encode()" if f.element == "string" else "value"
                src.line(f"data = {data}")
                self._encode_length(src, f, "len(data)")
                src.line("out += data")
        elif f.fixed:
            src.line(f"out += {src.const(struct.Struct('>' + f.fixed), 'S')}.pack(value)")
        elif f.element == "uuid":
            src.line("out += value.bytes")
        elif f.element in _VARINTS:
            src.line(f"out += {src.const(_VARINTS[f.element][1], 'w')}(value)")
        else:
            assert f.struct is not None
            nested = src.const(codec_for(f.struct).encode_into, "e")
            if f.nullable:
                with self._encode_null(src, f, "b'\\xff'"):
                    src.line("out.append(1)")
                    src.line(f"{nested}(value, out)")
            else:
                src.line(f"{nested}(value, out)")

    def _encode_tags(self, src: Source) -> None:
        tagged = sorted((f for f in self.fields if f.tag is not None), key=lambda f: f.tag or 0)
        known = src.const(frozenset(f.tag for f in tagged), "K")
        src.line("field = 'unknown_tagged_fields'")
        src.line("tags = o.unknown_tagged_fields")
        src.line("if tags:")
        src.line(f"    _check_tags(tags, {known})")
        src.line("field = '(tagged fields)'")
        if tagged:
            src.line("tags = list(tags)")
        for f in tagged:
            src.line(f"value = o.{f.name}")
            # Like Kafka, a tagged field equal to its default is not written at all.
            src.line(f"if value != {src.const(f.default, 'D')}:")
            with src.indent():
                src.line(f"field = {f.name!r}")
                src.line("whole, out = out, bytearray()")
                self._encode_value(src, dataclasses.replace(f, tag=None))
                src.line(f"tags.append(({f.tag}, bytes(out)))")
                src.line("out = whole")
        src.line("if not tags:")
        src.line("    out.append(0)")
        src.line("else:")
        with src.indent():
            src.line("out += _uv(len(tags))")
            # Unknown tags are in order already; known ones are merged in by tag.
            src.line(f"for tag, data in {'sorted(tags)' if tagged else 'tags'}:")
            src.line("    out += _uv(tag)")
            src.line("    out += _uv(len(data))")
            src.line("    out += data")


def _slice(element: str) -> str:
    if element == "string":
        return "buf[pos:pos + n].decode()"
    if element == "records":
        # A view, not a copy: record batches are parsed lazily by kafkawire.records.
        return "view[pos:pos + n]"
    return "buf[pos:pos + n]"
