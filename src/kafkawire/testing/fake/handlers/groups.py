"""The group APIs: handed to the cluster's group coordinator with the receiving node's id."""

from __future__ import annotations

from typing import Any

from kafkawire.testing.fake.call import Call

__all__ = ["handle"]


async def handle(call: Call) -> Any:
    return await call.services.groups.handle(call.request, call.node_id)
