"""The handler of each API the fake serves, and the versions each implements.

A handler is ``async def handle(call) -> response | None`` answering at ``call.version``;
group APIs go to the group coordinator (:mod:`.groups`). The versions served are these,
within the versions kafkawire has of each API, unless :class:`FakeConfig` overrides them.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkawire.testing.fake.call import Handler

from . import (
    api_versions,
    configs,
    coordinator,
    delete_records,
    fetch,
    groups,
    leader_epochs,
    list_offsets,
    metadata,
    produce,
    producer_ids,
    share_acknowledge,
    share_fetch,
    telemetry,
    topics,
    transactions,
)

__all__ = ["HANDLERS", "Served", "group_handler"]


@dataclass(frozen=True)
class Served:
    versions: range
    handler: Handler


_ALL = range(1 << 15)

HANDLERS: dict[int, Served] = {
    0: Served(range(3, 1 << 15), produce.handle),  # magic 2 batches only
    1: Served(range(4, 1 << 15), fetch.handle),  # from isolation levels on
    2: Served(range(1, 1 << 15), list_offsets.handle),  # one offset per partition
    3: Served(_ALL, metadata.handle),
    10: Served(_ALL, coordinator.handle),
    18: Served(_ALL, api_versions.handle),
    19: Served(_ALL, topics.create_topics),
    20: Served(_ALL, topics.delete_topics),
    21: Served(_ALL, delete_records.handle),
    22: Served(_ALL, producer_ids.handle),
    23: Served(_ALL, leader_epochs.handle),
    24: Served(_ALL, transactions.add_partitions),
    25: Served(_ALL, transactions.add_offsets),
    26: Served(_ALL, transactions.end_txn),
    28: Served(_ALL, transactions.txn_offset_commit),
    32: Served(_ALL, configs.handle),
    37: Served(_ALL, topics.create_partitions),
    44: Served(_ALL, configs.alter_incremental),
    71: Served(_ALL, telemetry.get_subscriptions),  # KIP-714, with FakeConfig.client_telemetry
    72: Served(_ALL, telemetry.push),
    78: Served(_ALL, share_fetch.handle),
    79: Served(_ALL, share_acknowledge.handle),
}

group_handler: Handler = groups.handle
