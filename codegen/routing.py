"""Where each request goes: a fact the schemas do not hold, kept here as generator input.

The generator writes it onto every request class as ``__route__`` so the cluster layer routes
by data, not by a lookup table of its own:

- ``leader``: the leader of the partitions named in the request;
- ``group``: the coordinator of the group the request names (FindCoordinator, key type 0);
- ``transaction``: the coordinator of the transactional id (FindCoordinator, key type 1);
- ``every``: each broker answers for itself (list the union);
- ``internal``: sent between brokers and controllers, never by clients (the schema lists no
  ``broker`` listener), or between brokers: the share-group state APIs go from a
  share-partition's leader to the share coordinator (FindCoordinator key type 2), which clients
  never look up;
- ``any``: any broker will do (the default for APIs brokers serve).
"""

from __future__ import annotations

ROUTES: dict[str, str] = {
    "Produce": "leader",
    "Fetch": "leader",
    "ListOffsets": "leader",
    "OffsetForLeaderEpoch": "leader",
    "DeleteRecords": "leader",
    "ShareFetch": "leader",
    "ShareAcknowledge": "leader",
    "JoinGroup": "group",
    "SyncGroup": "group",
    "Heartbeat": "group",
    "LeaveGroup": "group",
    "OffsetCommit": "group",
    "OffsetFetch": "group",
    "OffsetDelete": "group",
    "DescribeGroups": "group",
    "DeleteGroups": "group",
    "TxnOffsetCommit": "group",
    "ConsumerGroupHeartbeat": "group",
    "ConsumerGroupDescribe": "group",
    "ShareGroupHeartbeat": "group",
    "ShareGroupDescribe": "group",
    # The group coordinator owns share-group offsets and streams groups too (Kafka's
    # GroupCoordinatorService serves them; its admin client finds them by group id).
    "DescribeShareGroupOffsets": "group",
    "AlterShareGroupOffsets": "group",
    "DeleteShareGroupOffsets": "group",
    "StreamsGroupHeartbeat": "group",
    "StreamsGroupDescribe": "group",
    "InitProducerId": "transaction",
    "AddPartitionsToTxn": "transaction",
    "AddOffsetsToTxn": "transaction",
    "EndTxn": "transaction",
    "ListGroups": "every",
    "DescribeLogDirs": "every",
    "DescribeProducers": "leader",
    # Listed with a broker listener, yet only brokers send them, to the share coordinator.
    "InitializeShareGroupState": "internal",
    "ReadShareGroupState": "internal",
    "WriteShareGroupState": "internal",
    "DeleteShareGroupState": "internal",
    "ReadShareGroupStateSummary": "internal",
}


def route(api: str, listeners: list[str] | None) -> str:
    if api in ROUTES:
        return ROUTES[api]
    if listeners is not None and "broker" not in listeners:
        return "internal"
    return "any"
