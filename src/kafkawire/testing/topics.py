"""Fresh topics for tests, on any broker: the fake cluster, an embedded one, or another.

``await fresh_topic(broker, partitions)`` creates a topic no other test uses and returns its
name. ``broker`` is anything with a ``bootstrap`` (a :class:`FakeCluster`, the ``Broker`` of
the ``tansu_broker`` and ``mock_cluster`` fixtures); how the topic is made depends on what it
serves:

- a :class:`FakeCluster`: created directly, with the partitions asked;
- a broker that serves CreateTopics v5+: created with it (replication factor 1);
- one that does not (librdkafka's mock cluster): created by asking Metadata for it with
  auto-creation, so it gets the broker's default partition count (the mock's is 4; tests that
  count partitions there ask for 4), and waited for until every partition has a leader.

Like the rest of :mod:`kafkawire.testing`, it talks to brokers with the protocol layer only.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from typing import Protocol

from kafkawire.messages.metadata import v8 as metadata_v8

from .capabilities import BrokerCapabilities
from .fake import FakeCluster
from .raw import api_versions, create_topic, parse_bootstrap, send_request

__all__ = ["HasBootstrap", "fresh_topic", "topic_name"]

_CREATE_TOPICS, _FIRST_CREATE_TOPICS = 19, 5
_counter = itertools.count()


class HasBootstrap(Protocol):
    @property
    def bootstrap(self) -> str: ...


def topic_name(prefix: str = "kafkawire") -> str:
    """A topic name no other test of this run (or of another process) uses."""
    return f"{prefix}-{os.getpid()}-{next(_counter)}"


async def fresh_topic(
    broker: HasBootstrap, partitions: int = 1, *, prefix: str = "kafkawire", timeout: float = 10.0
) -> str:
    """Create a new topic on ``broker`` (module docstring); its name."""
    name = topic_name(prefix)
    if isinstance(broker, FakeCluster):
        broker.create_topic(name, partitions)
    elif await _serves_create_topics(broker):
        await create_topic(broker.bootstrap, name, partitions=partitions, timeout=timeout)
    else:
        await _auto_create(broker.bootstrap, name, timeout)
    return name


async def _serves_create_topics(broker: HasBootstrap) -> bool:
    capabilities = getattr(broker, "capabilities", None)
    if isinstance(capabilities, BrokerCapabilities):
        return capabilities.missing("CreateTopics", _FIRST_CREATE_TOPICS) is None
    versions = await api_versions(parse_bootstrap(broker.bootstrap)[0])
    served = versions.get(_CREATE_TOPICS)
    return served is not None and served.max_version >= _FIRST_CREATE_TOPICS


async def _auto_create(bootstrap: str, name: str, timeout: float) -> None:
    """Ask Metadata (v8: not flexible, which the mock cluster writes wrong) for the topic
    until it exists with a leader for every partition."""
    request = metadata_v8.MetadataRequest(
        topics=(metadata_v8.MetadataRequestTopic(name=name),), allow_auto_topic_creation=True
    )
    address = parse_bootstrap(bootstrap)[0]
    async with asyncio.timeout(timeout):
        while True:
            response = await send_request(address, request, timeout=timeout)
            (topic,) = response.topics
            if topic.error_code == 0 and all(p.leader_id >= 0 for p in topic.partitions):
                return
            await asyncio.sleep(0.05)
