"""The admin client: one object over one cluster, its parts one module per concern.

:class:`Admin` is the union of the parts' mix-ins (topics, configs, groups, group offsets,
share groups, partition offsets, cluster and log dirs, ACLs, SCRAM credentials), which share one
:class:`~kafkawire.cluster.Cluster` and its connections.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from typing_extensions import Unpack

from kafkawire.client.observability import Observable
from kafkawire.cluster import Cluster, ConnectionFactory
from kafkawire.cluster.java_settings import build_settings
from kafkawire.cluster.supervisor import Supervisor
from kafkawire.operations.telemetry import TelemetryReporter

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

_log = logging.getLogger(__name__)


class Admin(
    TopicsMixin,
    ConfigsMixin,
    GroupsMixin,
    GroupOffsetsMixin,
    ShareGroupsMixin,
    ClusterInfoMixin,
    AclsMixin,
    ScramMixin,
    Observable,
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
        client = f"admin client {settings.client_id}"
        self._tasks = Supervisor(client, log=_log)  # the metrics push (KIP-714), if enabled
        self._telemetry = TelemetryReporter(
            self._cluster,
            client=client,
            enabled=settings.enable_metrics_push,
            wait=settings.default_api_timeout_ms / 1000,
        )

    async def __aenter__(self) -> Admin:
        await self._cluster.__aenter__()
        self._telemetry.start(self._tasks)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Send the last metrics push (KIP-714) and close every connection; calls still in
        flight end with ``ClientClosedError``."""
        await self._telemetry.close(self.settings.request_timeout_ms / 1000)  # the last push
        await self._tasks.close()
        await self._cluster.close()

    @property
    def cluster(self) -> Cluster:
        """The cluster this client talks to (for raw requests: ``admin.cluster.send(...)``)."""
        return self._cluster
