"""The group configs the fake knows (Kafka's ``GroupConfig``, set on the GROUP resource with
IncrementalAlterConfigs, or with :meth:`FakeCluster.set_group_config`).

Only the share-group keys the fake honours:

- ``share.auto.offset.reset``: where a share partition starts when the group first reads it:
  ``latest`` (the default: the partition's end), ``earliest`` (its log start), or
  ``by_duration:<ISO-8601 duration>`` (the first record at most that long ago, else the end).
- ``share.record.lock.duration.ms``: how long an acquired record stays locked; a group's value
  must lie within the broker's ``group.share.{min,max}.record.lock.duration.ms``.

A group's configs exist whether or not the group does (Kafka keeps them apart too).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .config import FakeConfig

__all__ = [
    "AUTO_OFFSET_RESET",
    "RECORD_LOCK_DURATION",
    "by_duration_ms",
    "group_config_problem",
    "group_defaults",
]

AUTO_OFFSET_RESET = "share.auto.offset.reset"
RECORD_LOCK_DURATION = "share.record.lock.duration.ms"
_BY_DURATION = "by_duration:"
# java.time.Duration.parse's days-and-time form, without signs.
_DURATION = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?")


def group_defaults(config: FakeConfig) -> dict[str, str]:
    """Every key the fake knows, with the value a group has when it sets none."""
    return {
        AUTO_OFFSET_RESET: "latest",
        RECORD_LOCK_DURATION: str(config.share_group_record_lock_duration_ms),
    }


def by_duration_ms(value: str) -> int | None:
    """The duration of a ``by_duration:`` reset in ms; None if ``value`` is not one."""
    if not value.lower().startswith(_BY_DURATION):
        return None
    found = _DURATION.fullmatch(value[len(_BY_DURATION) :].strip().upper())
    if found is None or found.group(0) in ("P", "PT") or found.group(0).endswith("T"):
        return None
    days, hours, minutes, seconds = (float(part or 0) for part in found.groups())
    return int((((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000)


def group_config_problem(config: FakeConfig, configs: Mapping[str, str]) -> str | None:
    """Why Kafka refuses a group's configs (INVALID_CONFIG), or None."""
    for key, value in configs.items():
        if key == AUTO_OFFSET_RESET:
            if value.lower() not in ("earliest", "latest") and by_duration_ms(value) is None:
                return f"Invalid value {value} for configuration {key}"
        elif key == RECORD_LOCK_DURATION:
            low = config.share_group_min_record_lock_duration_ms
            high = config.share_group_max_record_lock_duration_ms
            if not (value.strip().lstrip("-").isdigit() and low <= int(value) <= high):
                return f"{key} must be an integer between {low} and {high}, not {value}"
        else:
            return f"Unknown group config name: {key}"
    return None
