"""DescribeConfigs (v0-4) and IncrementalAlterConfigs (v0-1): a fixed set of topic and broker
configs with Kafka's defaults.

Resource types: 2 a topic (its own values marked DYNAMIC_TOPIC_CONFIG, the rest
DEFAULT_CONFIG; UNKNOWN_TOPIC_OR_PARTITION for a topic that does not exist), 4 a broker (by
node id; INVALID_REQUEST for another id or a name that is not one), 32 a group (the keys of
:mod:`~kafkawire.testing.fake.group_configs`, its own values marked GROUP_CONFIG; a group
need not exist). Other types are INVALID_REQUEST. ``configuration_keys`` narrows the
answer; synonyms and documentation are left empty.

IncrementalAlterConfigs changes a topic's configs as Kafka's ``ConfigAdminManager`` does: SET,
DELETE (back to the default), and APPEND and SUBTRACT on list configs (``cleanup.policy``;
on another key they are INVALID_CONFIG, as is a key the fake does not know); a SET without a
value is INVALID_REQUEST; ``validate_only`` checks and changes nothing. Broker configs are all
static here: altering one is INVALID_REQUEST, as Kafka answers for a config it cannot change
dynamically. A group's configs are SET and DELETE only, checked as Kafka's ``GroupConfig``
checks them (INVALID_CONFIG).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafkawire.testing.fake.build import build, part
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error
from kafkawire.testing.fake.group_configs import group_config_problem, group_defaults
from kafkawire.testing.fake.state import ClusterState
from kafkawire.testing.fake.topic_configs import TOPIC_DEFAULTS, broker_configs, unknown_keys

from .common import response_for

__all__ = ["alter_incremental", "handle"]

_TOPIC, _BROKER, _GROUP = 2, 4, 32
_SET, _DELETE, _APPEND, _SUBTRACT = 0, 1, 2, 3
_LIST_CONFIGS = frozenset({"cleanup.policy"})
_DYNAMIC_TOPIC_CONFIG, _STATIC_BROKER_CONFIG, _DEFAULT_CONFIG, _GROUP_CONFIG = 1, 4, 5, 8
_STRING = 2  # the config type DescribeConfigs v3+ reports; every value here is a string


async def handle(call: Call) -> Any:
    cls = response_for(call)
    result_cls = part(cls, "results")
    config_cls = part(result_cls, "configs")
    results = []
    for resource in call.request.resources:
        error, message, values = _configs(
            call.state, resource.resource_type, resource.resource_name
        )
        keys = resource.configuration_keys
        configs = tuple(
            build(
                config_cls,
                name=name,
                value=value,
                read_only=False,
                config_source=source,
                is_default=source == _DEFAULT_CONFIG,
                is_sensitive=False,
                config_type=_STRING,
            )
            for name, (value, source) in values.items()
            if keys is None or name in keys
        )
        results.append(_answer(result_cls, resource, error, message, configs=configs))
    return build(cls, results=tuple(results))


def _answer(cls: type[Any], resource: Any, error: Error, message: str | None, **more: Any) -> Any:
    """One resource's answer: its type and name, the error and its message."""
    return build(
        cls,
        error_code=error,
        error_message=message,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
        **more,
    )


def _configs(
    state: ClusterState, kind: int, name: str
) -> tuple[Error, str | None, Mapping[str, tuple[str, int]]]:
    if kind == _TOPIC:
        topic = state.by_name.get(name)
        if topic is None:
            return Error.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} does not exist.", {}
        values = dict(TOPIC_DEFAULTS)
        values["max.message.bytes"] = str(state.config.max_message_bytes)
        return (
            Error.NONE,
            None,
            {
                key: (topic.configs[key], _DYNAMIC_TOPIC_CONFIG)
                if key in topic.configs
                else (value, _DEFAULT_CONFIG)
                for key, value in values.items()
            },
        )
    if kind == _BROKER:
        if not (name.isdigit() and int(name) in state.brokers):
            return Error.INVALID_REQUEST, f"Unexpected broker id {name!r}", {}
        return (
            Error.NONE,
            None,
            {
                key: (value, _STATIC_BROKER_CONFIG)
                for key, value in broker_configs(state.config).items()
            },
        )
    if kind == _GROUP:
        own = state.group_configs.get(name, {})
        return (
            Error.NONE,
            None,
            {
                key: (own[key], _GROUP_CONFIG) if key in own else (value, _DEFAULT_CONFIG)
                for key, value in group_defaults(state.config).items()
            },
        )
    return Error.INVALID_REQUEST, f"Unsupported resource type {kind}", {}


async def alter_incremental(call: Call) -> Any:
    cls = response_for(call)
    result_cls = part(cls, "responses")
    validate_only = call.request.validate_only
    return build(
        cls,
        responses=tuple(
            _answer(result_cls, r, *_alter(call.state, r, validate_only=validate_only))
            for r in call.request.resources
        ),
    )


def _alter(state: ClusterState, resource: Any, *, validate_only: bool) -> tuple[Error, str | None]:
    """One resource's changes (all or none of them); its error and message."""
    if resource.resource_type == _BROKER:
        return Error.INVALID_REQUEST, "the fake cluster's broker configs are static"
    if resource.resource_type == _GROUP:
        return _alter_group(state, resource, validate_only=validate_only)
    if resource.resource_type != _TOPIC:
        return Error.INVALID_REQUEST, f"Unsupported resource type {resource.resource_type}"
    topic = state.by_name.get(resource.resource_name)
    if topic is None:
        return Error.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {resource.resource_name} does not exist."
    unknown = unknown_keys({c.name: c.value for c in resource.configs})
    if unknown:
        return Error.INVALID_CONFIG, f"Unknown topic config name: {unknown[0]}"
    configs = dict(topic.configs)
    for change in resource.configs:
        if change.config_operation == _DELETE:
            configs.pop(change.name, None)
            continue
        if change.value is None:
            return Error.INVALID_REQUEST, f"Null value not supported for : {change.name}"
        if change.config_operation == _SET:
            configs[change.name] = change.value
        elif change.config_operation in (_APPEND, _SUBTRACT):
            if change.name not in _LIST_CONFIGS:
                return Error.INVALID_CONFIG, f"{change.name} is not a list config"
            current = configs.get(change.name, TOPIC_DEFAULTS[change.name]).split(",")
            given = [v for v in change.value.split(",") if v]
            if change.config_operation == _APPEND:
                values = current + [v for v in given if v not in current]
            else:
                values = [v for v in current if v not in given]
            configs[change.name] = ",".join(values)
        else:
            return Error.INVALID_REQUEST, f"Unknown config operation {change.config_operation}"
    if not validate_only:
        topic.configs = configs
    return Error.NONE, None


def _alter_group(
    state: ClusterState, resource: Any, *, validate_only: bool
) -> tuple[Error, str | None]:
    configs = dict(state.group_configs.get(resource.resource_name, {}))
    for change in resource.configs:
        if change.config_operation == _DELETE:
            configs.pop(change.name, None)
        elif change.config_operation != _SET:
            return Error.INVALID_CONFIG, f"{change.name} is not a list config"
        elif change.value is None:
            return Error.INVALID_REQUEST, f"Null value not supported for : {change.name}"
        else:
            configs[change.name] = change.value
    problem = group_config_problem(state.config, configs)
    if problem is not None:
        return Error.INVALID_CONFIG, problem
    if not validate_only:
        state.group_configs[resource.resource_name] = configs
    return Error.NONE, None
