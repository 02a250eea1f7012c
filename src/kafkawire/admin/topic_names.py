"""Kafka's rules for topic names (its ``Topic.validate``): 1 to 249 characters of ASCII
letters, digits, ``.``, ``_`` and ``-``, and neither ``.`` nor ``..``."""

from __future__ import annotations

import re

__all__ = ["MAX_TOPIC_NAME_LENGTH", "topic_name_problem"]

MAX_TOPIC_NAME_LENGTH = 249
"""The longest topic name Kafka allows."""
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")


def topic_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a topic's name, or ``None`` when it can."""
    if not name:
        return "a topic name cannot be empty"
    if name in (".", ".."):
        return f"a topic cannot be named {name!r}"
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        return (
            f"topic name {name[:20]!r}... is {len(name)} characters long,"
            f" more than {MAX_TOPIC_NAME_LENGTH}"
        )
    if not _LEGAL.fullmatch(name):
        return (
            f"topic name {name!r} has a character other than ASCII letters, digits,"
            " '.', '_' and '-'"
        )
    return None
