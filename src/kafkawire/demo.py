"""``make demo``: the embedded broker, a topic, a few records produced and fetched back.

Runs against ``KAFKAWIRE_BOOTSTRAP`` when that is set, else starts Tansu on a loopback port and
stops it again on the way out (also on errors and Ctrl-C).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator

import kafkawire
from kafkawire.client import KafkaClient
from kafkawire.messages import APIS
from kafkawire.testing import TansuBroker

TOPIC = "kafkawire-demo"
RECORDS = [(f"user-{i}".encode(), f"clicked button {i}".encode()) for i in range(5)]
_SHOWN_APIS = (0, 1, 2, 3, 19)  # Produce, Fetch, ListOffsets, Metadata, CreateTopics


@contextlib.asynccontextmanager
async def _broker() -> AsyncIterator[str]:
    external = os.environ.get("KAFKAWIRE_BOOTSTRAP")
    if external:
        print(f"using the broker at {external} (KAFKAWIRE_BOOTSTRAP)")
        yield external
        return
    async with TansuBroker() as tansu:
        pid = tansu.pid
        print(f"started {tansu.name} at {tansu.bootstrap} (pid {pid})")
        yield tansu.bootstrap
    print(f"stopped the broker (pid {pid})")


async def main() -> None:
    print(f"kafkawire {kafkawire.__version__} demo")
    async with _broker() as bootstrap, KafkaClient(bootstrap) as client:
        conn = await client.cluster.any_connection()
        versions = ", ".join(f"{APIS[key].name} v{conn.version_for(key)}" for key in _SHOWN_APIS)
        print(f"negotiated {versions}")
        await client.create_topic(TOPIC, partitions=1, exist_ok=True)
        print(f"created topic {TOPIC!r} with 1 partition")
        first = await client.produce(TOPIC, 0, RECORDS)
        last = first + len(RECORDS) - 1
        print(f"produced {len(RECORDS)} records in one batch at offsets {first}-{last}")
        fetched = [r async for r in client.records(TOPIC, 0, first, stop_at_end=True)]
        print(f"fetched {len(fetched)} records back:")
        for record in fetched:
            key = (record.key or b"").decode()
            print(f"  offset {record.offset}  {key}: {(record.value or b'').decode()}")
        if [(r.key, r.value) for r in fetched] != RECORDS:
            sys.exit("the records fetched back differ from those produced")


if __name__ == "__main__":
    asyncio.run(main())
