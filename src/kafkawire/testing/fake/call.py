"""One request on its way through a fake broker: what it is, where it came in, and its answer.

The handler's answer is computed at most once (:meth:`Call.answer`), whether a hook asks for it
to edit it or the broker asks for it to send it: a handler's effects (records appended, a
transaction ended) happen once per request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from kafkawire.messages import APIS
from kafkawire.protocol import RequestHeader

if TYPE_CHECKING:
    from .services import Services
    from .state import ClusterState

__all__ = ["Call", "Handler"]

Handler = Callable[["Call"], Awaitable[Any]]


class Call:
    def __init__(
        self,
        services: Services,
        *,
        node_id: int,
        connection_id: int,
        client_host: str,
        header: RequestHeader,
        request: Any,
        handler: Handler,
    ) -> None:
        self.services = services
        self.node_id = node_id
        self.connection_id = connection_id
        self.client_host = client_host
        self.header = header
        self.request = request
        self._handler = handler
        self._answered = False
        self._answer: Any = None

    @property
    def state(self) -> ClusterState:
        return self.services.state

    @property
    def api_key(self) -> int:
        return int(self.header.request_api_key)

    @property
    def version(self) -> int:
        return int(self.header.request_api_version)

    @property
    def api_name(self) -> str:
        return APIS[self.api_key].name

    async def answer(self) -> Any:
        """The handler's response (None: no answer, as for a Produce with acks 0)."""
        if not self._answered:
            self._answer = await self._handler(self)
            self._answered = True
        return self._answer
