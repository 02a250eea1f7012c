"""The group APIs: handed to the cluster's group coordinator with the receiving node's id and
the client's id and host (they name members in their ids and in DescribeGroups)."""

from __future__ import annotations

from typing import Any

from kafkawire.testing.fake.call import Call

__all__ = ["handle"]


async def handle(call: Call) -> Any:
    return await call.services.groups.handle(
        call.request,
        call.node_id,
        client_id=getattr(call.header, "client_id", None) or "",  # header v0 has none
        client_host=call.client_host,
    )
