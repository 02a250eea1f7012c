"""Shared pytest set-up for kafkawire's tests.

The broker fixtures (``tansu_broker``, ``mock_cluster``, ``kafka_broker``) come from the same
plugin that users of ``kafkawire.testing`` load.
"""

pytest_plugins = ["kafkawire.testing.pytest_plugin"]
