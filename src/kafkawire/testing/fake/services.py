"""What a handler reaches through its call: the shared state and the coordinators."""

from __future__ import annotations

from dataclasses import dataclass

from .fetch_sessions import FetchSessionCache
from .groups import GroupCoordinator
from .state import ClusterState
from .transactions import TransactionCoordinator

__all__ = ["Services"]


@dataclass
class Services:
    state: ClusterState
    transactions: TransactionCoordinator
    groups: GroupCoordinator
    fetch_sessions: dict[int, FetchSessionCache]  # one cache per broker, as in Kafka
    served: dict[int, range]  # the versions of each API the brokers serve
