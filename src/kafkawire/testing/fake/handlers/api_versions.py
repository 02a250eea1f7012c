"""ApiVersions: the API ranges the brokers serve (the version check itself is the connection's).

From v3 the client names its software; Kafka refuses names and versions outside its pattern
with INVALID_REQUEST and no API ranges.
"""

from __future__ import annotations

import re
from typing import Any

from kafkawire.testing.fake.build import build, part
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error

from .common import response_for

__all__ = ["handle"]

_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


async def handle(call: Call) -> Any:
    cls = response_for(call)
    request = call.request
    if call.version >= 3 and not all(
        _SOFTWARE.fullmatch(value)
        for value in (request.client_software_name, request.client_software_version)
    ):
        return build(cls, error_code=Error.INVALID_REQUEST)
    if call.version >= 3:  # what client metrics subscriptions match (KIP-714)
        call.services.telemetry.software[(call.node_id, call.connection_id)] = (
            request.client_software_name,
            request.client_software_version,
        )
    entry = part(cls, "api_keys")
    keys = tuple(
        build(entry, api_key=key, min_version=versions.start, max_version=versions.stop - 1)
        for key, versions in sorted(call.services.served.items())
        if versions
    )
    return build(cls, error_code=Error.NONE, api_keys=keys)
