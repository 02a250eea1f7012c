"""What a handler reaches through its call: the shared state, the coordinators, the share
partitions and the client metrics."""

from __future__ import annotations

from dataclasses import dataclass

from .fetch_sessions import FetchSessionCache
from .groups import GroupCoordinator
from .share import SharePartitions
from .state import ClusterState
from .telemetry import ClientMetrics
from .transactions import TransactionCoordinator

__all__ = ["Services"]


@dataclass
class Services:
    state: ClusterState
    transactions: TransactionCoordinator
    groups: GroupCoordinator
    fetch_sessions: dict[int, FetchSessionCache]  # one cache per broker, as in Kafka
    shares: SharePartitions  # share partitions, their locks, each broker's share sessions
    served: dict[int, range]  # the versions of each API the brokers serve
    telemetry: ClientMetrics  # client metrics subscriptions, instances and pushes (KIP-714)
