"""The cluster itself: its id, brokers and controller; each broker's log directories."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

from kafkawire.cluster import BrokerAddress, TopicPartition
from kafkawire.messages.describe_cluster import v2 as describe_cluster
from kafkawire.messages.describe_log_dirs import v4 as describe_log_dirs
from kafkawire.net import NoCommonVersionError

from ._base import AdminBase, raise_top_level
from .results import error_of

__all__ = ["ClusterDescription", "ClusterInfoMixin", "LogDirDescription"]

_DESCRIBE_CLUSTER = 60


@dataclass(frozen=True, slots=True)
class ClusterDescription:
    """The cluster as DescribeCluster (or Metadata) answers: its id, controller and brokers."""

    cluster_id: str | None
    controller_id: int
    """-1 when the cluster names none."""
    brokers: tuple[BrokerAddress, ...]


@dataclass(frozen=True, slots=True)
class LogDirDescription:
    """One log directory of a broker, as DescribeLogDirs answers."""

    path: str
    error: str | None
    """The error's name, where the directory is offline."""
    sizes: dict[TopicPartition, int]
    """Bytes of each partition kept there."""
    total_bytes: int
    """-1 where the broker does not say (before v4)."""
    usable_bytes: int


class ClusterInfoMixin(AdminBase):
    async def describe_cluster(self) -> ClusterDescription:
        """The cluster's id, controller and brokers: from DescribeCluster, or from Metadata
        where a broker lacks DescribeCluster (as Kafka's Java admin client falls back)."""
        try:
            response = await self._send(describe_cluster.DescribeClusterRequest())
        except NoCommonVersionError as error:
            if error.api_key != _DESCRIBE_CLUSTER:
                raise
            metadata = await self._cluster.refresh_metadata([])
            return ClusterDescription(
                metadata.cluster_id,
                metadata.controller_id,
                tuple(metadata.brokers[n] for n in sorted(metadata.brokers)),
            )
        raise_top_level(response)
        return ClusterDescription(
            response.cluster_id,
            response.controller_id,
            tuple(
                BrokerAddress(b.broker_id, b.host, b.port, b.rack)
                for b in sorted(response.brokers, key=lambda b: b.broker_id)
            ),
        )

    async def describe_log_dirs(
        self, brokers: Iterable[int] | None = None
    ) -> dict[int, list[LogDirDescription]]:
        """Each broker's log directories (every broker's, for ``None``) and what they hold."""
        nodes = list((await self._cluster.metadata()).brokers) if brokers is None else list(brokers)
        request = describe_log_dirs.DescribeLogDirsRequest(topics=None)
        responses = await asyncio.gather(*(self._send(request, node_id=n) for n in nodes))
        described = {}
        for node, response in zip(nodes, responses, strict=True):
            raise_top_level(response)
            described[node] = [
                LogDirDescription(
                    path=d.log_dir,
                    error=None if (e := error_of(d)) is None else type(e).__name__,
                    sizes={
                        TopicPartition(t.name, p.partition_index): p.partition_size
                        for t in d.topics
                        for p in t.partitions
                    },
                    total_bytes=getattr(d, "total_bytes", -1),
                    usable_bytes=getattr(d, "usable_bytes", -1),
                )
                for d in response.results
            ]
        return described
