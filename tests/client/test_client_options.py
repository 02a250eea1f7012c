"""KafkaClient's options: the Java client's names in milliseconds, as the other clients take
them, reaching the cluster layer in seconds; and the names in seconds that came before them,
which work for one release with a DeprecationWarning naming the new option and its unit."""

from __future__ import annotations

import ssl
import typing
from typing import Any

import pytest

from kafkawire.client import KafkaClient, KafkaClientSettings
from kafkawire.cluster import Backoff, ClientOptions, ClientSettings
from kafkawire.net import Plain
from kafkawire.protocol import MAX_FRAME_SIZE

BOOTSTRAP = "127.0.0.1:9092"
CONTEXT = ssl.create_default_context()


def test_the_defaults_are_the_java_clients() -> None:
    settings = KafkaClient(BOOTSTRAP).cluster.settings
    assert settings == ClientSettings(
        client_id="kafkawire",
        request_timeout=30.0,  # request.timeout.ms
        retry_timeout=60.0,  # default.api.timeout.ms
        connect_timeout=10.0,  # socket.connection.setup.timeout.ms
        metadata_max_age=300.0,  # metadata.max.age.ms
        max_frame_size=MAX_FRAME_SIZE,
        backoff=Backoff(initial=0.1, maximum=1.0),  # retry.backoff(.max).ms
        reconnect_backoff=Backoff(initial=0.05, maximum=1.0),  # reconnect.backoff(.max).ms
        metadata_recovery_rebootstrap_trigger=300.0,
    )


def test_java_named_options_reach_the_cluster_layer_in_seconds() -> None:
    sasl = Plain("user", "secret")
    client = KafkaClient(
        BOOTSTRAP,
        client_id="mine",
        request_timeout_ms=5000,
        default_api_timeout_ms=7500,
        socket_connection_setup_timeout_ms=2000,
        metadata_max_age_ms=1500,
        retry_backoff_ms=10,
        retry_backoff_max_ms=40,
        reconnect_backoff_ms=20,
        reconnect_backoff_max_ms=80,
        metadata_recovery_strategy="none",
        metadata_recovery_rebootstrap_trigger_ms=0,
        ssl_context=CONTEXT,
        sasl=sasl,
        receive_message_max_bytes=1024,
    )
    assert client.cluster.settings == ClientSettings(
        client_id="mine",
        request_timeout=5.0,
        retry_timeout=7.5,
        connect_timeout=2.0,
        metadata_max_age=1.5,
        backoff=Backoff(initial=0.01, maximum=0.04),
        reconnect_backoff=Backoff(initial=0.02, maximum=0.08),
        metadata_recovery_strategy="none",
        metadata_recovery_rebootstrap_trigger=0.0,
        ssl=CONTEXT,
        sasl=sasl,
        max_frame_size=1024,
    )


def test_settings_may_be_given_whole() -> None:
    settings = KafkaClientSettings(bootstrap_servers=BOOTSTRAP, request_timeout_ms=1234)
    client = KafkaClient(settings=settings)
    assert client.settings is settings
    assert client.cluster.settings.request_timeout == 1.234
    with pytest.raises(TypeError, match=r"^KafkaClient\(\) takes settings or options, not both$"):
        KafkaClient(settings=settings, client_id="x")
    with pytest.raises(TypeError, match=r"^KafkaClient\(\) needs bootstrap_servers"):
        KafkaClient(client_id="x")


# Each old name with a value, and the new options it means.
OLD_AND_NEW: list[tuple[dict[str, Any], dict[str, Any], str]] = [
    ({"request_timeout": 5.0}, {"request_timeout_ms": 5000}, "request_timeout_ms"),
    ({"retry_timeout": 0.05}, {"default_api_timeout_ms": 50}, "default_api_timeout_ms"),
    (
        {"connect_timeout": 2},
        {"socket_connection_setup_timeout_ms": 2000},
        "socket_connection_setup_timeout_ms",
    ),
    ({"metadata_max_age": 1.5}, {"metadata_max_age_ms": 1500}, "metadata_max_age_ms"),
    (
        {"metadata_recovery_rebootstrap_trigger": 0},
        {"metadata_recovery_rebootstrap_trigger_ms": 0},
        "metadata_recovery_rebootstrap_trigger_ms",
    ),
    (
        {"backoff": Backoff(initial=0.001, maximum=0.002)},
        {"retry_backoff_ms": 1, "retry_backoff_max_ms": 2},
        "retry_backoff_ms and retry_backoff_max_ms",
    ),
    (
        {"reconnect_backoff": Backoff(initial=0.01, maximum=0.05)},
        {"reconnect_backoff_ms": 10, "reconnect_backoff_max_ms": 50},
        "reconnect_backoff_ms and reconnect_backoff_max_ms",
    ),
    ({"max_frame_size": 1024}, {"receive_message_max_bytes": 1024}, "receive_message_max_bytes"),
    ({"ssl": CONTEXT}, {"ssl_context": CONTEXT}, "ssl_context"),
]


@pytest.mark.parametrize(("old", "new", "named"), OLD_AND_NEW, ids=lambda v: str(v)[:30])
def test_an_old_option_works_as_its_new_one_with_a_deprecation_warning(
    old: dict[str, Any], new: dict[str, Any], named: str
) -> None:
    (name,) = old
    unit = "the same value" if named in ("receive_message_max_bytes", "ssl_context") else "in milli"
    deprecated = rf"^KafkaClient\({name}=\.\.\.\) is deprecated.*: use {named} \({unit}"
    with pytest.warns(DeprecationWarning, match=deprecated) as warned:
        client = KafkaClient(BOOTSTRAP, **old)
    [warning] = warned
    assert warning.filename == __file__  # it points at the caller's line
    assert client.settings == KafkaClient(BOOTSTRAP, **new).settings


def test_every_old_option_is_translated() -> None:
    same_name = {"client_id", "sasl", "metadata_recovery_strategy"}
    old_names = {name for old, _, _ in OLD_AND_NEW for name in old}
    assert old_names == set(typing.get_type_hints(ClientOptions)) - same_name


def test_the_old_bootstrap_keyword_works_too() -> None:
    with pytest.warns(DeprecationWarning, match=r"^KafkaClient\(bootstrap=\.\.\.\).* use "):
        client = KafkaClient(bootstrap=BOOTSTRAP)  # type: ignore[call-arg]
    assert client.settings.bootstrap_servers == BOOTSTRAP


def test_a_time_below_a_millisecond_rounds_up() -> None:
    with pytest.warns(DeprecationWarning, match="use request_timeout_ms"):
        client = KafkaClient(BOOTSTRAP, request_timeout=0.0001)
    assert client.settings.request_timeout_ms == 1


def test_a_bad_old_value_is_refused_with_its_old_message_and_no_warning() -> None:
    # pytest turns warnings into errors here: a warning first would fail this.
    with pytest.raises(TypeError, match=r"^request_timeout must be a number > 0, not '5'$"):
        KafkaClient(BOOTSTRAP, request_timeout="5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^retry_timeout must be a number >= 0, not -1$"):
        KafkaClient(BOOTSTRAP, retry_timeout=-1)


@pytest.mark.parametrize(
    ("options", "doubled"),
    [
        ({"request_timeout": 5.0, "request_timeout_ms": 5000}, "'request_timeout' and 'request_"),
        ({"backoff": Backoff(), "retry_backoff_max_ms": 10}, "'backoff' and 'retry_backoff_max"),
        ({"bootstrap": BOOTSTRAP}, "'bootstrap' and 'bootstrap_servers'"),
    ],
)
def test_an_old_option_beside_its_new_one_is_refused(options: dict[str, Any], doubled: str) -> None:
    with pytest.raises(TypeError, match=rf"^KafkaClient\(\) got {doubled}.*, the same option"):
        KafkaClient(BOOTSTRAP, **options)


def test_a_backoff_java_cannot_express_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^backoff: Backoff\(multiplier=3, jitter=0\.2\) has no"):
        KafkaClient(BOOTSTRAP, backoff=Backoff(multiplier=3))
