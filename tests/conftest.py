"""Shared pytest set-up for kafkawire's tests.

The broker fixtures (``tansu_broker``, ``mock_cluster``, ``kafka_broker``) come from the same
plugin that users of ``kafkawire.testing`` load.

Hypothesis budgets, by ``KAFKAWIRE_HYPOTHESIS_PROFILE``: ``kafkawire`` (the default, what `make
test` and CI run) gives each property a modest budget, since the round trips alone run once per
generated class (about 700) and per decoder; ``quick`` (`make check`, the loop while
developing) runs a few examples of each, enough to catch a broken codec in seconds. Tests that
set ``max_examples`` themselves keep it in both.
"""

import os

from hypothesis import HealthCheck, settings

pytest_plugins = ["kafkawire.testing.pytest_plugin"]

settings.register_profile(
    "kafkawire",
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("quick", settings.get_profile("kafkawire"), max_examples=3)
settings.load_profile(os.environ.get("KAFKAWIRE_HYPOTHESIS_PROFILE", "kafkawire"))
