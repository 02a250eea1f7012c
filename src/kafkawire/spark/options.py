"""The data source's options, parsed on the driver into plain, picklable values.

Spark hands options over lower-cased (``startingoffsets``), whatever case the user wrote, so
every name is looked up lower-cased. The names and their meanings are those of Spark's own
Kafka source where they make sense; :class:`ReadOptions` and :class:`WriteOptions` are what the
readers and writers keep, and what is pickled to the executors with them.

An option this source does not know is refused, naming the closest it knows: Spark's own
sources ignore unknown options, but a misspelled ``startingOffsets`` silently reads a whole
topic. Offsets in JSON are refused below -2; -2 (earliest) and -1 (latest) only where Spark's
Kafka source gives them a meaning (no "latest" start, nor "earliest" end, in a batch read).
"""

from __future__ import annotations

import difflib
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
_READ_OPTIONS = (  # as documented; looked up lower-cased
    _BOOTSTRAP,
    "subscribe",
    "subscribePattern",
    "assign",
    "startingOffsets",
    "startingTimestamp",
    "endingOffsets",
    "failOnDataLoss",
    "includeHeaders",
    "maxOffsetsPerTrigger",
    "minPartitions",
    "maxRecordsPerPartition",
)
_WRITE_OPTIONS = (_BOOTSTRAP, "topic", "exactlyOnce", "transactionalIdPrefix")
# What Spark itself adds to a streaming write's options.
_SPARK_OPTIONS = ("checkpointLocation", "queryName")
# Options of Spark's Kafka source that kafkawire does not have: named as such, not as typos.
_NOT_SUPPORTED = {
    name.lower(): name
    for name in (
        "startingOffsetsByTimestamp",
        "startingOffsetsByTimestampStrategy",
        "endingOffsetsByTimestamp",
        "endingTimestamp",
        "minOffsetsPerTrigger",
        "maxTriggerDelay",
        "groupIdPrefix",
        "kafkaConsumer.pollTimeoutMs",
        "fetchOffset.numRetries",
        "fetchOffset.retryIntervalMs",
    )
}


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
    _check_names(opts, _READ_OPTIONS, "read")
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
    _check_names(opts, (*_WRITE_OPTIONS, *_SPARK_OPTIONS), "write")
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


_DOCUMENTED = {n.lower(): n for n in (*_READ_OPTIONS, *_WRITE_OPTIONS, *_SPARK_OPTIONS)}


def _shown(name: str) -> str:
    """An option's name as documented (Spark hands it over lower-cased)."""
    return _DOCUMENTED.get(name, name)


def _lowered(options: Mapping[str, str]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in options.items()}


def _check_names(opts: dict[str, str], known: tuple[str, ...], what: str) -> None:
    """Refuse a name that is not one of ``known`` (kafka.* names are checked apart)."""
    by_lower = {name.lower(): name for name in known}
    for name in sorted(opts):
        if name in by_lower or name.startswith("kafka."):
            continue
        if name in _NOT_SUPPORTED:
            raise OptionError(
                f"the option {_NOT_SUPPORTED[name]} of Spark's Kafka source is not supported by"
                " kafkawire (README, Spark)"
            )
        if name == "path":
            raise OptionError(
                "kafkawire takes no path: name the topics with the option"
                f" {'subscribe, subscribePattern or assign' if what == 'read' else 'topic'}"
            )
        close = difflib.get_close_matches(name, list(by_lower), n=1)
        hint = (
            f"did you mean {by_lower[close[0]]}?" if close else f"a {what} takes {', '.join(known)}"
        )
        raise OptionError(f"unknown option {name} (Spark passes names lower-cased); {hint}")


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
        raise OptionError(f"the option {_shown(name)} is required")
    return value


def _typed(name: str, value: str, kind: type) -> Any:
    try:
        return kind(value)
    except ValueError:
        raise OptionError(
            f"the option {_shown(name)} must be an {kind.__name__}, not {value!r}"
        ) from None


def _integer(opts: dict[str, str], name: str, minimum: int, default: int | None = None) -> int:
    if name not in opts and default is not None:
        return default
    number: int = _typed(name, opts[name], int)
    if number < minimum:
        raise OptionError(f"the option {_shown(name)} must be at least {minimum}, not {number}")
    return number


def _boolean(opts: dict[str, str], name: str, default: bool) -> bool:
    value = opts.get(name, str(default)).strip().lower()
    if value not in ("true", "false"):
        raise OptionError(f"the option {_shown(name)} must be true or false, not {value!r}")
    return value == "true"


def _json(name: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise OptionError(f"the option {_shown(name)} is not valid JSON: {error}") from None


def _assignment(text: str) -> tuple[tuple[str, int], ...]:
    """``{"topic": [0, 1]}`` as sorted (topic, partition) pairs."""
    parsed = _json("assign", text)
    if not isinstance(parsed, dict) or not all(
        isinstance(ps, list) and all(_is_partition(p) for p in ps) for ps in parsed.values()
    ):
        raise OptionError(f'assign must look like {{"topic": [0, 1]}}, not {text}')
    return tuple(sorted((t, p) for t, ps in parsed.items() for p in ps))


def _is_partition(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _offset_spec(opts: dict[str, str], name: str, default: str) -> OffsetSpec:
    text = opts.get(name, default).strip()
    if text.lower() in ("earliest", "latest"):
        return text.lower()
    parsed = _json(name, text)
    try:
        spec = {
            str(topic): {int(p): _whole(offset) for p, offset in partitions.items()}
            for topic, partitions in parsed.items()
        }
    except (AttributeError, TypeError, ValueError):
        raise OptionError(
            f'{_shown(name)} must be "earliest", "latest" or like {{"topic": {{"0": 23}}}},'
            f" not {text}"
        ) from None
    for topic, partitions in spec.items():
        for partition, offset in partitions.items():
            if offset < EARLIEST:
                raise OptionError(
                    f"{_shown(name)} gives {topic}/{partition} the offset {offset}: an offset is"
                    " at least 0, or -2 (earliest) or -1 (latest)"
                )
    return spec


def _whole(value: Any) -> int:
    """A JSON offset: an integer (int("5") and 5.0 would hide a typo in the JSON)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(value)
    return value


def _names_offset(spec: OffsetSpec, offset: int) -> bool:
    return isinstance(spec, dict) and any(offset in ps.values() for ps in spec.values())
