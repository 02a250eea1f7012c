"""A topic the fake cluster creates once a client has asked Metadata for it a number of times:
a test that a client waits for a topic counts its requests rather than timing them (a loaded
machine asks fewer times before a deadline)."""

from __future__ import annotations

from typing import Any

from kafkawire.testing.fake import FakeCluster, HookContext

__all__ = ["LateTopic"]


class LateTopic:
    """``name`` (one partition) appears in ``cluster`` at the ``after``-th Metadata request
    that names it; ``asked`` counts those requests."""

    def __init__(self, cluster: FakeCluster, name: str, *, after: int = 3) -> None:
        self.name, self.after, self.asked = name, after, 0
        self._cluster = cluster
        cluster.control(self._count, api_key="Metadata", keep=True)

    def _count(self, request: Any, ctx: HookContext) -> None:
        if any(topic.name == self.name for topic in request.topics or ()):
            self.asked += 1
            if self.asked == self.after:
                self._cluster.create_topic(self.name, 1)
