"""Every generated top-level message class, found by walking kafkawire.messages."""

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
    api_packages = {f"kafkawire.messages.{info.module}." for info in APIS.values()}
    classes = []
    for module in _modules(kafkawire.messages):
        if not any(module.__name__.startswith(p) for p in api_packages):
            classes += _top_classes(module)
    return classes


def all_classes() -> list[type[Any]]:
    return api_classes() + other_classes()


def class_id(cls: type[Any]) -> str:
    return f"{cls.__module__.removeprefix('kafkawire.messages.')}.{cls.__name__}"
