"""The data source's options, parsed on the driver into plain, picklable values.

Spark hands options over lower-cased (``startingoffsets``), whatever case the user wrote, so
every name is looked up lower-cased. The names and their meanings are those of Spark's own
Kafka source where they make sense; :class:`ReadOptions` and :class:`WriteOptions` are what the
readers and writers keep, and what is pickled to the executors with them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafkawire.producer import ProducerSettings

__all__ = [
    "EARLIEST",
    "LATEST",
    "OffsetSpec",
    "OptionError",
    "ReadOptions",
    "WriteOptions",
    "read_options",
    "write_options",
]

LATEST = -1  # in per-partition offset JSON, as in Spark's Kafka source
EARLIEST = -2

# A starting or ending position: "earliest" / "latest", a {topic: {partition: offset}} map
# (offsets may be EARLIEST / LATEST), or a timestamp in ms for every partition.
OffsetSpec = str | dict[str, dict[int, int]] | int

_BOOTSTRAP = "kafka.bootstrap.servers"
_SUBSCRIPTIONS = ("subscribe", "subscribepattern", "assign")


def _acks(value: str) -> int | str:
    """``all``, or the number ("1" arrives as text; the producer takes 1)."""
    text = value.strip().lower()
    return int(text) if text.lstrip("-").isdigit() else text


_PRODUCER_OPTIONS: dict[str, Any] = {  # kafka.* options a write passes to the producer, typed
    "kafka.client.id": str,
    "kafka.acks": _acks,
    "kafka.compression.type": str,
    "kafka.linger.ms": int,
    "kafka.batch.size": int,
    "kafka.request.timeout.ms": int,
    "kafka.delivery.timeout.ms": int,
    "kafka.transaction.timeout.ms": int,
}
_EXACTLY_ONCE_ONLY = {  # lower-cased -> as documented
    "transactionalidprefix": "transactionalIdPrefix",
    "kafka.transaction.timeout.ms": "kafka.transaction.timeout.ms",
}


class OptionError(ValueError):
    """An option is missing, unknown or malformed; the message names it."""


@dataclass(frozen=True, slots=True)
class ReadOptions:
    bootstrap: str
    subscribe: tuple[str, ...] = ()
    pattern: str | None = None
    assign: tuple[tuple[str, int], ...] = ()
    starting: OffsetSpec = "latest"
    ending: OffsetSpec = "latest"
    fail_on_data_loss: bool = True
    include_headers: bool = False
    max_offsets_per_trigger: int | None = None
    min_partitions: int = 1
    max_records_per_partition: int = 1_000_000


@dataclass(frozen=True, slots=True)
class WriteOptions:
    bootstrap: str
    topic: str | None
    producer: tuple[tuple[str, Any], ...]  # ProducerSettings keyword arguments
    exactly_once: bool = False  # transactions, committed by the driver (spark/transactional.py)
    transactional_id_prefix: str | None = None  # None: one derived from the query's id


def read_options(options: Mapping[str, str], *, streaming: bool) -> ReadOptions:
    """Check and parse a read's options; batch reads start at "earliest" by default, streams
    at "latest", as in Spark."""
    opts = _lowered(options)
    _check_kafka_options(opts, allowed=())
    chosen = [name for name in _SUBSCRIPTIONS if name in opts]
    if len(chosen) != 1:
        raise OptionError(
            "give exactly one of the options subscribe, subscribePattern and assign"
            f" (got {', '.join(chosen) or 'none'})"
        )
    starting = _offset_spec(opts, "startingoffsets", "latest" if streaming else "earliest")
    if "startingtimestamp" in opts:
        starting = _integer(opts, "startingtimestamp", 0)
    ending = _offset_spec(opts, "endingoffsets", "latest")
    if streaming and "endingoffsets" in opts:
        raise OptionError("endingOffsets is for batch reads only; a stream has no end")
    if not streaming and starting == "latest":
        raise OptionError('startingOffsets "latest" would read nothing in a batch read')
    if ending == "earliest" or _names_offset(ending, EARLIEST):
        raise OptionError('endingOffsets cannot be "earliest" (-2): it would read nothing')
    if _names_offset(starting, LATEST) and not streaming:
        raise OptionError('startingOffsets cannot name "latest" (-1) in a batch read')
    return ReadOptions(
        bootstrap=_required(opts, _BOOTSTRAP),
        subscribe=tuple(t.strip() for t in opts.get("subscribe", "").split(",") if t.strip()),
        pattern=opts.get("subscribepattern"),
        assign=_assignment(opts["assign"]) if "assign" in opts else (),
        starting=starting,
        ending=ending,
        fail_on_data_loss=_boolean(opts, "failondataloss", True),
        include_headers=_boolean(opts, "includeheaders", False),
        max_offsets_per_trigger=(
            _integer(opts, "maxoffsetspertrigger", 1) if "maxoffsetspertrigger" in opts else None
        ),
        min_partitions=_integer(opts, "minpartitions", 1, default=1),
        max_records_per_partition=_integer(opts, "maxrecordsperpartition", 1, default=1_000_000),
    )


def write_options(options: Mapping[str, str]) -> WriteOptions:
    """Check and parse a write's options: where to, the producer's kafka.* options, and
    whether it is exactly once (exactlyOnce, transactionalIdPrefix)."""
    opts = _lowered(options)
    _check_kafka_options(opts, allowed=tuple(_PRODUCER_OPTIONS))
    exactly_once = _boolean(opts, "exactlyonce", False)
    stray = [shown for name, shown in _EXACTLY_ONCE_ONLY.items() if name in opts]
    if stray and not exactly_once:
        raise OptionError(f"the option(s) {', '.join(stray)} need exactlyOnce=true")
    prefix = opts.get("transactionalidprefix")
    if prefix is not None and not prefix.strip():
        raise OptionError("the option transactionalIdPrefix cannot be empty")
    if exactly_once and _acks(opts.get("kafka.acks", "all")) not in ("all", -1):
        raise OptionError("exactlyOnce needs kafka.acks=all (transactions are idempotent)")
    producer = tuple(
        (name.removeprefix("kafka.").replace(".", "_"), _typed(name, opts[name], kind))
        for name, kind in _PRODUCER_OPTIONS.items()
        if name in opts
    )
    bootstrap = _required(opts, _BOOTSTRAP)
    try:  # on the driver, so a bad combination fails the query before any task runs
        ProducerSettings(bootstrap_servers=bootstrap, **dict(producer))
    except ValueError as error:
        raise OptionError(f"the kafka.* options do not make a producer: {error}") from None
    return WriteOptions(bootstrap, opts.get("topic"), producer, exactly_once, prefix)


def _lowered(options: Mapping[str, str]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in options.items()}


def _check_kafka_options(opts: dict[str, str], *, allowed: tuple[str, ...]) -> None:
    # Spark's Kafka source passes any kafka.* option to the Java client; ours takes a few, and
    # says so rather than ignoring a setting the user relies on.
    unknown = sorted(k for k in opts if k.startswith("kafka.") and k not in (_BOOTSTRAP, *allowed))
    if unknown:
        supported = ", ".join((_BOOTSTRAP, *allowed))
        raise OptionError(f"unsupported option(s) {', '.join(unknown)}; kafka.* takes {supported}")


def _required(opts: dict[str, str], name: str) -> str:
    value = opts.get(name, "").strip()
    if not value:
        raise OptionError(f"the option {name} is required")
    return value


def _typed(name: str, value: str, kind: type) -> Any:
    try:
        return kind(value)
    except ValueError:
        raise OptionError(f"the option {name} must be an {kind.__name__}, not {value!r}") from None


def _integer(opts: dict[str, str], name: str, minimum: int, default: int | None = None) -> int:
    if name not in opts and default is not None:
        return default
    number: int = _typed(name, opts[name], int)
    if number < minimum:
        raise OptionError(f"the option {name} must be at least {minimum}, not {number}")
    return number


def _boolean(opts: dict[str, str], name: str, default: bool) -> bool:
    value = opts.get(name, str(default)).strip().lower()
    if value not in ("true", "false"):
        raise OptionError(f"the option {name} must be true or false, not {value!r}")
    return value == "true"


def _json(name: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise OptionError(f"the option {name} is not valid JSON: {error}") from None


def _assignment(text: str) -> tuple[tuple[str, int], ...]:
    """``{"topic": [0, 1]}`` as sorted (topic, partition) pairs."""
    parsed = _json("assign", text)
    if not isinstance(parsed, dict) or not all(
        isinstance(ps, list) and all(isinstance(p, int) for p in ps) for ps in parsed.values()
    ):
        raise OptionError(f'assign must look like {{"topic": [0, 1]}}, not {text}')
    return tuple(sorted((t, p) for t, ps in parsed.items() for p in ps))


def _offset_spec(opts: dict[str, str], name: str, default: str) -> OffsetSpec:
    text = opts.get(name, default).strip()
    if text.lower() in ("earliest", "latest"):
        return text.lower()
    parsed = _json(name, text)
    try:
        return {
            str(topic): {int(p): int(offset) for p, offset in partitions.items()}
            for topic, partitions in parsed.items()
        }
    except (AttributeError, TypeError, ValueError):
        raise OptionError(
            f'{name} must be "earliest", "latest" or like {{"topic": {{"0": 23}}}}, not {text}'
        ) from None


def _names_offset(spec: OffsetSpec, offset: int) -> bool:
    return isinstance(spec, dict) and any(offset in ps.values() for ps in spec.values())
