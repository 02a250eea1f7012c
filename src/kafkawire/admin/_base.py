"""What every part of the admin client shares: the cluster, and how requests reach a broker.

Routing follows Kafka's Java admin client:

- ``any``: the request's class says so (``__route__``); the cluster picks the best broker.
- ``controller``: CreateTopics, DeleteTopics and CreatePartitions go to the broker the
  metadata names as controller (a KRaft broker forwards them to the real controller); a
  cluster that names none gets them on any broker. The call is retried as one unit, so a
  controller that moved is looked up again.
- ``coordinator``: group-routed requests name one group each, and the cluster finds its
  coordinator.
- ``leader``: partition requests (ListOffsets, DeleteRecords) are split into one request per
  leader (see :mod:`.offsets`).

Every request is built at the newest version kafkawire knows and sent with
``negotiate=True``: the cluster converts it to the highest version the broker serves, and a
broker without the API raises :class:`~kafkawire.net.NoCommonVersionError` naming the API,
the broker and both version ranges.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from kafkawire.cluster import Cluster
from kafkawire.errors import KafkawireError
from kafkawire.messages import RequestMessage, ResponseMessage

from .results import ItemResults, error_of, unanswered

__all__ = ["AdminBase", "raise_top_level"]

V = TypeVar("V")


class AdminBase:
    """The cluster and the send helpers the admin mix-ins build on."""

    _cluster: Cluster
    _operation_timeout_ms: int

    async def _send(self, request: RequestMessage[Any], **options: Any) -> Any:
        """``request`` at the highest version both sides support, where it belongs."""
        return await self._cluster.send(request, negotiate=True, **options)

    async def _each_group(
        self,
        group_ids: Iterable[str],
        request_for: Callable[[str], RequestMessage[Any]],
        answers_of: Callable[[Any], Iterable[Any]],
        read: Callable[[Any], V],
    ) -> ItemResults[str, V]:
        """One request per group, each to its coordinator at once: each group's answer (found
        among ``answers_of(response)`` by its ``group_id``) read, or that group's error."""
        wanted = list(dict.fromkeys(group_ids))

        async def one(group_id: str) -> V | KafkawireError:
            try:
                response = await self._send(request_for(group_id))
            except KafkawireError as error:
                return error
            answer = next((a for a in answers_of(response) if a.group_id == group_id), None)
            if answer is None:
                return unanswered(f"group {group_id!r}", response)
            return error_of(answer) or read(answer)

        return ItemResults(dict(zip(wanted, await asyncio.gather(*map(one, wanted)), strict=True)))

    async def _send_to_controller(self, request: RequestMessage[Any]) -> Any:
        """``request`` to the controller named in the metadata, retried as one call."""
        cluster = self._cluster

        async def attempt() -> Any:
            metadata = await cluster.metadata()
            node = metadata.controller_id if metadata.controller_id in metadata.brokers else None
            response = await self._send(request, node_id=node, retry=False)
            raise_top_level(response)
            return response

        return await cluster.call(
            type(request).__name__, attempt, forget=lambda _: cluster.mark_metadata_stale()
        )


def raise_top_level(response: ResponseMessage) -> None:
    """Raise the error a response's top-level ``error_code`` names, if any."""
    error = error_of(response) if getattr(response, "error_code", 0) else None
    if error is not None:
        raise error
