"""What the commands share: options, the one-line failure, running a coroutine."""

from __future__ import annotations

import asyncio
import datetime
import functools
import logging
import math
import os
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import click

from kafkawire.admin import Admin, AdminSettings, topic_name_problem
from kafkawire.client import KafkaClient
from kafkawire.cluster import SecuritySettings, parse_bootstrap
from kafkawire.consumer import Consumer, ConsumerSettings, ShareConsumer, ShareConsumerSettings
from kafkawire.errors import KafkawireError
from kafkawire.producer import Producer, ProducerSettings

from ._settings import JavaSettings, built, java_settings

__all__ = [
    "CONTEXT_SETTINGS",
    "DEBUG",
    "INT16",
    "INT32",
    "INT64",
    "BrokerArgs",
    "Failure",
    "Interrupted",
    "broker_options",
    "debug_option",
    "format_option",
    "key_values",
    "one_line",
    "plural",
    "run",
    "timestamp_ms",
    "topic_name",
]

T = TypeVar("T")

DEBUG = "kafkawire.debug"
# The largest number each wire type holds: an option beyond its field's type is a usage error
# naming the option, not an encoding error naming the request.
INT16 = 2**15 - 1
INT32 = 2**31 - 1
INT64 = 2**63 - 1
# --timeout is sent in ms as an int32 (request_timeout_ms), and is at least 1 ms.
_MOST_SECONDS = INT32 / 1000
CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Failure(click.ClickException):
    """A failure that is not a usage error: exit code 1, one line on stderr."""

    exit_code = 1


class Interrupted(Failure):
    """Stopped by Ctrl-C (SIGINT), having said what was done: exit code 130 (128 + SIGINT),
    as the shell's convention, and the group's for a KeyboardInterrupt, have it."""

    exit_code = 130


def _set_debug(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[DEBUG] = True
        # What the library logs (retries, failed batches) is for --debug: the command's own
        # one-line error and summary say what a user needs.
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logging.getLogger("kafkawire").addHandler(handler)


debug_option = click.option(
    "--debug",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_set_debug,
    help="Print the traceback of an error, and kafkawire's warnings.",
)


def one_line(exc: BaseException) -> str:
    message = " ".join(str(exc).split())
    # Our own errors and the operating system's explain themselves; anything else is named.
    if isinstance(exc, KafkawireError | OSError) and message:
        return message
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


@dataclass(frozen=True)
class BrokerArgs:
    """Where the broker is, how long a command may wait for it, and the settings given by
    Java's names (``-X``, ``--command-config``, ``KAFKAWIRE_*``), which go over the
    command's own defaults; a command's own options go over both."""

    bootstrap: str
    timeout: float
    java: JavaSettings = field(default_factory=JavaSettings)

    def admin(self) -> Admin:
        ms = int(self.timeout * 1000)
        defaults = {
            "client_id": "kafkawire-cli",
            "request_timeout_ms": ms,
            "default_api_timeout_ms": ms,
            "socket_connection_setup_timeout_ms": ms,
        }
        given = {**defaults, **self.java.options(AdminSettings)}
        return built(AdminSettings, lambda: Admin(self.bootstrap, **given))

    def producer(self, **options: Any) -> Producer:
        ms = int(self.timeout * 1000)
        defaults = {
            "client_id": "kafkawire-cli",
            "request_timeout_ms": ms,
            "max_block_ms": ms,
            # At least a request's timeout and the linger, which the settings check.
            "delivery_timeout_ms": ms + 5,
            "socket_connection_setup_timeout_ms": ms,
        }
        given = {**defaults, **self.java.options(ProducerSettings), **options}
        return built(ProducerSettings, lambda: Producer(self.bootstrap, **given))

    def _reader_defaults(self) -> dict[str, Any]:
        """What a reader (a consumer or a share consumer) is given unless told otherwise."""
        ms = int(self.timeout * 1000)
        return {
            "client_id": "kafkawire-cli",
            "request_timeout_ms": max(ms, 1000),
            "default_api_timeout_ms": ms,
            "socket_connection_setup_timeout_ms": ms,
        }

    def consumer(self, topic: str, **options: Any) -> Consumer:
        defaults = {
            **self._reader_defaults(),
            # A short session: a console reader that goes away should hand its partitions
            # back soon (and brokers that hold a join for half of it answer sooner).
            "session_timeout_ms": 10_000,
            "heartbeat_interval_ms": 1_000,
        }
        given = {**defaults, **self.java.options(ConsumerSettings), **options}
        return built(
            ConsumerSettings, lambda: Consumer(topic, bootstrap_servers=self.bootstrap, **given)
        )

    def share_consumer(self, topic: str, **options: Any) -> ShareConsumer:
        given = {**self._reader_defaults(), **self.java.options(ShareConsumerSettings), **options}
        return built(
            ShareConsumerSettings,
            lambda: ShareConsumer(topic, bootstrap_servers=self.bootstrap, **given),
        )

    def client(self) -> KafkaClient:
        ms = int(self.timeout * 1000)
        security = self.java.options(SecuritySettings)
        return built(
            SecuritySettings,
            lambda: KafkaClient(
                self.bootstrap,
                client_id="kafkawire-cli",
                request_timeout_ms=ms,
                default_api_timeout_ms=ms,
                socket_connection_setup_timeout_ms=ms,
                **security,
            ),
        )


def broker_options(command: Callable[..., T]) -> Callable[..., T]:
    """``-b/--bootstrap-server`` (or KAFKAWIRE_BOOTSTRAP), ``--timeout``, and the settings by
    Java's names (``--command-config``, ``-X``, ``KAFKAWIRE_*``), given to the command as one
    ``broker`` argument."""

    @functools.wraps(command)
    def with_broker(
        *args: Any,
        bootstrap_server: str | None,
        timeout: float,
        command_config: str | None,
        properties: dict[str, str],
        **kwargs: Any,
    ) -> T:
        java = java_settings(command_config, properties, os.environ)
        bootstrap = bootstrap_server or java.bootstrap
        if bootstrap is None:
            raise click.UsageError(
                "give --bootstrap-server (or KAFKAWIRE_BOOTSTRAP, or bootstrap.servers in"
                " --command-config or -X)"
            )
        _bootstrap(None, None, bootstrap)
        return command(*args, broker=BrokerArgs(bootstrap, timeout, java), **kwargs)

    with_broker = click.option(
        "-X",
        "--property",
        "properties",
        multiple=True,
        callback=key_values,
        metavar="KEY=VALUE",
        help="A client setting by Java's name, e.g. -X security.protocol=SASL_SSL"
        " (repeatable; over --command-config).",
    )(with_broker)
    with_broker = click.option(
        "--command-config",
        envvar="KAFKAWIRE_COMMAND_CONFIG",
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help="A Java properties file of client settings (security.protocol, sasl.mechanism,"
        " sasl.jaas.config, ssl.truststore.location, ...), as Kafka's tools take it"
        " [env: KAFKAWIRE_COMMAND_CONFIG]. TLS and SASL settings may also come from"
        " KAFKAWIRE_SECURITY_PROTOCOL, KAFKAWIRE_SASL_MECHANISM, KAFKAWIRE_SASL_JAAS_CONFIG,"
        " KAFKAWIRE_SSL_TRUSTSTORE_LOCATION and the like (the name in capitals).",
    )(with_broker)
    with_broker = click.option(
        "--timeout",
        type=click.FloatRange(min=0.001, max=_MOST_SECONDS),
        callback=_finite,
        default=30.0,
        show_default=True,
        metavar="SECONDS",
        help="How long to wait for the broker, retries included.",
    )(with_broker)
    return click.option(
        "-b",
        "--bootstrap-server",
        envvar="KAFKAWIRE_BOOTSTRAP",
        callback=_bootstrap,
        metavar="HOST:PORT",
        help="The broker to talk to [env: KAFKAWIRE_BOOTSTRAP].",
    )(with_broker)


def _bootstrap(
    _ctx: click.Context | None, _param: click.Parameter | None, value: str | None
) -> str | None:
    """The addresses as given, once each is HOST:PORT (a port is part of an address)."""
    if value is not None:
        try:
            parse_bootstrap(value)
        except ValueError as exc:
            raise click.BadParameter(f"{exc} (give HOST:PORT, e.g. localhost:9092)") from None
    return value


def _finite(_ctx: click.Context, _param: click.Parameter, value: float) -> float:
    if math.isnan(value):  # compares as neither below nor above a range
        raise click.BadParameter(
            f"nan is not in the range 0.001<=x<={_MOST_SECONDS}", param_hint="'--timeout'"
        )
    return value


def topic_name(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    """A TOPIC argument, once it is a name Kafka allows."""
    problem = topic_name_problem(value)
    if problem is not None:
        raise click.BadParameter(problem)
    return value


def format_option(help: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """``--format text|json``, given to the command as ``fmt``."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "json"]),
        default="text",
        show_default=True,
        help=help,
    )


def key_values(
    _ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]
) -> dict[str, str]:
    """``k=v`` options (repeatable) as a dict."""
    pairs = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE")
        pairs[key] = value
    return pairs


def timestamp_ms(_ctx: click.Context, _param: click.Parameter, value: str | None) -> int | None:
    """A time as ms since the epoch: given as such, or in ISO 8601 (local time without a zone)."""
    if value is None:
        return None
    if value.isascii() and value.isdigit():  # str.isdigit() takes "²" and "٣" too
        if int(value) > INT64:
            raise click.BadParameter(f"{value} is after the last time Kafka can hold")
        return int(value)
    try:
        moment = datetime.datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is neither ms since the epoch nor an ISO 8601 time"
        ) from None
    try:
        if moment.tzinfo is None:
            moment = moment.astimezone()  # a time without a zone is local, as people write it
        ms = int(moment.timestamp() * 1000)
    except (OverflowError, ValueError):  # year 1 in a zone east of UTC is year 0
        ms = -1
    # A negative time would ask ListOffsets for "latest" (-1) or "earliest" (-2).
    if ms < 0:
        raise click.BadParameter(f"{value!r} is before 1970, where Kafka's times start")
    return ms


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)
