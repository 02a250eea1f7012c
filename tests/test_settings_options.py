"""Every option of every client is checked, the same way, with one line that names it.

The walk is driven by each option's type (the field's annotation, or what its converter
takes), not by the checks themselves: an option whose validator does not match its type, or
that has none, fails here. Each client's keyword options (the TypedDict that types them, kept
by hand beside the attrs class that checks them) are held equal to its settings' fields, names
and types.
"""

from __future__ import annotations

import re
import ssl
import typing
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import pytest

from kafkawire.admin import Admin, AdminOptions, AdminSettings
from kafkawire.client import KafkaClient, KafkaClientOptions, KafkaClientSettings
from kafkawire.cluster import (
    Backoff,
    ClientOptions,
    ClientSettings,
    ConnectionOptions,
    ConnectionSettings,
)
from kafkawire.cluster.java_settings import ApiTimeoutOptions, ApiTimeoutSettings
from kafkawire.cluster.security import (
    SaslMechanismName,
    SecurityOptions,
    SecurityProtocol,
    SecuritySettings,
    StoreType,
)
from kafkawire.consumer import (
    Consumer,
    ConsumerOptions,
    ConsumerSettings,
    ShareConsumerOptions,
    ShareConsumerSettings,
)
from kafkawire.consumer.settings import Deserializer
from kafkawire.net.sasl import SaslMechanism, TokenProvider
from kafkawire.producer import Partitioner, Producer, ProducerOptions, ProducerSettings
from kafkawire.producer.settings import Serializer

BOOTSTRAP = "127.0.0.1:9092"

SETTINGS_AND_OPTIONS = [
    (ClientSettings, ClientOptions),
    (SecuritySettings, SecurityOptions),
    (ConnectionSettings, ConnectionOptions),
    (ApiTimeoutSettings, ApiTimeoutOptions),
    (ProducerSettings, ProducerOptions),
    (ConsumerSettings, ConsumerOptions),
    (ShareConsumerSettings, ShareConsumerOptions),
    (AdminSettings, AdminOptions),
    (KafkaClientSettings, KafkaClientOptions),
]
SETTINGS = [settings for settings, _ in SETTINGS_AND_OPTIONS]

# Values of a type each kind of option does not take. A bool is an int to Python and "false"
# is truthy: both must be refused, not taken as 1 or True.
WRONG_TYPES: dict[object, list[object]] = {
    int: [True, 1.5, "1", None],
    int | None: [False, 1.5, "1"],
    float: [True, "1", None],
    bool: ["false", 1, 0, None],
    bool | None: ["false", 1],
    str: [5, b"x", None],
    str | None: [5, b"x"],
    int | str: [True, 1.5, None],  # acks
    str | Sequence[str]: [5, [5], b"x", None],
    ssl.SSLContext | None: ["ssl", 5],
    SaslMechanism | None: ["PLAIN", 5],
    Backoff: [0.1, None],
    Partitioner | None: ["murmur2", 5],
    Serializer | None: ["utf-8", 5],
    Deserializer | None: ["utf-8", 5],
    SecurityProtocol | None: [5, b"SSL"],
    SaslMechanismName | None: [5, b"PLAIN"],
    StoreType | None: [5, b"PEM"],
    Mapping[str, str] | None: ["a=b", {"a": 5}],
    TokenProvider | None: ["token", 5],
}
# Literal choices that may also be None (left out: what other options imply).
OPTIONAL_CHOICES = {SecurityProtocol | None, SaslMechanismName | None, StoreType | None}
NUMBERS = (int, int | None, float)
MAY_BE_ZERO = {
    "retry_backoff_ms",
    "linger_ms",
    "max_block_ms",
    "fetch_max_wait_ms",
    "operation_timeout_ms",
    "retry_timeout",
    "reconnect_backoff_ms",  # Java's reconnect.backoff.ms and .max.ms: atLeast(0)
    "reconnect_backoff_max_ms",
    "metadata_recovery_rebootstrap_trigger_ms",
    "metadata_recovery_rebootstrap_trigger",
}
RANGE_DEPENDS_ON_OTHERS = {"compression_level"}  # on the codec: tests/producer/test_settings.py


def option_types(settings: type) -> dict[str, Any]:
    """What each option takes: its field's type, or what its converter takes."""
    fields = typing.get_type_hints(settings)
    types = {}
    for field in attrs.fields(settings):
        if field.converter is None:
            types[field.name] = fields[field.name]
        else:
            takes = typing.get_type_hints(field.converter)
            del takes["return"]
            (types[field.name],) = takes.values()
    return types


REQUIRED: dict[type, dict[str, object]] = {ShareConsumerSettings: {"group_id": "g"}}


def build(settings: type, **options: object) -> object:
    required = (
        {} if settings in (ClientSettings, SecuritySettings) else {"bootstrap_servers": BOOTSTRAP}
    )
    return settings(**{**required, **REQUIRED.get(settings, {}), **options})


def is_secret(settings: type, option: str) -> bool:
    return not attrs.fields_dict(settings)[option].repr


def naming(option: str, value: object, wanted: str = r"[^\n]+", *, hidden: bool = False) -> str:
    """The one-line message that names ``option`` and ``value`` (a pattern); a secret's value
    is not shown, only its type."""
    shown = re.escape(repr(value))
    if hidden:
        shown = rf"a value of type {type(value).__name__} \(not shown: a secret\)"
    return rf"^{option} must be {wanted}, not {shown}\Z"


def _cases(kind: str) -> list[Any]:
    cases = []
    for settings in SETTINGS:
        for option, taken in option_types(settings).items():
            named = f"{settings.__name__}.{option}"
            if kind == "type":
                cases += [
                    pytest.param(settings, option, value, id=named)
                    for value in WRONG_TYPES.get(taken, [5, None])  # else a Literal of strs
                ]
            elif kind == "range" and taken in NUMBERS and option not in RANGE_DEPENDS_ON_OTHERS:
                cases.append(pytest.param(settings, option, id=named))
            elif kind == "choice" and typing.get_origin(taken) is typing.Literal:
                shown = ", ".join(repr(choice) for choice in typing.get_args(taken))
                cases.append(pytest.param(settings, option, shown, id=named))
            elif kind == "choice" and taken in OPTIONAL_CHOICES:
                (choices,) = (a for a in typing.get_args(taken) if a is not type(None))
                shown = ", ".join(repr(choice) for choice in typing.get_args(choices))
                cases.append(pytest.param(settings, option, f"{shown} or None", id=named))
    return cases


@pytest.mark.parametrize("settings", SETTINGS)
def test_every_kind_of_option_is_walked(settings: type) -> None:
    unknown = {
        option: taken
        for option, taken in option_types(settings).items()
        if taken not in WRONG_TYPES and typing.get_origin(taken) is not typing.Literal
    }
    assert not unknown, f"add these types to WRONG_TYPES: {unknown}"


@pytest.mark.parametrize(("settings", "option", "value"), _cases("type"))
def test_a_wrong_type_is_a_type_error_naming_the_option(
    settings: type, option: str, value: object
) -> None:
    with pytest.raises(TypeError, match=naming(option, value, hidden=is_secret(settings, option))):
        build(settings, **{option: value})


@pytest.mark.parametrize(("settings", "option"), _cases("range"))
def test_a_number_out_of_range_is_a_value_error_naming_the_option(
    settings: type, option: str
) -> None:
    for value in (-1, 0) if option not in MAY_BE_ZERO else (-1,):
        with pytest.raises(ValueError, match=naming(option, value)):
            build(settings, **{option: value})
    if option in MAY_BE_ZERO:
        assert getattr(build(settings, **{option: 0}), option) == 0


@pytest.mark.parametrize(("settings", "option", "choices"), _cases("choice"))
def test_a_choice_lists_the_choices(settings: type, option: str, choices: str) -> None:
    with pytest.raises(ValueError, match=naming(option, "nope", f"one of {re.escape(choices)}")):
        build(settings, **{option: "nope"})


def test_the_issue_examples_through_the_public_constructors() -> None:
    with pytest.raises(TypeError, match=r"^linger_ms must be an int >= 0, not 1\.5$"):
        Producer(bootstrap_servers=BOOTSTRAP, linger_ms=1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^batch_size must be an int >= 1, not '16384'$"):
        Producer(BOOTSTRAP, batch_size="16384")  # type: ignore[arg-type]
    brotli = "compression_type must be one of 'none', 'gzip', 'snappy', 'lz4', 'zstd', not 'brotli'"
    with pytest.raises(ValueError, match=f"^{re.escape(brotli)}$"):
        Producer(BOOTSTRAP, compression_type="brotli")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^acks must be one of 0, 1, -1, 'all', not True$"):
        Producer(BOOTSTRAP, acks=True)
    with pytest.raises(TypeError, match=r"^enable_auto_commit must be True or False, not 'false'"):
        Consumer("t", bootstrap_servers=BOOTSTRAP, enable_auto_commit="false")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^session_timeout_ms must be an int >= 1, not '10000'$"):
        Consumer("t", bootstrap_servers=BOOTSTRAP, session_timeout_ms="10000")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^max_poll_records must be an int >= 1, not True$"):
        Consumer("t", bootstrap_servers=BOOTSTRAP, max_poll_records=True)
    with pytest.raises(TypeError, match=r"^default_api_timeout_ms must be an int >= 1, not 5\.0$"):
        Admin(BOOTSTRAP, default_api_timeout_ms=5.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^request_timeout_ms must be an int >= 1, not 5\.0$"):
        KafkaClient(BOOTSTRAP, request_timeout_ms=5.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^partition_assignment_strategy must be one of 'range'"):
        Consumer(bootstrap_servers=BOOTSTRAP, partition_assignment_strategy=["range", "fair"])


@pytest.mark.parametrize(
    ("make", "misspelled", "meant"),
    [
        (lambda **o: Producer(BOOTSTRAP, **o), "lingr_ms", "linger_ms"),
        (lambda **o: Consumer(bootstrap_servers=BOOTSTRAP, **o), "enable_autocommit", None),
        (lambda **o: Admin(BOOTSTRAP, **o), "request_timeout", "request_timeout_ms"),
        (lambda **o: KafkaClient(BOOTSTRAP, **o), "request_timout", "request_timeout_ms"),
    ],
)
def test_a_misspelled_option_names_it_the_caller_and_the_closest_option(
    make: Any, misspelled: str, meant: str | None
) -> None:
    meant = meant or "enable_auto_commit"
    with pytest.raises(TypeError) as error:
        make(**{misspelled: 1})
    caller = str(error.value).split("(")[0]
    assert str(error.value) == (
        f"{caller}() got an unexpected keyword argument {misspelled!r}; did you mean {meant!r}?"
    )


def test_an_option_like_none_lists_the_options() -> None:
    with pytest.raises(TypeError, match=r"'colour'; its options are: acks, batch_size, "):
        Producer(BOOTSTRAP, colour="blue")  # type: ignore[call-arg]


@pytest.mark.parametrize(("settings", "options"), SETTINGS_AND_OPTIONS)
def test_the_keyword_options_are_the_settings_fields(settings: type, options: type) -> None:
    taken = option_types(settings)
    taken.pop("bootstrap_servers", None)  # the clients take it as an argument of its own
    assert typing.get_type_hints(options) == taken
    assert not options.__required_keys__  # type: ignore[attr-defined]
