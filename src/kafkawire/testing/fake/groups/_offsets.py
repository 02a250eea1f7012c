"""Committed offsets: OffsetCommit (v0-10), OffsetFetch (v0-10), OffsetDelete (v0), and the
offsets of transactions, as Kafka's coordinator keeps them.

- A commit names topics that must exist (else UNKNOWN_TOPIC_OR_PARTITION; by topic id from
  v10, UNKNOWN_TOPIC_ID) and is checked against the group: a group that does not exist is
  created as a "simple" group by a commit without a generation (the admin client, a consumer
  that assigns itself), and otherwise is GROUP_ID_NOT_FOUND (v9+) or ILLEGAL_GENERATION. A
  classic group checks member and generation (an Empty group takes commits without either;
  CompletingRebalance answers REBALANCE_IN_PROGRESS), a KIP-848 group member and epoch
  (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH; its members must use v9+). A commit restarts a
  classic member's session when the group is Stable or preparing a rebalance.
- Each offset keeps its leader epoch and metadata (metadata past 4096 characters is
  OFFSET_METADATA_TOO_LARGE). A fetch answers -1 for what was never committed; from v8 it
  takes several groups, and from v9 a KIP-848 member's id and epoch, checked like a commit's.
  With ``require_stable`` (v7+), a partition an open transaction has committed an offset to
  (TxnOffsetCommit before EndTxn; ``ClusterView.pending_transactional_offsets``) is answered
  UNSTABLE_OFFSET_COMMIT with offset -1, as Kafka's ``OffsetMetadataManager`` answers it.
- OffsetDelete refuses a classic group in use with another protocol than "consumer"
  (NON_EMPTY_GROUP) and each topic the group subscribes to (GROUP_SUBSCRIBED_TO_TOPIC).
- A share group has no committed offsets: OffsetCommit, OffsetFetch and OffsetDelete find no
  consumer group there (GROUP_ID_NOT_FOUND).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafkawire.errors import (
    BrokerError,
    GroupIdNotFoundError,
    GroupSubscribedToTopicError,
    IllegalGenerationError,
    NonEmptyGroupError,
    NotCoordinatorError,
    OffsetMetadataTooLargeError,
    UnknownTopicIdError,
    UnknownTopicOrPartitionError,
    UnstableOffsetCommitError,
)
from kafkawire.messages.offset_commit import v9 as commit9
from kafkawire.messages.offset_commit import v10 as commit10
from kafkawire.messages.offset_delete import v0 as delete0
from kafkawire.messages.offset_fetch import v7 as fetch7
from kafkawire.messages.offset_fetch import v9 as fetch9
from kafkawire.messages.offset_fetch import v10 as fetch10
from kafkawire.protocol.versions import convert
from kafkawire.testing.fake.view import ClusterView

from ._classic_group import CONSUMER_PROTOCOL_TYPE, ClassicGroup
from ._classic_rebalance import ClassicRebalance
from ._classic_state import ClassicGroupState
from ._groups import Group, Groups
from ._share_group import ShareGroup

__all__ = [
    "CommittedOffset",
    "OffsetRequests",
    "OffsetStore",
    "commit_response",
    "fetch_error_response",
]

# Kafka's offset.metadata.max.bytes default.
OFFSET_METADATA_MAX_SIZE = 4096
_GROUP_ID_NOT_FOUND_VERSION = 9
_BY_TOPIC_ID_VERSION = 10
_BATCHED_FETCH_VERSION = 8
_TOP_LEVEL_ERROR_VERSION = 2
_S = ClassicGroupState


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""


class OffsetStore:
    """Committed offsets by group, then (topic, partition)."""

    def __init__(self) -> None:
        self._by_group: dict[str, dict[tuple[str, int], CommittedOffset]] = {}

    def put(self, group_id: str, topic: str, partition: int, value: CommittedOffset) -> None:
        self._by_group.setdefault(group_id, {})[(topic, partition)] = value

    def get(self, group_id: str, topic: str, partition: int) -> CommittedOffset | None:
        return self._by_group.get(group_id, {}).get((topic, partition))

    def of_group(self, group_id: str) -> Mapping[tuple[str, int], CommittedOffset]:
        return self._by_group.get(group_id, {})

    def delete(self, group_id: str, topic: str, partition: int) -> None:
        self._by_group.get(group_id, {}).pop((topic, partition), None)

    def delete_group(self, group_id: str) -> None:
        self._by_group.pop(group_id, None)


# One partition of a request as the cluster knows it: (topic name or None, topic id, index).
_Named = tuple[str | None, uuid.UUID, int]


@dataclass(frozen=True, slots=True)
class _FetchGroup:
    group_id: str
    member_id: str | None
    member_epoch: int
    topics: Sequence[Any] | None  # the request's topic structs; None asks for all


class OffsetRequests:
    """The offset APIs of one coordinator."""

    def __init__(
        self,
        cluster: ClusterView,
        groups: Groups,
        rebalance: ClassicRebalance,
        store: OffsetStore,
    ) -> None:
        self._cluster = cluster
        self._groups = groups
        self._rebalance = rebalance
        self.store = store

    # -- names and ids ------------------------------------------------------------------------

    def _topics(self) -> tuple[Mapping[str, tuple[uuid.UUID, int]], dict[uuid.UUID, str]]:
        topics = self._cluster.topics()
        return topics, {topic_id: name for name, (topic_id, _) in topics.items()}

    def _partition_error(self, name: str | None, partition: int, by_id: bool) -> int:
        topics = self._cluster.topics()
        if name is None or name not in topics:
            return UnknownTopicIdError.code if by_id else UnknownTopicOrPartitionError.code
        if not 0 <= partition < topics[name][1]:
            return UnknownTopicOrPartitionError.code
        return 0

    # -- OffsetCommit -------------------------------------------------------------------------

    def commit(self, request: Any) -> Any:
        """The answer to an OffsetCommit of any version."""
        version: int = request.__version__
        by_id = version >= _BY_TOPIC_ID_VERSION
        _, names = self._topics()
        codes: dict[tuple[int, int], int] = {}
        valid: list[tuple[tuple[int, int], str, Any]] = []
        for t, topic in enumerate(request.topics):
            name = names.get(topic.topic_id) if by_id else topic.name
            for p, partition in enumerate(topic.partitions):
                codes[t, p] = self._partition_error(name, partition.partition_index, by_id)
                if codes[t, p] == 0 and name is not None:
                    valid.append(((t, p), name, partition))
        if valid:
            try:
                self._validate_commit(request, version)
            except BrokerError as error:
                codes.update((at, error.code) for at, _, _ in valid)
            else:
                codes.update(
                    (at, self._store_one(request.group_id, name, partition))
                    for at, name, partition in valid
                )
        return commit_response(request, codes)

    def _validate_commit(self, request: Any, version: int) -> None:
        generation: int = getattr(request, "generation_id_or_member_epoch", -1)
        member_id: str = getattr(request, "member_id", "")
        instance_id: str | None = getattr(request, "group_instance_id", None)
        group = self._groups.get(request.group_id)
        if group is None:
            if generation >= 0:
                if version >= _GROUP_ID_NOT_FOUND_VERSION:
                    raise GroupIdNotFoundError(f"Group {request.group_id} not found.")
                raise IllegalGenerationError(f"group {request.group_id} does not exist")
            group = self._groups.create_classic(request.group_id)
        if isinstance(group, ClassicGroup):
            member = group.validate_offset_commit(
                member_id, instance_id, generation, transactional=False
            )
            if member is not None and group.state in (_S.STABLE, _S.PREPARING_REBALANCE):
                self._rebalance.reschedule_heartbeat(group, member.member_id)
        else:
            group.validate_offset_commit(member_id, generation, version, transactional=False)

    def _store_one(self, group_id: str, topic: str, partition: Any) -> int:
        metadata: str | None = partition.committed_metadata
        if metadata is not None and len(metadata) > OFFSET_METADATA_MAX_SIZE:
            return OffsetMetadataTooLargeError.code
        self.store.put(
            group_id,
            topic,
            partition.partition_index,
            CommittedOffset(
                partition.committed_offset,
                getattr(partition, "committed_leader_epoch", -1),
                metadata,
            ),
        )
        return 0

    def validate_transactional(
        self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int
    ) -> int:
        """The error code Kafka answers a TxnOffsetCommit with for the group (0: fine)."""
        group = self._groups.get(group_id)
        try:
            if group is None:
                if generation_id >= 0:
                    raise IllegalGenerationError(f"group {group_id} does not exist")
            elif isinstance(group, ClassicGroup):
                group.validate_offset_commit(
                    member_id, group_instance_id, generation_id, transactional=True
                )
            else:
                group.validate_offset_commit(member_id, generation_id, 0, transactional=True)
        except BrokerError as error:
            return error.code
        return 0

    def commit_transactional(
        self, group_id: str, offsets: Mapping[tuple[str, int], tuple[int, int, str | None]]
    ) -> None:
        """Store the offsets of a committed transaction (a simple group if there is none)."""
        if self._groups.get(group_id) is None:
            self._groups.create_classic(group_id)
        for (topic, partition), (offset, leader_epoch, metadata) in offsets.items():
            self.store.put(
                group_id, topic, partition, CommittedOffset(offset, leader_epoch, metadata)
            )

    # -- OffsetFetch --------------------------------------------------------------------------

    def fetch(self, request: Any, coordinates: Callable[[str], bool]) -> Any:
        """The answer to an OffsetFetch of any version; ``coordinates`` tells whether the
        receiving node coordinates a group."""
        version: int = request.__version__
        if version >= _BATCHED_FETCH_VERSION:
            wanted = [
                _FetchGroup(
                    g.group_id,
                    getattr(g, "member_id", None),
                    getattr(g, "member_epoch", -1),
                    g.topics,
                )
                for g in request.groups
            ]
        else:
            wanted = [_FetchGroup(request.group_id, None, -1, request.topics)]
        stable: bool = getattr(request, "require_stable", False)
        answers = [self._fetch_group(g, version, stable, coordinates) for g in wanted]
        if version < _BATCHED_FETCH_VERSION and answers[0].error_code:
            # One group, failed: answered as the request's error (before v2, on each
            # partition asked for).
            return fetch_error_response(request, answers[0].error_code)
        return _fetch_response(answers, version)

    def _fetch_group(
        self, wanted: _FetchGroup, version: int, stable: bool, coordinates: Callable[[str], bool]
    ) -> Any:
        module = fetch10 if version >= _BY_TOPIC_ID_VERSION else fetch9
        try:
            if not coordinates(wanted.group_id):
                raise NotCoordinatorError(f"this node does not coordinate {wanted.group_id}")
            group = self._groups.get(wanted.group_id)
            if group is not None and not isinstance(group, ClassicGroup):
                group.validate_offset_fetch(wanted.member_id, wanted.member_epoch)
        except BrokerError as error:
            return module.OffsetFetchResponseGroup(group_id=wanted.group_id, error_code=error.code)
        by_id = version >= _BY_TOPIC_ID_VERSION
        topics, names = self._topics()
        partitions: list[_Named]
        if wanted.topics is None:
            partitions = [
                (topic, topics[topic][0] if topic in topics else uuid.UUID(int=0), p)
                for (topic, p) in sorted(self.store.of_group(wanted.group_id))
                if not by_id or topic in topics
            ]
        else:
            partitions = [
                (
                    names.get(t.topic_id) if by_id else t.name,
                    t.topic_id if by_id else uuid.UUID(int=0),
                    p,
                )
                for t in wanted.topics
                for p in t.partition_indexes
            ]
        pending = (
            self._cluster.pending_transactional_offsets(wanted.group_id) if stable else frozenset()
        )
        by_topic: dict[tuple[str | None, uuid.UUID], list[Any]] = {}
        for name, topic_id, p in partitions:
            by_topic.setdefault((name, topic_id), []).append(
                module.OffsetFetchResponsePartitions(
                    partition_index=p,
                    committed_offset=-1,
                    error_code=UnstableOffsetCommitError.code,
                )
                if (name, p) in pending
                else self._fetched(module, wanted.group_id, name, p, by_id)
            )
        return module.OffsetFetchResponseGroup(
            group_id=wanted.group_id,
            topics=tuple(
                _fetch_topic(module, name, topic_id, rows, by_id)
                for (name, topic_id), rows in by_topic.items()
            ),
        )

    def _fetched(self, module: Any, group_id: str, name: str | None, p: int, by_id: bool) -> Any:
        if name is None and by_id:
            return module.OffsetFetchResponsePartitions(
                partition_index=p, committed_offset=-1, error_code=UnknownTopicIdError.code
            )
        found = self.store.get(group_id, name or "", p)
        if found is None:
            return module.OffsetFetchResponsePartitions(partition_index=p, committed_offset=-1)
        return module.OffsetFetchResponsePartitions(
            partition_index=p,
            committed_offset=found.offset,
            committed_leader_epoch=found.leader_epoch,
            metadata=found.metadata,
        )

    # -- OffsetDelete -------------------------------------------------------------------------

    def delete(self, request: Any) -> Any:
        """The answer to an OffsetDelete."""
        group = self._groups.get(request.group_id)
        try:
            if group is None:
                raise GroupIdNotFoundError(f"Group {request.group_id} not found.")
            if isinstance(group, ShareGroup):
                raise GroupIdNotFoundError(f"Group {request.group_id} is not a consumer group.")
            _validate_offset_delete(group)
        except BrokerError as error:
            return convert(delete0.OffsetDeleteResponse(error_code=error.code), request.__version__)
        answered = []
        for topic in request.topics:
            subscribed = group.is_subscribed_to(topic.name)
            rows = []
            for partition in topic.partitions:
                code = self._partition_error(topic.name, partition.partition_index, False)
                if code == 0 and subscribed:
                    code = GroupSubscribedToTopicError.code
                if code == 0:
                    self.store.delete(request.group_id, topic.name, partition.partition_index)
                rows.append(
                    delete0.OffsetDeleteResponsePartition(
                        partition_index=partition.partition_index, error_code=code
                    )
                )
            answered.append(
                delete0.OffsetDeleteResponseTopic(name=topic.name, partitions=tuple(rows))
            )
        return convert(delete0.OffsetDeleteResponse(topics=tuple(answered)), request.__version__)


def _validate_offset_delete(group: Group) -> None:
    if isinstance(group, ClassicGroup):
        in_use = group.state in (_S.STABLE, _S.PREPARING_REBALANCE, _S.COMPLETING_REBALANCE)
        if in_use and group.protocol_type != CONSUMER_PROTOCOL_TYPE:
            raise NonEmptyGroupError(f"group {group.group_id} is in use")


def commit_response(request: Any, codes: Mapping[tuple[int, int], int], default: int = 0) -> Any:
    """The answer to an OffsetCommit, each partition with its code (by the topic's and the
    partition's position in the request; ``default`` for the rest), in the request's order."""
    version: int = request.__version__
    by_id = version >= _BY_TOPIC_ID_VERSION
    module: Any = commit10 if by_id else commit9
    answered = tuple(
        module.OffsetCommitResponseTopic(
            **({"topic_id": topic.topic_id} if by_id else {"name": topic.name}),
            partitions=tuple(
                module.OffsetCommitResponsePartition(
                    partition_index=partition.partition_index, error_code=codes.get((t, p), default)
                )
                for p, partition in enumerate(topic.partitions)
            ),
        )
        for t, topic in enumerate(request.topics)
    )
    return convert(module.OffsetCommitResponse(topics=answered), version)


def _fetch_topic(
    module: Any, name: str | None, topic_id: uuid.UUID, rows: list[Any], by_id: bool
) -> Any:
    if by_id:
        return module.OffsetFetchResponseTopics(topic_id=topic_id, partitions=tuple(rows))
    return module.OffsetFetchResponseTopics(name=name or "", partitions=tuple(rows))


def _fetch_response(answers: Sequence[Any], version: int) -> Any:
    """The groups' answers (v9 or v10 structs) as the OffsetFetch response of ``version``."""
    if version >= _BY_TOPIC_ID_VERSION:
        return fetch10.OffsetFetchResponse(groups=tuple(answers))
    if version >= _BATCHED_FETCH_VERSION:
        return convert(fetch9.OffsetFetchResponse(groups=tuple(answers)), version)
    return convert(_single_group(answers[0]), version)


def fetch_error_response(request: Any, code: int) -> Any:
    """An OffsetFetch answered only ``code``: on each group; before v2, which has no error
    for the whole request, on each partition asked for (as Kafka's getErrorResponse)."""
    version: int = request.__version__
    module: Any = fetch10 if version >= _BY_TOPIC_ID_VERSION else fetch9
    if version >= _BATCHED_FETCH_VERSION:
        answers = [
            module.OffsetFetchResponseGroup(group_id=g.group_id, error_code=code)
            for g in request.groups
        ]
    elif version >= _TOP_LEVEL_ERROR_VERSION:
        answers = [fetch9.OffsetFetchResponseGroup(group_id=request.group_id, error_code=code)]
    else:
        answers = [
            fetch9.OffsetFetchResponseGroup(
                group_id=request.group_id,
                topics=tuple(
                    fetch9.OffsetFetchResponseTopics(
                        name=t.name,
                        partitions=tuple(
                            fetch9.OffsetFetchResponsePartitions(
                                partition_index=p, committed_offset=-1, error_code=code
                            )
                            for p in t.partition_indexes
                        ),
                    )
                    for t in request.topics or ()
                ),
            )
        ]
    return _fetch_response(answers, version)


def _single_group(group: Any) -> fetch7.OffsetFetchResponse:
    """A v9 group answer in the one-group form of v0-7 (its error the response's)."""
    return fetch7.OffsetFetchResponse(
        error_code=group.error_code,
        topics=tuple(
            fetch7.OffsetFetchResponseTopic(
                name=t.name,
                partitions=tuple(
                    fetch7.OffsetFetchResponsePartition(
                        partition_index=p.partition_index,
                        committed_offset=p.committed_offset,
                        committed_leader_epoch=p.committed_leader_epoch,
                        metadata=p.metadata,
                        error_code=p.error_code,
                    )
                    for p in t.partitions
                ),
            )
            for t in group.topics
        ),
    )
