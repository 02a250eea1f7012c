"""The admin client: one object over one cluster, its parts one module per concern.

:class:`Admin` is the union of the parts' mix-ins (topics, configs, groups, group offsets,
share groups, partition offsets, cluster and log dirs, ACLs, SCRAM credentials), which share one
:class:`~kafkawire.cluster.Cluster` and its connections.
"""

from __future__ import annotations

from collections.abc import Sequence

from typing_extensions import Unpack

from kafkawire.cluster import Cluster, ConnectionFactory
from kafkawire.cluster.java_settings import build_settings

from .acls import AclsMixin
from .cluster_info import ClusterInfoMixin
from .configs import ConfigsMixin
from .group_offsets import GroupOffsetsMixin
from .groups import GroupsMixin
from .scram import ScramMixin
from .settings import AdminOptions, AdminSettings
from .share_groups import ShareGroupsMixin
from .topics import TopicsMixin

__all__ = ["Admin"]


class Admin(
    TopicsMixin,
    ConfigsMixin,
    GroupsMixin,
    GroupOffsetsMixin,
    ShareGroupsMixin,
    ClusterInfoMixin,
    AclsMixin,
    ScramMixin,
):
    """``async with Admin("host:9092") as admin: await admin.list_topics()``.

    Options are :class:`AdminSettings`' (the Java client's names), as keyword arguments or as
    ``settings``. ``connect`` replaces how connections open (for tests).
    """

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str] | None = None,
        *,
        settings: AdminSettings | None = None,
        connect: ConnectionFactory | None = None,
        **options: Unpack[AdminOptions],
    ) -> None:
        settings = build_settings(AdminSettings, "Admin", bootstrap_servers, settings, options)
        self.settings = settings
        self._operation_timeout_ms = settings.operation_timeout_ms
        self._cluster = Cluster(
            settings.bootstrap_servers,
            settings.client_settings(call_timeout_ms=settings.default_api_timeout_ms),
            connect=connect,
            metrics=settings.metrics_registry(),
            metric_group_prefix="admin-client",
        )

    async def __aenter__(self) -> Admin:
        await self._cluster.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._cluster.close()

    def metrics(self) -> dict[str, dict[str, float]]:
        """The admin client's metrics now, ``{group: {name: value}}``, with the names of
        Kafka's Java admin client: ``admin-client-metrics`` (``connection-creation-rate``,
        ``-total``, ``connection-count``) and each broker's request latencies
        (``admin-client-node-metrics,node-id=node-1``); see
        :meth:`kafkawire.producer.Producer.metrics`."""
        return self._cluster.metrics.as_dict()

    @property
    def cluster(self) -> Cluster:
        """The cluster this client talks to (for raw requests: ``admin.cluster.send(...)``)."""
        return self._cluster
