"""Topics: create, delete, list, describe (by name or topic id), add partitions."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kafkawire.errors import (
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    KafkawireError,
    UnknownTopicOrPartitionError,
)
from kafkawire.messages.create_partitions import v3 as create_partitions
from kafkawire.messages.create_topics import v7 as create_topics
from kafkawire.messages.delete_topics import v6 as delete_topics
from kafkawire.messages.metadata import v12 as metadata

from ._base import AdminBase
from .results import ItemResults, error_of, unanswered
from .topic_names import topic_name_problem

__all__ = ["CreatedTopic", "NewTopic", "PartitionDescription", "TopicDescription", "TopicsMixin"]

_NO_TOPIC_ID = uuid.UUID(int=0)


@dataclass(frozen=True, slots=True)
class NewTopic:
    """A topic to create. ``-1`` partitions or replication factor: the broker's default.

    ``create_topics`` refuses, for this topic alone, a name against Kafka's rules
    (:func:`~kafkawire.admin.topic_name_problem`) and counts below 1 other than -1.
    """

    name: str
    partitions: int = -1
    replication_factor: int = -1
    configs: Mapping[str, str] = field(default_factory=dict)
    assignments: Mapping[int, Sequence[int]] | None = None
    """Partition -> replica broker ids, instead of a partition count and replication factor."""


@dataclass(frozen=True, slots=True)
class CreatedTopic:
    """What the broker says it created (or would create, with ``validate_only``)."""

    name: str
    topic_id: uuid.UUID | None
    partitions: int  # -1 where the broker's version of CreateTopics does not say (before v5)
    replication_factor: int
    configs: dict[str, str | None]


@dataclass(frozen=True, slots=True)
class PartitionDescription:
    """One partition of a described topic: its leader, replicas and in-sync replicas."""

    partition: int
    leader: int
    """-1 while no leader is elected."""
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TopicDescription:
    """A topic as the cluster's metadata describes it."""

    name: str
    topic_id: uuid.UUID | None
    internal: bool
    partitions: tuple[PartitionDescription, ...]


class TopicsMixin(AdminBase):
    async def create_topics(
        self, topics: Iterable[NewTopic], *, validate_only: bool = False
    ) -> ItemResults[str, CreatedTopic]:
        """Create ``topics`` (on the controller); each topic's result or error, by name.

        With ``validate_only`` the broker checks the request and creates nothing.
        """
        wanted = list(topics)
        # As Java's admin client refuses a name it cannot send: that topic fails, alone.
        results: dict[str, CreatedTopic | KafkawireError] = {
            t.name: refused for t in wanted if (refused := _refused(t)) is not None
        }
        sent = [t for t in wanted if t.name not in results]
        if results and not sent:  # all refused (an empty call is still sent: it probes)
            return ItemResults(results)
        request = create_topics.CreateTopicsRequest(
            topics=tuple(_creatable(t) for t in sent),
            timeout_ms=self._operation_timeout_ms,
            validate_only=validate_only,
        )
        response = await self._send_to_controller(request)
        answers = {a.name: a for a in response.topics}
        for topic in sent:
            answer = answers.get(topic.name)
            results[topic.name] = (
                unanswered(f"topic {topic.name!r}", response)
                if answer is None
                else error_of(answer) or _created(answer)
            )
        if not validate_only:
            self._cluster.mark_metadata_stale()
        return ItemResults(results)

    async def delete_topics(
        self, topics: Iterable[str | uuid.UUID]
    ) -> ItemResults[str | uuid.UUID, None]:
        """Delete topics named by name or by topic id; each one's outcome, as asked."""
        wanted = list(topics)
        request = delete_topics.DeleteTopicsRequest(
            topics=tuple(
                delete_topics.DeleteTopicState(topic_id=t)
                if isinstance(t, uuid.UUID)
                else delete_topics.DeleteTopicState(name=t)
                for t in wanted
            ),
            timeout_ms=self._operation_timeout_ms,
        )
        response = await self._send_to_controller(request)
        answers: dict[str | uuid.UUID, KafkawireError | None] = {}
        for answer in response.responses:
            error = error_of(answer)
            for key in (answer.name, getattr(answer, "topic_id", None)):
                if key is not None and key != _NO_TOPIC_ID:
                    answers[key] = error
        self._cluster.mark_metadata_stale()
        return ItemResults(
            {t: answers[t] if t in answers else unanswered(f"topic {t}", response) for t in wanted}
        )

    async def list_topics(self, *, internal: bool = False) -> list[str]:
        """The names of every topic, sorted; Kafka's internal topics only with ``internal``."""
        described = await self._metadata(None)
        return sorted(
            {t.name for t in described.values() if t.name and (internal or not t.is_internal)}
        )

    async def describe_topics(
        self, topics: Iterable[str | uuid.UUID]
    ) -> ItemResults[str | uuid.UUID, TopicDescription]:
        """Partitions, leaders and replicas of topics named by name or by topic id (Metadata
        v10+ for ids); each topic's description or error, as asked."""
        wanted = list(topics)
        answers = await self._metadata(wanted)
        results: dict[str | uuid.UUID, TopicDescription | KafkawireError] = {}
        for key in wanted:
            answer = answers.get(key)
            if answer is None:
                results[key] = UnknownTopicOrPartitionError(f"topic {key} is not in the metadata")
            else:
                results[key] = error_of(answer) or _described(answer)
        return ItemResults(results)

    async def create_partitions(
        self,
        counts: Mapping[str, int],
        *,
        assignments: Mapping[str, Sequence[Sequence[int]]] | None = None,
        validate_only: bool = False,
    ) -> ItemResults[str, None]:
        """Grow each topic to ``counts[topic]`` partitions (optionally placing the new ones on
        ``assignments[topic]``: one list of broker ids per new partition)."""
        placed = assignments or {}
        request = create_partitions.CreatePartitionsRequest(
            topics=tuple(
                create_partitions.CreatePartitionsTopic(
                    name=name,
                    count=count,
                    assignments=tuple(
                        create_partitions.CreatePartitionsAssignment(broker_ids=tuple(b))
                        for b in placed[name]
                    )
                    if name in placed
                    else None,
                )
                for name, count in counts.items()
            ),
            timeout_ms=self._operation_timeout_ms,
            validate_only=validate_only,
        )
        response = await self._send_to_controller(request)
        answers = {a.name: error_of(a) for a in response.results}
        if not validate_only:
            self._cluster.mark_metadata_stale()
        return ItemResults(
            {
                name: answers[name] if name in answers else unanswered(f"topic {name!r}", response)
                for name in counts
            }
        )

    async def _metadata(
        self, topics: Sequence[str | uuid.UUID] | None
    ) -> dict[str | uuid.UUID, metadata.MetadataResponseTopic]:
        """A Metadata answer's topics, by name and by id; every topic for ``None``."""
        request = metadata.MetadataRequest(
            topics=None
            if topics is None
            else tuple(
                metadata.MetadataRequestTopic(topic_id=t)
                if isinstance(t, uuid.UUID)
                else metadata.MetadataRequestTopic(name=t)
                for t in topics
            ),
            allow_auto_topic_creation=False,
        )
        response = await self._send(request)
        found: dict[str | uuid.UUID, metadata.MetadataResponseTopic] = {}
        for topic in response.topics:
            topic_id = getattr(topic, "topic_id", _NO_TOPIC_ID)
            if topic_id != _NO_TOPIC_ID:
                found[topic_id] = topic
            if topic.name is not None:
                found[topic.name] = topic
        return found


def _refused(topic: NewTopic) -> KafkawireError | None:
    """The error a broker would answer for a topic no broker may create, found before sending:
    a name against Kafka's rules, or a partition count or replication factor below 1 that is
    not -1 (the broker's default)."""
    problem = topic_name_problem(topic.name)
    if problem is not None:
        return InvalidTopicError(problem)
    if topic.assignments:
        return None  # the broker takes the partitions and replicas from the assignments
    if topic.partitions < 1 and topic.partitions != -1:
        return InvalidPartitionsError(
            f"topic {topic.name!r}: partitions must be at least 1, or -1 for the broker's"
            f" default, not {topic.partitions}"
        )
    if topic.replication_factor < 1 and topic.replication_factor != -1:
        return InvalidReplicationFactorError(
            f"topic {topic.name!r}: the replication factor must be at least 1, or -1 for the"
            f" broker's default, not {topic.replication_factor}"
        )
    return None


def _creatable(topic: NewTopic) -> create_topics.CreatableTopic:
    return create_topics.CreatableTopic(
        name=topic.name,
        num_partitions=-1 if topic.assignments else topic.partitions,
        replication_factor=-1 if topic.assignments else topic.replication_factor,
        assignments=tuple(
            create_topics.CreatableReplicaAssignment(partition_index=p, broker_ids=tuple(b))
            for p, b in (topic.assignments or {}).items()
        ),
        configs=tuple(
            create_topics.CreatableTopicConfig(name=k, value=v) for k, v in topic.configs.items()
        ),
    )


def _created(answer: create_topics.CreatableTopicResult) -> CreatedTopic:
    topic_id = getattr(answer, "topic_id", _NO_TOPIC_ID)
    return CreatedTopic(
        name=answer.name,
        topic_id=None if topic_id == _NO_TOPIC_ID else topic_id,
        partitions=getattr(answer, "num_partitions", -1),
        replication_factor=getattr(answer, "replication_factor", -1),
        configs={c.name: c.value for c in getattr(answer, "configs", None) or ()},
    )


def _described(answer: metadata.MetadataResponseTopic) -> TopicDescription:
    topic_id = getattr(answer, "topic_id", _NO_TOPIC_ID)
    return TopicDescription(
        name=answer.name or "",
        topic_id=None if topic_id == _NO_TOPIC_ID else topic_id,
        internal=getattr(answer, "is_internal", False),
        partitions=tuple(
            PartitionDescription(
                partition=p.partition_index,
                leader=p.leader_id,
                leader_epoch=getattr(p, "leader_epoch", -1),
                replicas=tuple(p.replica_nodes),
                isr=tuple(p.isr_nodes),
                offline_replicas=tuple(getattr(p, "offline_replicas", ())),
            )
            for p in sorted(answer.partitions, key=lambda p: p.partition_index)
        ),
    )
