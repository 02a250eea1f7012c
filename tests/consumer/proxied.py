"""Members whose connections go through the loopback fault proxy (tests/net/proxy.py), and
what that proxy sees of them."""

from __future__ import annotations

from typing import Any

from kafkawire.consumer import Consumer
from kafkawire.net import Connection
from kafkawire.testing.pytest_plugin import Broker
from tests.net.proxy import Proxy

from .helpers import FAST

FIND_COORDINATOR, JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP = 10, 11, 12, 13, 14


class Cutter:
    """Arms ``proxy`` to cut, once, the connection carrying the next request of one API when
    the answer to it arrives (the answer is dropped); ``seen`` lists the API keys of the
    requests that passed, ``cut_at`` the index of the one whose answer is cut (None until
    then)."""

    def __init__(self, proxy: Proxy) -> None:
        self.seen: list[int] = []
        self.cut_at: int | None = None
        self._armed: int | None = None
        self._skip = 0
        proxy.watch = self._watch

    def arm(self, api_key: int, *, skip: int = 0) -> None:
        """Cut after the next request of ``api_key``, or after ``skip`` more of them."""
        self._armed, self._skip = api_key, skip

    def _watch(self, api_key: int) -> bool:
        self.seen.append(api_key)
        if api_key != self._armed:
            return False
        if self._skip:
            self._skip -= 1
            return False
        self._armed = None
        self.cut_at = len(self.seen) - 1
        return True

    def after_cut(self) -> list[int]:
        assert self.cut_at is not None, "nothing was cut"
        return self.seen[self.cut_at + 1 :]

    def check_sent_again_after_finding_the_coordinator(self, api_key: int) -> None:
        """Java's rule: a lost coordinator connection is a lost coordinator."""
        after = self.after_cut()
        assert api_key in after, f"API {api_key} was not sent again after the cut: {after}"
        assert FIND_COORDINATOR in after[: after.index(api_key)], after


def through(proxy: Proxy, topic: str, group: str, **options: Any) -> Consumer:
    """A member whose every connection goes through ``proxy``."""

    async def connect(host: str, _: int) -> Connection:
        return await Connection.open(host, proxy.port, connect_timeout=5)

    return Consumer(
        topic,
        bootstrap_servers=f"127.0.0.1:{proxy.port}",
        connect=connect,
        group_id=group,
        **FAST | options,
    )


def port_of(broker: Broker) -> int:
    return int(broker.bootstrap.rsplit(":", 1)[1])
