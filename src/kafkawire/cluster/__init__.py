"""The cluster layer: bootstrap, metadata cache, connections per broker and purpose, routing,
retries, and the settings they share.

What the clients are built on: applications use :mod:`kafkawire.client`, the producer, the
consumer and the admin client, whose options are the Java client's, in milliseconds
(:class:`ConnectionSettings` and the classes built on it), and reach a :class:`Cluster` through
them (``client.cluster``) for raw requests. :class:`ClientSettings` (seconds) and the keyword
options of ``Cluster(...)`` are this layer's own, built by each client."""

from ._pool import ConnectionFactory
from ._retry import CallTimeoutError
from .backoff import Backoff
from .cluster import (
    Cluster,
    InvalidPartitionError,
    RequestRefusedError,
    RoutingError,
    parse_bootstrap,
)
from .java_settings import ConnectionOptions, ConnectionSettings, build_settings
from .metadata import (
    BrokerAddress,
    ClusterMetadata,
    PartitionMetadata,
    TopicMetadata,
    TopicPartition,
)
from .security import SecurityOptions, SecuritySettings
from .settings import ClientOptions, ClientSettings, settings_from

__all__ = [
    "Backoff",
    "BrokerAddress",
    "CallTimeoutError",
    "ClientOptions",
    "ClientSettings",
    "Cluster",
    "ClusterMetadata",
    "ConnectionFactory",
    "ConnectionOptions",
    "ConnectionSettings",
    "InvalidPartitionError",
    "PartitionMetadata",
    "RequestRefusedError",
    "RoutingError",
    "SecurityOptions",
    "SecuritySettings",
    "TopicMetadata",
    "TopicPartition",
    "build_settings",
    "parse_bootstrap",
    "settings_from",
]
