"""Client settings by Java's names: ``KAFKAWIRE_*`` variables, ``--command-config``, ``-X``.

Three layers, each over the one before: environment variables for the TLS and SASL settings
(``KAFKAWIRE_SECURITY_PROTOCOL``, ``KAFKAWIRE_SASL_MECHANISM``, ``KAFKAWIRE_SASL_JAAS_CONFIG``,
``KAFKAWIRE_SSL_TRUSTSTORE_LOCATION``, ...: ``KAFKAWIRE_`` and the setting's name in capitals,
dots as underscores), a Java properties file (``--command-config``, as Kafka's console tools
take it: a Confluent Cloud ``client.properties`` works as it is), and ``-X KEY=VALUE`` (as
kcat takes it). Names are Java's (or librdkafka's where kafkawire knows them); each command
takes what its client has: a file shared by producers and consumers is fine, a name no client
has is refused where it was given. ``bootstrap.servers`` stands in for ``--bootstrap-server``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from kafkawire.admin import AdminSettings
from kafkawire.cluster import SecuritySettings
from kafkawire.cluster.java_names import in_java_names, options_from_java
from kafkawire.cluster.security import NamedSecurityOptions
from kafkawire.consumer import ConsumerSettings
from kafkawire.producer import ProducerSettings

from ._properties import parse_properties

__all__ = ["ENVIRONMENT", "JavaSettings", "built", "java_settings"]

T = TypeVar("T")

ENV_PREFIX = "KAFKAWIRE_"
# The environment variables read: TLS and SASL (a token provider is code, not text).
ENVIRONMENT = {
    ENV_PREFIX + name.upper(): name.replace("_", ".")
    for name in sorted(NamedSecurityOptions.__optional_keys__)
    if name != "sasl_oauthbearer_token_provider"
}
_EVERY_CLIENT = (ProducerSettings, ConsumerSettings, AdminSettings, SecuritySettings)
_BOOTSTRAP = "bootstrap.servers"
_MOST_BYTES = 1 << 20


@dataclass(frozen=True)
class JavaSettings:
    """The settings given by name, lowest precedence first: (where, {name: text})."""

    layers: tuple[tuple[str, Mapping[str, str]], ...] = ()

    @property
    def bootstrap(self) -> str | None:
        found = [names[_BOOTSTRAP] for _, names in self.layers if _BOOTSTRAP in names]
        return found[-1] if found else None

    def options(self, settings: type[Any]) -> dict[str, Any]:
        """The keyword options of a client with ``settings``, from every layer."""
        options: dict[str, Any] = {}
        for source, names in self.layers:
            given = {name: text for name, text in names.items() if name != _BOOTSTRAP}
            try:
                found = options_from_java(settings, given, source=source, elsewhere=_EVERY_CLIENT)
            except ValueError as exc:
                raise click.UsageError(str(exc)) from None
            options.update(found)
        return options


def java_settings(
    command_config: str | None, properties: Mapping[str, str], environ: Mapping[str, str]
) -> JavaSettings:
    """The layers, each checked now: a name no client has, or text an option cannot take, is
    a usage error naming where it was given."""
    layers: list[tuple[str, Mapping[str, str]]] = []
    from_env = {ENVIRONMENT[k]: v for k, v in environ.items() if k in ENVIRONMENT}
    if from_env:
        layers.append(("the environment's ", from_env))
    if command_config is not None:
        layers.append((f"{command_config}: ", _parsed(_read(command_config), command_config)))
    if properties:
        layers.append(("-X ", properties))
    settings = JavaSettings(tuple(layers))
    settings.options(SecuritySettings)  # every name is some client's; security text converts
    return settings


def _read(path: str) -> str:
    """The text of a properties file: UTF-8 (Java reads Latin-1, but files of secrets are
    ASCII, and a binary file is a mistake), and at most ``_MOST_BYTES`` (``/dev/zero``, or a
    file given in the wrong place, would otherwise be read until memory runs out)."""
    try:
        with open(path, "rb") as file:
            data = file.read(_MOST_BYTES + 1)
    except OSError as exc:
        raise click.BadParameter(f"{path}: {exc.strerror}", param_hint="--command-config") from None
    if len(data) > _MOST_BYTES:
        raise click.BadParameter(
            f"{path}: larger than 1 MiB, more than a properties file holds",
            param_hint="--command-config",
        )
    try:
        return data.decode()
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise click.BadParameter(
            f"{path}: not UTF-8 text (line {line})", param_hint="--command-config"
        ) from None


def _parsed(text: str, source: str) -> dict[str, str]:
    try:
        return parse_properties(text, source)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--command-config") from None


def built(settings: type[Any], make: Callable[[], T]) -> T:
    """``make()``, with settings that do not go together as a usage error in Java's names
    (the user wrote ``sasl.mechanism``, not ``sasl_mechanism``)."""
    try:
        return make()
    except (TypeError, ValueError) as exc:
        raise click.UsageError(in_java_names(str(exc), settings)) from None
