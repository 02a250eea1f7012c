"""Every generated top-level message class, found by walking kafkawire.messages, and in groups.

A group is what one round-trip property covers: an API's requests, or its responses, at every
version (``fetch.requests``), or the top-level classes of one package that is not an API's
(``request_header``: headers, data messages, the upstream test messages). The group names are
known without importing a message module, so the tests parametrized by them collect quickly,
and a test process imports only the classes of the groups it runs.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import typing
from functools import cache
from types import ModuleType
from typing import Any

import kafkawire.messages
from kafkawire.messages import APIS, request_type, response_type

_KINDS = {"requests": request_type, "responses": response_type}


def _modules(package: ModuleType) -> list[ModuleType]:
    """The message modules: not packages, nor private ones (``_base``, the base types)."""
    found = []
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        if not info.ispkg and not info.name.rpartition(".")[2].startswith("_"):
            found.append(importlib.import_module(info.name))
    return found


def _top_classes(module: ModuleType) -> list[type[Any]]:
    """Classes of a module that no other class of it nests."""
    classes = [getattr(module, name) for name in module.__all__]
    nested: set[type[Any]] = set()
    for cls in classes:
        for hint in typing.get_type_hints(cls).values():
            stack = [hint]
            while stack:
                item = stack.pop()
                if dataclasses.is_dataclass(item) and isinstance(item, type):
                    nested.add(item)
                stack.extend(typing.get_args(item))
    return [c for c in classes if c not in nested]


def _other_packages() -> list[str]:
    """The packages of kafkawire.messages that are no API's (listed, not imported)."""
    api_modules = {info.module for info in APIS.values()}
    return sorted(
        info.name
        for info in pkgutil.iter_modules(kafkawire.messages.__path__)
        if info.ispkg and info.name not in api_modules
    )


def groups() -> list[str]:
    """The names of the groups, in API key order, then the other packages by name."""
    names = [f"{info.module}.{kind}" for _, info in sorted(APIS.items()) for kind in _KINDS]
    return names + _other_packages()


@cache
def group_classes(group: str) -> list[type[Any]]:
    """The classes of the group named ``group`` (see :func:`groups`), imported on first use."""
    module, _, kind = group.partition(".")
    if kind:
        api_key = next(key for key, info in APIS.items() if info.module == module)
        return [_KINDS[kind](api_key, version) for version in APIS[api_key].versions]
    package = importlib.import_module(f"{kafkawire.messages.__name__}.{module}")
    return [cls for found in _modules(package) for cls in _top_classes(found)]


@cache
def api_classes() -> list[type[Any]]:
    classes = []
    for api_key, info in sorted(APIS.items()):
        for version in info.versions:
            classes += [request_type(api_key, version), response_type(api_key, version)]
    return classes


@cache
def other_classes() -> list[type[Any]]:
    """Headers, data messages and the upstream test messages."""
    return [cls for package in _other_packages() for cls in group_classes(package)]


def all_classes() -> list[type[Any]]:
    return api_classes() + other_classes()


def class_id(cls: type[Any]) -> str:
    return f"{cls.__module__.removeprefix('kafkawire.messages.')}.{cls.__name__}"
