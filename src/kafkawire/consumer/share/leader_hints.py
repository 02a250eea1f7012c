"""Following the leader a share answer names (KIP-951), as Java's ``ShareConsumeRequestManager``
does with ``Metadata.updatePartitionLeadership``.

Rules: a ShareFetch or ShareAcknowledge partition answered NOT_LEADER_OR_FOLLOWER or
FENCED_LEADER_EPOCH with a current leader hints where the partition went; the hints and the
answer's node endpoints go to the cluster's metadata
(:meth:`~kafkawire.cluster.Cluster.update_leaders`, which takes a hint only at a newer leader
epoch). A partition whose hint the metadata now agrees with (taken, or known already) needs no
refresh: it is fetched from that leader at once.
"""

from __future__ import annotations

import logging
from typing import Any

from kafkawire.cluster import BrokerAddress, Cluster, TopicPartition

from .session import PartitionId

__all__ = ["follow_leader_hints"]

_log = logging.getLogger(__name__)

_LEADER_MOVED = (6, 74)  # NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH: answered with a leader


def follow_leader_hints(
    cluster: Cluster, response: Any, names: dict[PartitionId, TopicPartition]
) -> set[TopicPartition]:
    """The partitions of ``response`` (named by ``names``) now led where it says, in
    ``cluster``'s metadata."""
    hints: dict[TopicPartition, tuple[int, int]] = {}
    for topic in response.responses:
        for data in topic.partitions:
            tp = names.get((topic.topic_id, data.partition_index))
            leader = data.current_leader
            if tp is not None and data.error_code in _LEADER_MOVED and leader.leader_id >= 0:
                hints[tp] = (leader.leader_id, leader.leader_epoch)
    if not hints:
        return set()
    brokers = [BrokerAddress(e.node_id, e.host, e.port, e.rack) for e in response.node_endpoints]
    moved = cluster.update_leaders(hints, brokers)
    metadata = cluster.current_metadata
    for tp, (leader, _) in hints.items():
        topic = metadata.topics.get(tp.topic) if metadata is not None else None
        known = topic.partitions.get(tp.partition) if topic is not None else None
        if known is not None and known.leader_id == leader:
            moved.add(tp)
    if moved:
        _log.info("share partitions moved to the leaders the broker named: %s", sorted(moved))
    return moved
