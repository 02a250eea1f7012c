"""Which broker coordinates each group and transactional id, as FindCoordinator said.

Rules:

- A coordinator is looked up once (FindCoordinator to any broker, within one bounded call) and
  remembered until an error says it may have moved: a coordinator error code
  (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE) or failing to reach it. Then it is forgotten
  and the next request looks it up again.
- Groups (``key_type`` 0) and transactional ids (1) are cached apart: the same name may be
  both, coordinated by different brokers.
"""

from __future__ import annotations

from kafkawire.net import Connection

from ._deadline import Deadlines
from ._metadata_cache import MetadataCache
from ._own_requests import FIND_COORDINATOR, coordinator_of, find_coordinator_request
from ._routing import GROUP
from ._search import BrokerSearch

__all__ = ["CoordinatorCache"]


class CoordinatorCache:
    """Coordinators by ``(key_type, key)``."""

    def __init__(self, search: BrokerSearch, metadata: MetadataCache, deadlines: Deadlines) -> None:
        self._search = search
        self._metadata = metadata
        self._deadlines = deadlines
        self._nodes: dict[tuple[int, str], int] = {}

    async def node_for(self, key: str, key_type: int = GROUP) -> int:
        """The node id coordinating ``key`` (a group id, or a transactional id)."""
        cached = self._nodes.get((key_type, key))
        if cached is not None:
            return cached
        async with self._deadlines.bounded("FindCoordinator", self._deadlines.deadline()):
            node_id, _ = await self._search.first_answer(
                self._metadata.current, lambda conn: self._find(conn, key, key_type)
            )
        self._nodes[(key_type, key)] = node_id
        return node_id

    def forget(self, key: tuple[int, str]) -> None:
        """Look ``key``'s coordinator up again next time."""
        self._nodes.pop(key, None)

    async def _find(self, conn: Connection, key: str, key_type: int) -> int:
        request = find_coordinator_request(conn.version_for(FIND_COORDINATOR), key, key_type)
        return coordinator_of(await conn.send(request, timeout=self._deadlines.timeout()))
