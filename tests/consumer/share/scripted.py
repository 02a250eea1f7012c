"""Scripted share answers on the fake cluster: a hook that answers a member's acknowledgements
with a partition error of the test's choosing, as a broker whose share state refused them (the
records stay acquired), keeping the broker's share session in step with the member's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafkawire.testing.fake import FakeCluster, HookContext
from kafkawire.testing.fake.build import build, has, nested, part, response_class

__all__ = ["RefusedAcks", "carries_acks", "refuse_acks"]


def carries_acks(request: Any) -> bool:
    """Whether a ShareFetch or ShareAcknowledge carries acknowledgements."""
    return any(p.acknowledgement_batches for t in request.topics for p in t.partitions)


@dataclass
class RefusedAcks:
    """What the hook refused (each request), and how many more it refuses."""

    left: int
    refused: list[Any] = field(default_factory=list)


def refuse_acks(
    cluster: FakeCluster,
    api_key: int,
    code: int,
    *,
    times: int = 1_000_000,
    leader: tuple[int, int] | None = None,
) -> RefusedAcks:
    """Answer the next ``times`` requests of ``api_key`` (ShareFetch 78 or ShareAcknowledge
    79) that carry acknowledgements with ``code`` for each of their partitions, applying
    nothing; ``leader`` (node, epoch) is the hint of a NOT_LEADER_OR_FOLLOWER answer."""
    script = RefusedAcks(times)

    def hook(request: Any, ctx: HookContext) -> Any:
        if script.left <= 0 or request.share_session_epoch <= 0 or not carries_acks(request):
            return None
        script.left -= 1
        script.refused.append(request)
        shares = ctx.cluster.services.shares
        cache = shares.sessions[ctx.node_id]
        session = cache.current((request.group_id, request.member_id), request.share_session_epoch)
        cache.advance(session)  # the broker took the request: its epoch moves on
        return _answer(ctx, request, code, leader)

    cluster.control(hook, api_key=api_key, keep=True)
    return script


def _answer(ctx: HookContext, request: Any, code: int, leader: tuple[int, int] | None) -> Any:
    cls = response_class(ctx.api_key, ctx.api_version)
    topic_cls = part(cls, "responses")
    partition_cls = part(topic_cls, "partitions")
    fetching = has(partition_cls, "acquired_records")
    hint: dict[str, int] = {}
    if leader is not None:
        hint = {"leader_id": leader[0], "leader_epoch": leader[1]}
    # A ShareFetch answers acknowledgements in their own code, a ShareAcknowledge in its one.
    codes = {"acknowledge_error_code" if fetching else "error_code": code}
    topics = tuple(
        build(
            topic_cls,
            topic_id=topic.topic_id,
            partitions=tuple(
                build(
                    partition_cls,
                    partition_index=p.partition_index,
                    current_leader=nested(partition_cls, "current_leader", **hint),
                    **codes,
                )
                for p in topic.partitions
            ),
        )
        for topic in request.topics
    )
    endpoints: tuple[Any, ...] = ()
    if leader is not None:
        broker = ctx.cluster.state.brokers[leader[0]]
        endpoint_cls = part(cls, "node_endpoints")
        endpoints = (build(endpoint_cls, node_id=leader[0], host=broker.host, port=broker.port),)
    return build(cls, responses=topics, node_endpoints=endpoints)
