"""``cluster.requests``: every request the fake's brokers received, in order, for assertions.

Requests are logged as they are decoded, before any hook or handler, so a request a hook cut
or dropped is in the log too. ``wait_for`` lets a test wait for a request instead of sleeping.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from kafkawire.messages import APIS
from kafkawire.protocol import RequestHeader

from .changes import Changes

__all__ = ["ReceivedRequest", "RequestLog"]

_API_KEYS = {info.name: key for key, info in APIS.items()}


@dataclass(frozen=True, slots=True)
class ReceivedRequest:
    """One request a broker of the fake cluster received, with its header and decoded body."""

    node_id: int
    connection_id: int
    header: RequestHeader
    request: Any

    @property
    def api_key(self) -> int:
        """The request's API key."""
        return int(self.header.request_api_key)

    @property
    def api_version(self) -> int:
        """The request's version."""
        return int(self.header.request_api_version)

    @property
    def api_name(self) -> str:
        """Kafka's name of the request's API (``"Fetch"``)."""
        return APIS[self.api_key].name


def api_key_of(api: int | str) -> int:
    """An API key from the key itself or Kafka's name of the API (``"Fetch"``)."""
    if isinstance(api, int):
        return api
    try:
        return _API_KEYS[api]
    except KeyError:
        raise ValueError(f"no Kafka API is named {api!r}") from None


class RequestLog(Sequence[ReceivedRequest]):
    """Every request the cluster received, in order (``cluster.requests``): a sequence, with
    :meth:`of` to pick one API and :meth:`wait_for` to wait for requests rather than sleep."""

    def __init__(self) -> None:
        self._entries: list[ReceivedRequest] = []
        self._changes = Changes()

    def append(self, entry: ReceivedRequest) -> None:
        """Log ``entry`` (the brokers do) and wake whoever waits for it."""
        self._entries.append(entry)
        self._changes.notify()

    @overload
    def __getitem__(self, index: int) -> ReceivedRequest: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ReceivedRequest]: ...

    def __getitem__(self, index: int | slice) -> ReceivedRequest | Sequence[ReceivedRequest]:
        return self._entries[index]

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[ReceivedRequest]:
        return iter(self._entries)

    def of(self, api: int | str, *, node_id: int | None = None) -> list[ReceivedRequest]:
        """The requests of one API (by key or name), optionally to one broker only."""
        key = api_key_of(api)
        return [
            e
            for e in self._entries
            if e.api_key == key and (node_id is None or e.node_id == node_id)
        ]

    def clear(self) -> None:
        """Forget every request logged so far."""
        self._entries.clear()

    async def wait_for(
        self,
        api: int | str,
        count: int = 1,
        *,
        where: Callable[[Any], bool] | None = None,
        timeout: float = 5.0,
    ) -> list[ReceivedRequest]:
        """The requests of ``api`` (those whose body ``where`` accepts, if given) once there
        are at least ``count``; TimeoutError after ``timeout`` seconds, naming what was
        received."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len(found := self._matching(api, where)) < count:
            left = deadline - loop.time()
            if left <= 0:
                which = "" if where is None else " matching"
                raise TimeoutError(
                    f"{len(found)}{which} {api} request(s) received in {timeout} s, not {count}"
                )
            await self._changes.wait(left)
        return found

    def _matching(
        self, api: int | str, where: Callable[[Any], bool] | None
    ) -> list[ReceivedRequest]:
        return [e for e in self.of(api) if where is None or where(e.request)]
