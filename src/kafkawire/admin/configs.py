"""Configs of topics, brokers and groups: describe, and alter incrementally.

A broker's configs live on that broker, so requests about a broker resource go to it (its
name is its node id); topic and group configs can be asked of any broker.
"""

from __future__ import annotations

import asyncio
import enum
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from kafkawire.errors import KafkawireError
from kafkawire.messages.describe_configs import v4 as describe_configs
from kafkawire.messages.incremental_alter_configs import v1 as alter_configs

from ._base import AdminBase
from .results import ItemResults, error_of, unanswered

__all__ = [
    "AlterConfigOp",
    "ConfigEntry",
    "ConfigResource",
    "ConfigResourceType",
    "ConfigSource",
    "ConfigsMixin",
]

V = TypeVar("V")


class ConfigResourceType(enum.IntEnum):
    """The kind of resource whose configs are described or altered (Kafka's
    ``ConfigResource.Type``)."""

    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class ConfigSource(enum.IntEnum):
    """Where a config's value comes from: a dynamic setting, the broker's static file, or the
    default."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class AlterConfigOp(enum.IntEnum):
    """How an incremental alteration changes a config: set it, delete it (back to its default),
    or append to or subtract from a list-valued one."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


class ConfigResource(NamedTuple):
    """A topic (by name), a broker (by node id, as a string) or a group (by id; share groups'
    ``share.auto.offset.reset`` and ``share.record.lock.duration.ms``) whose configs to use."""

    type: ConfigResourceType
    name: str

    @classmethod
    def topic(cls, name: str) -> ConfigResource:
        """The configs of the topic ``name``."""
        return cls(ConfigResourceType.TOPIC, name)

    @classmethod
    def broker(cls, node_id: int) -> ConfigResource:
        """The configs of the broker ``node_id``."""
        return cls(ConfigResourceType.BROKER, str(node_id))

    @classmethod
    def group(cls, group_id: str) -> ConfigResource:
        """The configs of the group ``group_id``."""
        return cls(ConfigResourceType.GROUP, group_id)


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One config of a resource, as DescribeConfigs answers."""

    name: str
    value: str | None
    """None for a sensitive value."""
    source: ConfigSource
    read_only: bool
    sensitive: bool


class ConfigsMixin(AdminBase):
    async def describe_configs(
        self, resources: Iterable[ConfigResource], *, keys: Iterable[str] | None = None
    ) -> ItemResults[ConfigResource, dict[str, ConfigEntry]]:
        """Each resource's configs by name (only ``keys``, when given)."""
        names = None if keys is None else tuple(keys)

        def request(group: list[ConfigResource]) -> Any:
            return describe_configs.DescribeConfigsRequest(
                resources=tuple(
                    describe_configs.DescribeConfigsResource(
                        resource_type=r.type, resource_name=r.name, configuration_keys=names
                    )
                    for r in group
                )
            )

        def entries(answer: Any) -> dict[str, ConfigEntry]:
            return {c.name: _entry(c) for c in answer.configs}

        return await self._per_resource(resources, request, "results", entries)

    async def incremental_alter_configs(
        self,
        changes: Mapping[
            ConfigResource, Mapping[str, str | tuple[AlterConfigOp, str | None] | None]
        ],
        *,
        validate_only: bool = False,
    ) -> ItemResults[ConfigResource, None]:
        """Change configs: ``{resource: {name: value}}`` sets each value, ``None`` deletes
        (reverts to the default); ``(AlterConfigOp.APPEND, "x")`` appends to a list value."""

        def request(group: list[ConfigResource]) -> Any:
            return alter_configs.IncrementalAlterConfigsRequest(
                resources=tuple(
                    alter_configs.AlterConfigsResource(
                        resource_type=r.type,
                        resource_name=r.name,
                        configs=tuple(_alterable(k, v) for k, v in changes[r].items()),
                    )
                    for r in group
                ),
                validate_only=validate_only,
            )

        return await self._per_resource(changes, request, "responses", lambda _: None)

    async def _per_resource(
        self,
        resources: Iterable[ConfigResource],
        request: Callable[[list[ConfigResource]], Any],
        answers_field: str,
        result: Callable[[Any], V],
    ) -> ItemResults[ConfigResource, V]:
        """One request per broker the resources belong to, answers matched back by resource."""
        wanted = [ConfigResource(ConfigResourceType(r.type), r.name) for r in resources]
        by_node: dict[int | None, list[ConfigResource]] = defaultdict(list)
        for resource in wanted:
            by_node[_node_of(resource)].append(resource)
        nodes = list(by_node)
        responses = await asyncio.gather(
            *(self._send(request(by_node[n]), node_id=n) for n in nodes)
        )
        results: dict[ConfigResource, V | KafkawireError] = {}
        for node, response in zip(nodes, responses, strict=True):
            answers = {
                (a.resource_type, a.resource_name): a for a in getattr(response, answers_field)
            }
            for resource in by_node[node]:
                answer = answers.get((resource.type, resource.name))
                results[resource] = (
                    unanswered(f"{resource.type.name.lower()} {resource.name!r}", response)
                    if answer is None
                    else error_of(answer) or result(answer)
                )
        return ItemResults(results)


def _node_of(resource: ConfigResource) -> int | None:
    """The broker a resource's configs live on (its own node id), or None: any broker."""
    if resource.type in (ConfigResourceType.BROKER, ConfigResourceType.BROKER_LOGGER):
        return int(resource.name) if resource.name else None  # "": the cluster-wide default
    return None


def _alterable(
    name: str, change: str | tuple[AlterConfigOp, str | None] | None
) -> alter_configs.AlterableConfig:
    op, value = (
        change
        if isinstance(change, tuple)
        else (
            AlterConfigOp.SET if change is not None else AlterConfigOp.DELETE,
            change,
        )
    )
    return alter_configs.AlterableConfig(name=name, config_operation=op, value=value)


def _entry(config: Any) -> ConfigEntry:
    source = getattr(config, "config_source", -1)
    if source == -1:  # v0 has is_default instead of a source
        source = ConfigSource.DEFAULT_CONFIG if config.is_default else ConfigSource.UNKNOWN
    return ConfigEntry(
        name=config.name,
        value=config.value,
        source=ConfigSource(source)
        if source in ConfigSource._value2member_map_
        else ConfigSource.UNKNOWN,
        read_only=config.read_only,
        sensitive=config.is_sensitive,
    )
