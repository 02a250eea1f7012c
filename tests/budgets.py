"""Hypothesis budgets, by ``KAFKAWIRE_HYPOTHESIS_PROFILE`` (tests/conftest.py loads it):

- ``kafkawire``, the default (`make test`, CI): 12 examples for a property that names no
  budget, and ``examples(n)`` gives a property that names one its ``n``;
- ``quick`` (`make check`, the loop while developing): a quarter of each, at least one: enough
  to catch a broken codec or assignor in seconds;
- ``thorough`` (by hand, after a change to codegen, the codecs, the records or the assignors:
  ``KAFKAWIRE_HYPOTHESIS_PROFILE=thorough .venv/bin/python -m pytest tests/protocol ...``):
  eight times the default's.

The properties over every generated class (about 750 of them) run once per group of classes (an
API's requests or responses at every version: ``tests/protocol/catalog.py``), each example
drawing one message of every class of the group, with a small budget (``examples(6)``,
``examples(3)``): every class and version is covered in every profile, and each run draws new
examples.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

__all__ = ["PROFILE", "examples", "register_profiles"]

PROFILE = os.environ.get("KAFKAWIRE_HYPOTHESIS_PROFILE", "kafkawire")
_DEFAULT_EXAMPLES = 12
_SCALE = {"kafkawire": 1.0, "quick": 0.25, "thorough": 8.0}


def register_profiles() -> None:
    base = settings(
        max_examples=_DEFAULT_EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    for name, scale in _SCALE.items():
        settings.register_profile(name, base, max_examples=examples(_DEFAULT_EXAMPLES, scale))


def examples(n: int, scale: float | None = None) -> int:
    """The budget of a property worth ``n`` examples under the default profile, in the profile
    in use (or at ``scale``)."""
    if scale is None:
        if PROFILE not in _SCALE:
            raise ValueError(
                f"KAFKAWIRE_HYPOTHESIS_PROFILE={PROFILE!r}: give one of {', '.join(_SCALE)}"
            )
        scale = _SCALE[PROFILE]
    return max(1, round(n * scale))
