"""The checks every client option goes through: one rule per kind of option, one message.

Each field of the settings classes (:class:`~kafkawire.cluster.ClientSettings`,
:class:`~kafkawire.cluster.ConnectionSettings` and the producer's, consumer's and admin's built
on it) names one of these as its attrs ``validator``. A bad value is refused on construction
with one line naming the option as the field is named (the Java client's name in snake_case),
what it takes and the value given::

    linger_ms must be an int >= 0, not 1.5
    compression_type must be one of 'none', 'gzip', 'snappy', 'lz4', 'zstd', not 'brotli'

A value of a type the option does not take raises ``TypeError``; a value of the right type that
is out of range or not one of the choices raises ``ValueError`` (Python's own rule, and what
attrs' validators raised before). Types are exact where Python's are loose: ``True`` is an int
to Python and ``"false"`` is truthy, so a bool is no int option's value and only a bool is a
bool option's.

A secret's value (a password, a JAAS line) is never shown: :func:`secret` makes a check whose
message names the value's type only.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from typing import Any

import attrs

__all__ = [
    "Check",
    "boolean",
    "function",
    "instance_of",
    "int_at_least",
    "integer",
    "non_empty_text",
    "not_negative",
    "not_negative_number",
    "one_of",
    "one_or_more",
    "optional",
    "optional_boolean",
    "optional_sasl_mechanism",
    "optional_ssl_context",
    "positive",
    "positive_number",
    "secret",
    "text",
]


def _anything(value: object) -> bool:
    return True


@attrs.frozen
class Check:
    """An attrs validator: ``wanted`` says what the option takes (in its error message),
    ``of_type`` whether a value has a type the option takes, ``in_range`` whether such a value
    is allowed."""

    wanted: str
    of_type: Callable[[object], bool]
    in_range: Callable[[Any], bool] = _anything
    hidden: bool = False  # a secret: its value stays out of the message

    def __call__(self, instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        self.check(attribute.name, value)

    def check(self, option: str, value: object) -> None:
        """Raise ``TypeError`` or ``ValueError`` naming ``option`` unless it may be ``value``
        (for converters, which attrs does not tell which option they convert)."""
        shown = repr(value)
        if self.hidden:
            shown = f"a value of type {type(value).__name__} (not shown: a secret)"
        if not self.of_type(value):
            raise TypeError(f"{option} must be {self.wanted}, not {shown}")
        if not self.in_range(value):
            raise ValueError(f"{option} must be {self.wanted}, not {shown}")


def secret(check: Check) -> Check:
    """``check``, for an option whose value must not appear in any message."""
    return attrs.evolve(check, hidden=True)


def optional(check: Check) -> Check:
    """``check``, or ``None``."""
    return Check(
        f"{check.wanted} or None",
        lambda value: value is None or check.of_type(value),
        lambda value: value is None or check.in_range(value),
    )


def instance_of(cls: type, wanted: str) -> Check:
    """An instance of ``cls`` (``wanted`` names it for the user)."""
    return Check(wanted, lambda value: isinstance(value, cls))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return _is_int(value) or isinstance(value, float)


integer = Check("an int", _is_int)
"""An int whose range depends on other options (checked with them)."""


def int_at_least(minimum: int) -> Check:
    return Check(f"an int >= {minimum}", _is_int, lambda value: value >= minimum)


positive = int_at_least(1)
"""A count, size or time in milliseconds that cannot be 0."""

not_negative = int_at_least(0)

# Times in seconds (the cluster layer's ClientSettings): an int or a float; NaN is in no range.
positive_number = Check("a number > 0", _is_number, lambda value: value > 0)
not_negative_number = Check("a number >= 0", _is_number, lambda value: value >= 0)

boolean = instance_of(bool, "True or False")
optional_boolean = Check(
    "True, False or None", lambda value: value is None or boolean.of_type(value)
)

text = instance_of(str, "a str")
non_empty_text = Check("a non-empty str", text.of_type, lambda value: value != "")
"""An id such as a group's or a transactional producer's: empty means nothing, so it is refused
(Java's ``NonEmptyString``); ``optional(non_empty_text)`` where leaving it out means none."""

function = Check("a callable", callable)


def one_of(*choices: object) -> Check:
    """Exactly one of ``choices``: their types only (``True`` is not 1, ``1.0`` not 1)."""
    types = {type(choice) for choice in choices}
    shown = ", ".join(repr(choice) for choice in choices)
    return Check(f"one of {shown}", lambda value: type(value) in types, choices.__contains__)


def one_or_more(check: Check) -> Check:
    """What ``check`` takes, or a non-empty list (or tuple) of them."""

    def of_type(value: object) -> bool:
        if isinstance(value, list | tuple):
            return all(check.of_type(item) for item in value)
        return check.of_type(value)

    def in_range(value: Any) -> bool:
        items = value if isinstance(value, list | tuple) else [value]
        return bool(items) and all(check.in_range(item) for item in items)

    return Check(f"{check.wanted}, or a non-empty list of them", of_type, in_range)


optional_ssl_context = optional(instance_of(ssl.SSLContext, "an ssl.SSLContext"))


def _is_sasl_mechanism(value: object) -> bool:
    # SaslMechanism is a Protocol (any object with a name and a start() will do), so its shape
    # is what is checked.
    return isinstance(getattr(value, "name", None), str) and callable(getattr(value, "start", None))


optional_sasl_mechanism = optional(
    Check("a SASL mechanism (kafkawire.net.Plain, Scram or OAuthBearer)", _is_sasl_mechanism)
)
