"""A metric's name, group and tags, and how they appear in ``metrics()``' flat dict.

Java names a metric by ``MetricName(name, group, tags)`` and shows it in JMX as
``kafka.consumer:type=<group>,client-id=<id>,<tag>=<value>,...``. ``metrics()`` returns
``{group key: {name: value}}`` (kafka-python's shape); the group key is the group alone, or
the group followed by its tags in the order they were given, as JMX lists them:
``"consumer-fetch-manager-metrics,topic=orders,partition=0"``. The client id is left out (the
dict belongs to one client). So two metrics of one name but different tags never collide,
and a name found under ``producer-metrics`` is the one Java's documentation describes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["MetricName", "group_key"]


@dataclass(frozen=True, slots=True)
class MetricName:
    """``name`` in ``group``, with ``tags`` (ordered ``(key, value)`` pairs)."""

    name: str
    group: str
    tags: tuple[tuple[str, str], ...] = ()
    description: str = field(default="", compare=False)

    @classmethod
    def of(
        cls, name: str, group: str, tags: Mapping[str, str] | None = None, description: str = ""
    ) -> MetricName:
        """A name with ``tags`` given as a mapping (in its order)."""
        return cls(name, group, tuple((tags or {}).items()), description)

    @property
    def group_key(self) -> str:
        """The group with its tags, as ``metrics()`` keys it (see the module doc)."""
        return group_key(self.group, self.tags)


def group_key(group: str, tags: tuple[tuple[str, str], ...]) -> str:
    if not tags:
        return group
    return ",".join((group, *(f"{key}={value}" for key, value in tags)))
