"""The cluster layer: bootstrap, metadata cache, one connection per broker, routing, retries."""

from .backoff import Backoff
from .cluster import Cluster, RoutingError, parse_bootstrap
from .metadata import BrokerAddress, ClusterMetadata, PartitionMetadata, TopicMetadata

__all__ = [
    "Backoff",
    "BrokerAddress",
    "Cluster",
    "ClusterMetadata",
    "PartitionMetadata",
    "RoutingError",
    "TopicMetadata",
    "parse_bootstrap",
]
