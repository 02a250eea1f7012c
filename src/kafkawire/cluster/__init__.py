"""The cluster layer: bootstrap, metadata cache, connections per broker and purpose, routing,
retries, and the settings they share."""

from ._pool import ConnectionFactory
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
