"""The data source's options, parsed on the driver into plain, picklable values.

Spark hands options over lower-cased (``startingoffsets``), whatever case the user wrote, so
every name is looked up lower-cased. The names and their meanings are those of Spark's own
Kafka source where they make sense; :class:`ReadOptions` and :class:`WriteOptions` are what the
readers and writers keep, and what is pickled to the executors with them.

TLS and SASL come as Spark's Kafka source takes them, the Java client's settings with the
prefix ``kafka.`` (``kafka.security.protocol``, ``kafka.sasl.jaas.config``,
``kafka.ssl.truststore.location``, ...), on reads and writes alike; they are checked on the
driver, kept out of ``repr``, and handed to every client a reader or writer opens. Spark
shows a streaming query's options in its plans with the values of names or values matching
``spark.redaction.regex`` hidden (passwords, secrets, tokens, and so JAAS lines): a key given
as text (``kafka.ssl.keystore.key``) is not, so give it as a file.

An option this source does not know is refused, naming the closest it knows: Spark's own
sources ignore unknown options, but a misspelled ``startingOffsets`` silently reads a whole
topic. Offsets in JSON are refused below -2; -2 (earliest) and -1 (latest) only where Spark's
Kafka source gives them a meaning (no "latest" start, nor "earliest" end, in a batch read).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkawire.cluster import SecuritySettings
from kafkawire.cluster.java_names import in_java_names, options_from_java
from kafkawire.cluster.security import NamedSecurityOptions
from kafkawire.producer import ProducerSettings

__all__ = [
    "EARLIEST",
    "LATEST",
    "WRITE_BATCH_SIZE",
    "OffsetSpec",
    "OptionError",
    "ReadOptions",
    "Timestamps",
    "WriteOptions",
    "read_options",
    "write_options",
]

LATEST = -1  # in per-partition offset JSON, as in Spark's Kafka source
EARLIEST = -2


@dataclass(frozen=True, slots=True)
class Timestamps:
    """Positions by time: each partition's first offset whose record's timestamp is at or
    after ``at`` (ms since the epoch: one for every partition, or a {topic: {partition: ms}}
    map); ``if_none``: a partition without such a record starts at its end ("latest"), or
    fails the query ("error")."""

    at: int | dict[str, dict[int, int]]
    if_none: str = "latest"


# A starting or ending position: "earliest" / "latest", a {topic: {partition: offset}} map
# (offsets may be EARLIEST / LATEST), or positions by time.
OffsetSpec = str | dict[str, dict[int, int]] | Timestamps

_BOOTSTRAP = "kafka.bootstrap.servers"
_SUBSCRIPTIONS = ("subscribe", "subscribepattern", "assign")
_READ_OPTIONS = (  # as documented; looked up lower-cased
    _BOOTSTRAP,
    "subscribe",
    "subscribePattern",
    "assign",
    "startingOffsets",
    "startingTimestamp",
    "startingOffsetsByTimestamp",
    "startingOffsetsByTimestampStrategy",
    "endingOffsets",
    "endingTimestamp",
    "endingOffsetsByTimestamp",
    "failOnDataLoss",
    "includeHeaders",
    "maxOffsetsPerTrigger",
    "minOffsetsPerTrigger",
    "maxTriggerDelay",
    "minPartitions",
    "maxRecordsPerPartition",
)
_ENDINGS = ("endingoffsets", "endingtimestamp", "endingoffsetsbytimestamp")
_WRITE_OPTIONS = (_BOOTSTRAP, "topic", "exactlyOnce", "transactionalIdPrefix")
# What Spark itself adds to a streaming write's options.
_SPARK_OPTIONS = ("checkpointLocation", "queryName")
# Options of Spark's Kafka source that kafkawire does not have: named as such, not as typos.
_NOT_SUPPORTED = {
    name.lower(): name
    for name in (
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


WRITE_BATCH_SIZE = 512 * 1024
"""A write's ``kafka.batch.size`` unless given: twice the producer's default. Spark hands a
task an Arrow batch of 10,000 rows every ~20 ms; the rows of each partition fill whole
batches and leave a partial one, sent on its own when ``linger_ms`` passes before the next
Arrow batch comes. At 256 KiB that made three Produce requests of one batch each per 5,000
rows of 100 bytes of a partition; at 512 KiB two. Spark writes (1M rows, two partitions): the
producer's thread and the broker 0.37 + 0.61-0.74 -> 0.32 + 0.50-0.63 us CPU a row; fed
without pauses the two sizes cost the same. Larger (1,000,000) was no cheaper: the
producer's thread then spent 0.15-0.4 us a row in the kernel on page faults."""

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
# The settings by name of TLS and SASL, as kafka.* options (a token provider is code, not text).
_SECURITY_OPTIONS = tuple(
    sorted(
        "kafka." + name.replace("_", ".")
        for name in NamedSecurityOptions.__optional_keys__
        if name != "sasl_oauthbearer_token_provider"
    )
)
_DEFAULT_TRIGGER_DELAY_MS = 15 * 60 * 1000  # Spark's maxTriggerDelay default, "15m"
_DURATION = re.compile(r"(\d+)\s*(ms|s|m|min|h|d)?")
_MS_PER_UNIT = {None: 1, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000}
_MS_PER_UNIT["d"] = 24 * _MS_PER_UNIT["h"]
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
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = _DEFAULT_TRIGGER_DELAY_MS
    min_partitions: int = 1
    max_records_per_partition: int = 1_000_000
    security: tuple[tuple[str, Any], ...] = field(default=(), repr=False)
    """TLS and SASL settings by name, for every client a reader opens (secrets: no repr)."""

    def client_options(self) -> dict[str, Any]:
        return dict(self.security)


@dataclass(frozen=True, slots=True)
class WriteOptions:
    bootstrap: str
    topic: str | None
    producer: tuple[tuple[str, Any], ...]  # ProducerSettings keyword arguments
    exactly_once: bool = False  # transactions, committed by the driver (spark/transactional.py)
    transactional_id_prefix: str | None = None  # None: one derived from the query's id
    security: tuple[tuple[str, Any], ...] = field(default=(), repr=False)
    """TLS and SASL settings by name, for every client a writer opens (secrets: no repr)."""

    def client_options(self) -> dict[str, Any]:
        return dict(self.security)

    def producer_options(self) -> dict[str, Any]:
        """The producer's keyword arguments: its kafka.* options, TLS and SASL."""
        return {**dict(self.producer), **dict(self.security)}


def read_options(options: Mapping[str, str], *, streaming: bool) -> ReadOptions:
    """Check and parse a read's options; batch reads start at "earliest" by default, streams
    at "latest", as in Spark."""
    opts = _lowered(options)
    _check_names(opts, _READ_OPTIONS, "read")
    _check_kafka_options(opts, allowed=_SECURITY_OPTIONS)
    chosen = [name for name in _SUBSCRIPTIONS if name in opts]
    if len(chosen) != 1:
        raise OptionError(
            "give exactly one of the options subscribe, subscribePattern and assign"
            f" (got {', '.join(chosen) or 'none'})"
        )
    ends = [_shown(name) for name in _ENDINGS if name in opts]
    if streaming and ends:
        raise OptionError(f"{ends[0]} is for batch reads only; a stream has no end")
    starting, ending = _starting(opts, streaming), _ending(opts)
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
        **_trigger_limits(opts),
        min_partitions=_integer(opts, "minpartitions", 1, default=1),
        max_records_per_partition=_integer(opts, "maxrecordsperpartition", 1, default=1_000_000),
        security=_security(opts),
    )


def _starting(opts: dict[str, str], streaming: bool) -> OffsetSpec:
    """startingTimestamp, else startingOffsetsByTimestamp, else startingOffsets (Spark's
    order)."""
    strategy = opts.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
    if strategy not in ("error", "latest"):
        raise OptionError(
            "the option startingOffsetsByTimestampStrategy must be error or latest,"
            f" not {strategy!r}"
        )
    if "startingtimestamp" in opts:
        return Timestamps(_integer(opts, "startingtimestamp", 0), strategy)
    if "startingoffsetsbytimestamp" in opts:
        return Timestamps(_timestamp_map(opts, "startingoffsetsbytimestamp"), strategy)
    if "startingoffsetsbytimestampstrategy" in opts:
        raise OptionError(
            "startingOffsetsByTimestampStrategy needs startingTimestamp or"
            " startingOffsetsByTimestamp"
        )
    return _offset_spec(opts, "startingoffsets", "latest" if streaming else "earliest")


def _ending(opts: dict[str, str]) -> OffsetSpec:
    """endingTimestamp, else endingOffsetsByTimestamp, else endingOffsets; a partition with no
    record that late ends at its end, as in Spark."""
    if "endingtimestamp" in opts:
        return Timestamps(_integer(opts, "endingtimestamp", 0))
    if "endingoffsetsbytimestamp" in opts:
        return Timestamps(_timestamp_map(opts, "endingoffsetsbytimestamp"))
    return _offset_spec(opts, "endingoffsets", "latest")


def _trigger_limits(opts: dict[str, str]) -> dict[str, Any]:
    """maxOffsetsPerTrigger, minOffsetsPerTrigger and maxTriggerDelay, checked together."""
    limits: dict[str, Any] = {"max_offsets_per_trigger": None, "min_offsets_per_trigger": None}
    if "maxoffsetspertrigger" in opts:
        limits["max_offsets_per_trigger"] = _integer(opts, "maxoffsetspertrigger", 1)
    if "minoffsetspertrigger" in opts:
        limits["min_offsets_per_trigger"] = _integer(opts, "minoffsetspertrigger", 1)
    most, least = limits["max_offsets_per_trigger"], limits["min_offsets_per_trigger"]
    if most is not None and least is not None and least > most:
        raise OptionError(
            f"minOffsetsPerTrigger ({least}) must not be above maxOffsetsPerTrigger ({most})"
        )
    if "maxtriggerdelay" in opts:
        if least is None:
            raise OptionError("maxTriggerDelay needs minOffsetsPerTrigger")
        limits["max_trigger_delay_ms"] = _duration_ms(opts, "maxtriggerdelay")
    return limits


def _duration_ms(opts: dict[str, str], name: str) -> int:
    """A duration as Spark writes one: "15m", "30s", "500ms", or ms without a unit."""
    text = opts[name].strip().lower()
    found = _DURATION.fullmatch(text)
    if found is None:
        raise OptionError(
            f"the option {_shown(name)} must be a duration such as 15m, 30s or 500ms, not {text!r}"
        )
    return int(found[1]) * _MS_PER_UNIT[found[2]]


def _security(opts: dict[str, str]) -> tuple[tuple[str, Any], ...]:
    """The kafka.* TLS and SASL options, checked together (on the driver, so a bad
    combination fails the query before any task runs); no message shows a secret."""
    names = {name.removeprefix("kafka."): opts[name] for name in _SECURITY_OPTIONS if name in opts}
    try:
        options = options_from_java(SecuritySettings, names, source="the option kafka.")
        SecuritySettings(**options)
    except (TypeError, ValueError) as error:
        raise OptionError(in_java_names(str(error), SecuritySettings, "kafka.")) from None
    return tuple(sorted(options.items()))


def write_options(options: Mapping[str, str]) -> WriteOptions:
    """Check and parse a write's options: where to, the producer's kafka.* options, and
    whether it is exactly once (exactlyOnce, transactionalIdPrefix)."""
    opts = _lowered(options)
    _check_names(opts, (*_WRITE_OPTIONS, *_SPARK_OPTIONS), "write")
    _check_kafka_options(opts, allowed=(*_PRODUCER_OPTIONS, *_SECURITY_OPTIONS))
    exactly_once = _boolean(opts, "exactlyonce", False)
    stray = [shown for name, shown in _EXACTLY_ONCE_ONLY.items() if name in opts]
    if stray and not exactly_once:
        raise OptionError(f"the option(s) {', '.join(stray)} need exactlyOnce=true")
    prefix = opts.get("transactionalidprefix")
    if prefix is not None and not prefix.strip():
        raise OptionError("the option transactionalIdPrefix cannot be empty")
    if exactly_once and _acks(opts.get("kafka.acks", "all")) not in ("all", -1):
        raise OptionError("exactlyOnce needs kafka.acks=all (transactions are idempotent)")
    given = {
        name.removeprefix("kafka.").replace(".", "_"): _typed(name, opts[name], kind)
        for name, kind in _PRODUCER_OPTIONS.items()
        if name in opts
    }
    given.setdefault("batch_size", WRITE_BATCH_SIZE)
    producer = tuple(given.items())
    bootstrap = _required(opts, _BOOTSTRAP)
    security = _security(opts)
    try:  # on the driver, so a bad combination fails the query before any task runs
        ProducerSettings(bootstrap_servers=bootstrap, **dict(producer), **dict(security))
    except ValueError as error:
        raise OptionError(f"the kafka.* options do not make a producer: {error}") from None
    return WriteOptions(bootstrap, opts.get("topic"), producer, exactly_once, prefix, security)


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
                " kafkawire (docs/guide/spark.md)"
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
    # Spark's Kafka source passes any kafka.* option to the Java client; ours takes the
    # bootstrap servers, TLS and SASL (and a write some of the producer's), and says so rather
    # than ignoring a setting the user relies on.
    known = (_BOOTSTRAP, *allowed)
    unknown = sorted(k for k in opts if k.startswith("kafka.") and k not in known)
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        others = ", ".join(k for k in known if k not in _SECURITY_OPTIONS)
        raise OptionError(
            f"unsupported option(s) {', '.join(unknown)}; {hint}kafka.* takes {others}, and"
            " TLS and SASL by Java's names (kafka.security.protocol, kafka.sasl.*,"
            " kafka.ssl.*: README, Security)"
        )


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


def _timestamp_map(opts: dict[str, str], name: str) -> dict[str, dict[int, int]]:
    """``{"topic": {"0": ms}}``: a timestamp for each partition named."""
    return _per_partition(
        name,
        opts[name],
        shape='like {"topic": {"0": 1700000000000}}',
        minimum=0,
        rule="a time is ms since the epoch, at least 0",
        what="timestamp",
    )


def _offset_spec(opts: dict[str, str], name: str, default: str) -> OffsetSpec:
    text = opts.get(name, default).strip()
    if text.lower() in ("earliest", "latest"):
        return text.lower()
    return _per_partition(
        name,
        text,
        shape='"earliest", "latest" or like {"topic": {"0": 23}}',
        minimum=EARLIEST,
        rule="an offset is at least 0, or -2 (earliest) or -1 (latest)",
        what="offset",
    )


def _per_partition(
    name: str, text: str, *, shape: str, minimum: int, rule: str, what: str
) -> dict[str, dict[int, int]]:
    """A ``{"topic": {"partition": number}}`` JSON map, each number at least ``minimum``."""
    parsed = _json(name, text)
    try:
        spec = {
            str(topic): {int(p): _whole(number) for p, number in partitions.items()}
            for topic, partitions in parsed.items()
        }
    except (AttributeError, TypeError, ValueError):
        raise OptionError(f"{_shown(name)} must be {shape}, not {text}") from None
    for topic, partitions in spec.items():
        for partition, number in partitions.items():
            if number < minimum:
                raise OptionError(
                    f"{_shown(name)} gives {topic}/{partition} the {what} {number}: {rule}"
                )
    return spec


def _whole(value: Any) -> int:
    """A JSON offset: an integer (int("5") and 5.0 would hide a typo in the JSON)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(value)
    return value


def _names_offset(spec: OffsetSpec, offset: int) -> bool:
    return isinstance(spec, dict) and any(offset in ps.values() for ps in spec.values())
