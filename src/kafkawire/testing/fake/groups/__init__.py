"""The fake cluster's group coordinator: a stub that serves no API.

The fake routes every request whose API key is in :attr:`GroupCoordinator.API_KEYS` to the one
coordinator of the cluster, with the node id that received it (the coordinator answers
NOT_COORDINATOR where ``cluster.coordinator_for(group_id)`` is another node). This stub serves
none, so the group APIs are not advertised; the full coordinator (classic groups, KIP-848, the
offset APIs) replaces this module with the same interface.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kafkawire.testing.fake.config import FakeConfig
from kafkawire.testing.fake.view import ClusterView

__all__ = ["GroupCoordinator"]


class GroupCoordinator:
    API_KEYS: ClassVar[frozenset[int]] = frozenset()

    def __init__(self, cluster: ClusterView, config: FakeConfig) -> None:
        self.cluster = cluster
        self.config = config

    async def handle(self, request: Any, node_id: int) -> Any:
        """The response to ``request`` at its version (never called: no API is served)."""
        raise NotImplementedError(f"the stub group coordinator serves no {type(request).__name__}")

    def commit_offsets(
        self, group_id: str, offsets: Mapping[tuple[str, int], tuple[int, int, str | None]]
    ) -> None:
        """Offsets a transaction committed (TxnOffsetCommit, at EndTxn commit): dropped here."""

    def close(self) -> None:
        """Cancel the coordinator's timers (it has none)."""
