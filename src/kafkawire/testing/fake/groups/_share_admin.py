"""The share-group APIs of administrators, as Kafka's coordinator answers them:
ShareGroupDescribe (v0-1), DescribeShareGroupOffsets (v0-1), AlterShareGroupOffsets (v0) and
DeleteShareGroupOffsets (v0).

- Each group: INVALID_GROUP_ID for an empty id, NOT_COORDINATOR where another node
  coordinates it, GROUP_ID_NOT_FOUND for a group that does not exist or is not a share group.
- ShareGroupDescribe: epochs, the assignor (``simple``), each member's subscription and
  assignment (topic ids with their names).
- DescribeShareGroupOffsets: each partition's start offset, the leader epoch its state was
  loaded at, and (v1, KIP-1226) its lag; with no topics named, every partition the group has
  state for. A partition named without state answers -1 for all three; a topic that does
  not exist, UNKNOWN_TOPIC_OR_PARTITION.
- AlterShareGroupOffsets and DeleteShareGroupOffsets need an empty group (NON_EMPTY_GROUP),
  answer UNKNOWN_TOPIC_OR_PARTITION for partitions or topics that do not exist, and move the
  group epoch on. Altering sets the start offset and forgets what was in flight; deleting
  forgets the topic's state, so the next fetch starts by ``share.auto.offset.reset``.

The partitions' state is the share partitions' (:class:`~kafkawire.testing.fake.view
.ShareStateView`). No authorizer: the authorized operations asked for are every group one.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping

from kafkawire.errors import (
    BrokerError,
    InvalidGroupIdError,
    InvalidRequestError,
    NonEmptyGroupError,
    NotCoordinatorError,
    UnknownTopicOrPartitionError,
)
from kafkawire.messages.alter_share_group_offsets import v0 as alter
from kafkawire.messages.delete_share_group_offsets import v0 as delete
from kafkawire.messages.describe_share_group_offsets import v1 as offsets
from kafkawire.messages.share_group_describe import v1 as sgd
from kafkawire.testing.fake.view import ShareStateView

from ._admin import GROUP_OPERATIONS, OMITTED_OPERATIONS, Coordinates, named_assignment
from ._groups import Groups
from ._share_assignor import SIMPLE
from ._share_group import ShareGroup

__all__ = ["ShareAdmin"]

_NO_OFFSET = -1
Topics = Callable[[], Mapping[str, tuple[uuid.UUID, int]]]


class ShareAdmin:
    """Describe share groups; describe, alter and delete their start offsets."""

    def __init__(self, groups: Groups, shares: ShareStateView, topics: Topics) -> None:
        self._groups = groups
        self._shares = shares
        self._topics = topics

    def _group(self, group_id: str, coordinates: Coordinates) -> ShareGroup:
        if not group_id:
            raise InvalidGroupIdError("The group id is empty.")
        if not coordinates(group_id):
            raise NotCoordinatorError(f"this node does not coordinate {group_id}")
        return self._groups.share(group_id, create=False)

    # -- ShareGroupDescribe -------------------------------------------------------------------

    def describe(
        self, group_ids: Iterable[str], with_operations: bool, coordinates: Coordinates
    ) -> sgd.ShareGroupDescribeResponse:
        return sgd.ShareGroupDescribeResponse(
            groups=tuple(self._describe(g, with_operations, coordinates) for g in group_ids)
        )

    def _describe(
        self, group_id: str, with_operations: bool, coordinates: Coordinates
    ) -> sgd.DescribedGroup:
        try:
            group = self._group(group_id, coordinates)
        except BrokerError as error:
            return sgd.DescribedGroup(
                group_id=group_id, error_code=error.code, error_message=error.message
            )
        topics = self._topics()
        return sgd.DescribedGroup(
            group_id=group_id,
            group_state=group.state.value,
            group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            assignor_name=SIMPLE,
            members=tuple(
                sgd.Member(
                    member_id=m.member_id,
                    rack_id=m.rack_id,
                    member_epoch=m.member_epoch,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    subscribed_topic_names=tuple(sorted(m.subscribed_topic_names)),
                    assignment=named_assignment(sgd, m.assigned, topics),
                )
                for m in group.members.values()
            ),
            authorized_operations=GROUP_OPERATIONS if with_operations else OMITTED_OPERATIONS,
        )

    # -- DescribeShareGroupOffsets ------------------------------------------------------------

    def describe_offsets(
        self, request: offsets.DescribeShareGroupOffsetsRequest, coordinates: Coordinates
    ) -> offsets.DescribeShareGroupOffsetsResponse:
        return offsets.DescribeShareGroupOffsetsResponse(
            groups=tuple(self._describe_offsets(g, coordinates) for g in request.groups)
        )

    def _describe_offsets(
        self, asked: offsets.DescribeShareGroupOffsetsRequestGroup, coordinates: Coordinates
    ) -> offsets.DescribeShareGroupOffsetsResponseGroup:
        try:
            self._group(asked.group_id, coordinates)
        except BrokerError as error:
            return offsets.DescribeShareGroupOffsetsResponseGroup(
                group_id=asked.group_id, error_code=error.code, error_message=error.message
            )
        topics = self._topics()
        names = {topic_id: name for name, (topic_id, _) in topics.items()}
        known = self._shares.share_start_offsets(asked.group_id)
        wanted: dict[str, list[int]] = {}
        if asked.topics is None:
            for topic_id, index in sorted(known, key=lambda k: (names.get(k[0], ""), k[1])):
                if topic_id in names:
                    wanted.setdefault(names[topic_id], []).append(index)
        else:
            for topic in asked.topics:
                wanted.setdefault(topic.topic_name, []).extend(topic.partitions)
        answered = []
        for name, indexes in wanted.items():
            topic_id = topics[name][0] if name in topics else uuid.UUID(int=0)
            rows = []
            for index in indexes:
                state = known.get((topic_id, index))
                if name not in topics:
                    rows.append(
                        offsets.DescribeShareGroupOffsetsResponsePartition(
                            partition_index=index,
                            start_offset=_NO_OFFSET,
                            leader_epoch=_NO_OFFSET,
                            error_code=UnknownTopicOrPartitionError.code,
                            error_message=f"Topic {name} does not exist.",
                        )
                    )
                    continue
                rows.append(
                    offsets.DescribeShareGroupOffsetsResponsePartition(
                        partition_index=index,
                        start_offset=state.start_offset if state else _NO_OFFSET,
                        leader_epoch=state.leader_epoch if state else _NO_OFFSET,
                        lag=state.lag if state else _NO_OFFSET,
                    )
                )
            answered.append(
                offsets.DescribeShareGroupOffsetsResponseTopic(
                    topic_name=name, topic_id=topic_id, partitions=tuple(rows)
                )
            )
        return offsets.DescribeShareGroupOffsetsResponseGroup(
            group_id=asked.group_id, topics=tuple(answered)
        )

    # -- AlterShareGroupOffsets ---------------------------------------------------------------

    def alter_offsets(
        self, request: alter.AlterShareGroupOffsetsRequest, coordinates: Coordinates
    ) -> alter.AlterShareGroupOffsetsResponse:
        try:
            group = self._empty_group(request.group_id, coordinates)
        except BrokerError as error:
            return alter.AlterShareGroupOffsetsResponse(
                error_code=error.code, error_message=error.message
            )
        topics = self._topics()
        answered = []
        chosen: dict[tuple[uuid.UUID, int], int] = {}
        for topic in request.topics:
            topic_id, count = topics.get(topic.topic_name, (uuid.UUID(int=0), 0))
            rows = []
            for asked in topic.partitions:
                refused: BrokerError | None = None
                if not 0 <= asked.partition_index < count:
                    refused = UnknownTopicOrPartitionError(
                        f"{topic.topic_name}-{asked.partition_index} does not exist."
                    )
                elif asked.start_offset < 0:
                    refused = InvalidRequestError(
                        f"start offset {asked.start_offset} of {topic.topic_name}-"
                        f"{asked.partition_index} is negative"
                    )
                else:
                    chosen[(topic_id, asked.partition_index)] = asked.start_offset
                rows.append(
                    alter.AlterShareGroupOffsetsResponsePartition(
                        partition_index=asked.partition_index,
                        error_code=refused.code if refused else 0,
                        error_message=refused.message if refused else None,
                    )
                )
            answered.append(
                alter.AlterShareGroupOffsetsResponseTopic(
                    topic_name=topic.topic_name, topic_id=topic_id, partitions=tuple(rows)
                )
            )
        if chosen:
            self._shares.set_share_start_offsets(group.group_id, chosen)
            group.group_epoch += 1
        return alter.AlterShareGroupOffsetsResponse(responses=tuple(answered))

    # -- DeleteShareGroupOffsets --------------------------------------------------------------

    def delete_offsets(
        self, request: delete.DeleteShareGroupOffsetsRequest, coordinates: Coordinates
    ) -> delete.DeleteShareGroupOffsetsResponse:
        try:
            group = self._empty_group(request.group_id, coordinates)
        except BrokerError as error:
            return delete.DeleteShareGroupOffsetsResponse(
                error_code=error.code, error_message=error.message
            )
        topics = self._topics()
        answered = []
        deleted = set()
        for topic in request.topics:
            if topic.topic_name not in topics:
                answered.append(
                    delete.DeleteShareGroupOffsetsResponseTopic(
                        topic_name=topic.topic_name,
                        error_code=UnknownTopicOrPartitionError.code,
                        error_message=f"Topic {topic.topic_name} does not exist.",
                    )
                )
                continue
            topic_id = topics[topic.topic_name][0]
            deleted.add(topic_id)
            answered.append(
                delete.DeleteShareGroupOffsetsResponseTopic(
                    topic_name=topic.topic_name, topic_id=topic_id
                )
            )
        if deleted:
            self._shares.delete_share_states(group.group_id, deleted)
            group.group_epoch += 1
        return delete.DeleteShareGroupOffsetsResponse(responses=tuple(answered))

    def _empty_group(self, group_id: str, coordinates: Coordinates) -> ShareGroup:
        group = self._group(group_id, coordinates)
        if not group.is_empty():
            raise NonEmptyGroupError(f"share group {group_id} has members")
        return group
