"""``KafkaClient``'s option names before it took Java's, kept for one release.

Until then ``KafkaClient`` took the cluster layer's names, times in seconds
(``request_timeout=5.0``). Each still works: it is checked as before (the same messages),
turned into its Java-named option in milliseconds (rounded up to a whole millisecond), and a
:class:`DeprecationWarning` names the new option and the change of unit. An old name given
with its new one is a ``TypeError``: one of them would be ignored.

The next release drops this module and :class:`LegacyClientOptions`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kafkawire.cluster import Backoff, ClientOptions, ClientSettings

__all__ = ["LegacyClientOptions", "translate_legacy_options"]


class LegacyClientOptions(ClientOptions, total=False):
    """The old keyword arguments (deprecated): the cluster layer's, and ``bootstrap``."""

    bootstrap: str | Sequence[str]


def _milliseconds(seconds: float) -> int:
    # round() first: 0.05 s is 50.00000000000001 ms in binary floating point, not 51.
    return math.ceil(round(seconds * 1000, 6))


def _backoff_ms(name: str, backoff: Backoff) -> tuple[int, int]:
    java = Backoff()
    if (backoff.multiplier, backoff.jitter) != (java.multiplier, java.jitter):
        raise ValueError(
            f"{name}: Backoff(multiplier={backoff.multiplier}, jitter={backoff.jitter}) has no "
            f"Java option (the Java client doubles, with {java.jitter:.0%} jitter); "
            "give its initial and maximum delays in milliseconds instead"
        )
    return _milliseconds(backoff.initial), _milliseconds(backoff.maximum)


# Old name -> (the new names, what the value becomes, the unit as the warning says it).
_SECONDS = "in milliseconds, not seconds"
_SAME = "the same value"
_LEGACY: dict[str, tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]], str]] = {
    "request_timeout": (("request_timeout_ms",), lambda s: (_milliseconds(s),), _SECONDS),
    "retry_timeout": (("default_api_timeout_ms",), lambda s: (_milliseconds(s),), _SECONDS),
    "connect_timeout": (
        ("socket_connection_setup_timeout_ms",),
        lambda s: (_milliseconds(s),),
        _SECONDS,
    ),
    "metadata_max_age": (("metadata_max_age_ms",), lambda s: (_milliseconds(s),), _SECONDS),
    "metadata_recovery_rebootstrap_trigger": (
        ("metadata_recovery_rebootstrap_trigger_ms",),
        lambda s: (_milliseconds(s),),
        _SECONDS,
    ),
    "backoff": (
        ("retry_backoff_ms", "retry_backoff_max_ms"),
        lambda b: _backoff_ms("backoff", b),
        "in milliseconds, not a Backoff in seconds",
    ),
    "reconnect_backoff": (
        ("reconnect_backoff_ms", "reconnect_backoff_max_ms"),
        lambda b: _backoff_ms("reconnect_backoff", b),
        "in milliseconds, not a Backoff in seconds",
    ),
    "max_frame_size": (("receive_message_max_bytes",), lambda n: (n,), _SAME),
    "ssl": (("ssl_context",), lambda c: (c,), _SAME),
    "bootstrap": (("bootstrap_servers",), lambda b: (b,), _SAME),
}


def translate_legacy_options(
    caller: str, options: Mapping[str, Any], *, stacklevel: int
) -> dict[str, Any]:
    """``options`` with each old name replaced by its new ones (see the module doc);
    ``stacklevel`` points the warnings at the user's call, counted from the caller."""
    old = [name for name in options if name in _LEGACY]
    if not old:
        return dict(options)
    # The old checks first, with their old messages: a bad value is refused before any warning.
    ClientSettings.from_options(caller, {n: options[n] for n in old if n != "bootstrap"})
    translated = {name: value for name, value in options.items() if name not in _LEGACY}
    for name in old:
        new_names, convert, unit = _LEGACY[name]
        doubled = [n for n in new_names if n in options]
        if doubled:
            raise TypeError(
                f"{caller}() got {name!r} and {doubled[0]!r}, the same option; "
                f"keep {doubled[0]!r} ({unit})"
            )
        translated.update(zip(new_names, convert(options[name]), strict=True))
    for name in old:  # once every value is known to translate
        new_names, _, unit = _LEGACY[name]
        warnings.warn(
            f"{caller}({name}=...) is deprecated and goes in the next release: "
            f"use {' and '.join(new_names)} ({unit})",
            DeprecationWarning,
            stacklevel=stacklevel + 1,
        )
    return translated
