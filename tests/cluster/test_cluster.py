"""Routing, retries and caching of the cluster layer, against scripted fake brokers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from kafkawire.cluster import Backoff, Cluster, RoutingError, parse_bootstrap
from kafkawire.errors import (
    BrokerError,
    NotCoordinatorError,
    NotLeaderOrFollowerError,
    UnknownServerError,
)
from kafkawire.messages import APIS
from kafkawire.messages.add_partitions_to_txn import v5 as add_partitions_to_txn
from kafkawire.messages.describe_groups import v6 as describe_groups
from kafkawire.messages.fetch import v18 as fetch
from kafkawire.messages.find_coordinator import v6 as find_coordinator
from kafkawire.messages.heartbeat import v4 as heartbeat
from kafkawire.messages.init_producer_id import v5 as init_producer_id
from kafkawire.messages.list_groups import v5 as list_groups
from kafkawire.messages.list_offsets import v9 as list_offsets
from kafkawire.messages.metadata import v13 as metadata
from kafkawire.messages.offset_fetch import v10 as offset_fetch
from kafkawire.net.errors import ConnectError, RequestTimeoutError

FAST = Backoff(initial=0.001, maximum=0.002)

Handler = Callable[[int, Any], Any]


class FakeConnection:
    """Answers requests through ``handler(node_id, request)``; records what it was sent."""

    def __init__(self, node_id: int, handler: Handler, log: list[tuple[int, Any]]) -> None:
        self.node_id, self.handler, self.log = node_id, handler, log
        self.closed = False
        self.in_flight = 0
        self.peer = f"fake broker {node_id}"
        self.timeouts: list[float | None] = []

    def version_for(self, api_key: int) -> int:
        return APIS[api_key].versions[-1]

    async def send(self, request: Any, *, timeout: float | None = None) -> Any:
        self.log.append((self.node_id, request))
        self.timeouts.append(timeout)
        await asyncio.sleep(0)  # a real send yields to other tasks
        return self.handler(self.node_id, request)

    async def close(self) -> None:
        self.closed = True


def two_brokers(handler: Handler, log: list[tuple[int, Any]], **options: Any) -> Cluster:
    ports = {9001: 1, 9002: 2}

    async def connect(host: str, port: int) -> Any:
        return FakeConnection(ports[port], handler, log)

    return Cluster("127.0.0.1:9001", connect=connect, backoff=FAST, **options)


def metadata_response(leaders: dict[int, int]) -> metadata.MetadataResponse:
    brokers = tuple(
        metadata.MetadataResponseBroker(node_id=n, host="127.0.0.1", port=9000 + n) for n in (1, 2)
    )
    partitions = tuple(
        metadata.MetadataResponsePartition(partition_index=p, leader_id=leader)
        for p, leader in leaders.items()
    )
    topic = metadata.MetadataResponseTopic(name="t", partitions=partitions)
    return metadata.MetadataResponse(brokers=brokers, topics=(topic,), controller_id=1)


def list_offsets_for(*partitions: int) -> list_offsets.ListOffsetsRequest:
    topic = list_offsets.ListOffsetsTopic(
        name="t",
        partitions=tuple(list_offsets.ListOffsetsPartition(partition_index=p) for p in partitions),
    )
    return list_offsets.ListOffsetsRequest(topics=(topic,))


def test_parse_bootstrap() -> None:
    assert parse_bootstrap("a:1, [::1]:2") == [("a", 1), ("::1", 2)]
    assert parse_bootstrap(["b:3"]) == [("b", 3)]
    with pytest.raises(ValueError, match="not host:port"):
        parse_bootstrap("nope")


@pytest.mark.parametrize(
    "address", ["h:\u0663", "h:\u00b2", "h:\uff19\uff10", "h:+9", "h: 9", "h:0"]
)
def test_a_port_is_ascii_digits_in_range(address: str) -> None:
    """As Java's ``Utils.getPort`` (``[0-9]+``): digits of other scripts, which ``int()``
    would read (or fail on with its own words), are refused as the address's fault."""
    with pytest.raises(ValueError, match="not host:port"):
        parse_bootstrap(address)


async def test_leader_routed_requests_go_to_the_leader() -> None:
    log: list[tuple[int, Any]] = []

    def handler(node: int, request: Any) -> Any:
        if isinstance(request, metadata.MetadataRequest):
            return metadata_response({0: 1, 1: 2})
        return list_offsets.ListOffsetsResponse()

    async with two_brokers(handler, log) as cluster:
        await cluster.send(list_offsets_for(1))
        await cluster.send(list_offsets_for(0))
        with pytest.raises(RoutingError, match="partitions of 2 leaders"):
            await cluster.send(list_offsets_for(0, 1))
    sent = [
        (node, type(r).__name__) for node, r in log if not isinstance(r, metadata.MetadataRequest)
    ]
    assert sent == [(2, "ListOffsetsRequest"), (1, "ListOffsetsRequest")]


async def test_stale_metadata_is_refreshed_and_the_request_retried() -> None:
    log: list[tuple[int, Any]] = []
    leaders = {0: 1}
    refreshed = []

    def handler(node: int, request: Any) -> Any:
        if isinstance(request, metadata.MetadataRequest):
            refreshed.append(dict(leaders))
            return metadata_response(leaders)
        if node != 2:
            leaders[0] = 2  # leadership moved; broker 1 says so
            raise NotLeaderOrFollowerError("moved")
        return list_offsets.ListOffsetsResponse(throttle_time_ms=7)

    async with two_brokers(handler, log) as cluster:
        response = await cluster.send(list_offsets_for(0))
    assert response.throttle_time_ms == 7
    assert refreshed == [{0: 1}, {0: 2}]


async def test_retriable_errors_stop_at_the_deadline() -> None:
    log: list[tuple[int, Any]] = []

    def handler(node: int, request: Any) -> Any:
        if isinstance(request, metadata.MetadataRequest):
            return metadata_response({0: 1})
        raise RequestTimeoutError("slow")

    # Long enough for a retry even on a loaded machine: a timed-out broker is also left alone
    # for its reconnect backoff before the next attempt.
    async with two_brokers(handler, log, retry_timeout=0.5) as cluster:
        with pytest.raises(RequestTimeoutError):
            await cluster.send(list_offsets_for(0))
    assert sum(type(r).__name__ == "ListOffsetsRequest" for _, r in log) > 1


async def test_coordinator_is_cached_and_forgotten_on_not_coordinator() -> None:
    log: list[tuple[int, Any]] = []
    coordinator = {"node": 1}

    def handler(node: int, request: Any) -> Any:
        if isinstance(request, metadata.MetadataRequest):
            return metadata_response({0: 1})
        if isinstance(request, find_coordinator.FindCoordinatorRequest):
            found = find_coordinator.Coordinator(key="g", node_id=coordinator["node"])
            return find_coordinator.FindCoordinatorResponse(coordinators=(found,))
        if node != coordinator["node"]:
            return heartbeat.HeartbeatResponse(error_code=NotCoordinatorError.code)
        return heartbeat.HeartbeatResponse()

    async with two_brokers(handler, log) as cluster:
        await cluster.send(heartbeat.HeartbeatRequest(group_id="g"))
        await cluster.send(heartbeat.HeartbeatRequest(group_id="g"))
        coordinator["node"] = 2
        assert (await cluster.send(heartbeat.HeartbeatRequest(group_id="g"))).error_code == 0
    kinds = [
        (node, type(r).__name__) for node, r in log if not isinstance(r, metadata.MetadataRequest)
    ]
    assert kinds == [
        (1, "FindCoordinatorRequest"),
        (1, "HeartbeatRequest"),
        (1, "HeartbeatRequest"),
        (1, "HeartbeatRequest"),  # NOT_COORDINATOR: look it up again
        (1, "FindCoordinatorRequest"),
        (2, "HeartbeatRequest"),
    ]


async def test_non_retriable_top_level_errors_come_back_in_the_response() -> None:
    def handler(node: int, request: Any) -> Any:
        if isinstance(request, metadata.MetadataRequest):
            return metadata_response({0: 1})
        if isinstance(request, find_coordinator.FindCoordinatorRequest):
            return find_coordinator_answer(1)
        return heartbeat.HeartbeatResponse(error_code=25)  # UNKNOWN_MEMBER_ID

    async with two_brokers(handler, []) as cluster:
        assert (await cluster.send(heartbeat.HeartbeatRequest(group_id="g"))).error_code == 25


async def test_every_routed_requests_go_to_all_brokers() -> None:
    log: list[tuple[int, Any]] = []

    def handler(node: int, request: Any) -> Any:
        if isinstance(request, metadata.MetadataRequest):
            return metadata_response({0: 1})
        return list_groups.ListGroupsResponse(
            groups=(list_groups.ListedGroup(group_id=f"on-{node}"),)
        )

    async with two_brokers(handler, log) as cluster:
        with pytest.raises(RoutingError, match="send_to_all"):
            await cluster.send(list_groups.ListGroupsRequest())
        answers = await cluster.send_to_all(list_groups.ListGroupsRequest())
    assert {n: r.groups[0].group_id for n, r in answers.items()} == {1: "on-1", 2: "on-2"}


async def test_the_bootstrap_connection_becomes_the_brokers_connection() -> None:
    opened: list[int] = []

    def handler(node: int, request: Any) -> Any:
        return metadata_response({0: 1})

    async def connect(host: str, port: int) -> Any:
        opened.append(port)
        return FakeConnection({9001: 1, 9002: 2}[port], handler, [])

    async with Cluster("127.0.0.1:9001", connect=connect, backoff=FAST) as cluster:
        await cluster.connection(1)
        await cluster.connection(2)
    assert opened == [9001, 9002]  # broker 1 reused the bootstrap connection


def find_coordinator_answer(node: int) -> find_coordinator.FindCoordinatorResponse:
    return find_coordinator.FindCoordinatorResponse(
        coordinators=(find_coordinator.Coordinator(node_id=node),)
    )


async def test_concurrent_callers_share_one_metadata_refresh() -> None:
    log: list[tuple[int, Any]] = []

    def handler(node: int, request: Any) -> Any:
        return metadata_response({0: 1})

    async with two_brokers(handler, log) as cluster:
        cluster.mark_metadata_stale()
        await asyncio.gather(*(cluster.metadata() for _ in range(5)))
    assert len(log) == 2  # bootstrap, then one refresh for all five callers


async def test_batched_group_requests_go_to_the_coordinator_of_their_one_group() -> None:
    log: list[tuple[int, Any]] = []

    def handler(node: int, request: Any) -> Any:
        if isinstance(request, metadata.MetadataRequest):
            return metadata_response({0: 1})
        if isinstance(request, find_coordinator.FindCoordinatorRequest):
            assert request.key_type == 0
            return find_coordinator_answer({"g": 2, "h": 1}[request.coordinator_keys[0]])
        return type(request).__name__

    group = offset_fetch.OffsetFetchRequestGroup(group_id="g")
    async with two_brokers(handler, log) as cluster:
        await cluster.send(offset_fetch.OffsetFetchRequest(groups=(group,)))
        await cluster.send(describe_groups.DescribeGroupsRequest(groups=("h",)))
        with pytest.raises(RoutingError, match="names 2 coordinator keys"):
            await cluster.send(describe_groups.DescribeGroupsRequest(groups=("g", "h")))
        with pytest.raises(RoutingError, match="names no group"):
            await cluster.send(describe_groups.DescribeGroupsRequest(groups=()))
    sent = [(node, type(r).__name__) for node, r in log if r.__api_key__ in (9, 15)]
    assert sent == [(2, "OffsetFetchRequest"), (1, "DescribeGroupsRequest")]


async def test_transaction_requests_go_to_the_transaction_coordinator() -> None:
    log: list[tuple[int, Any]] = []

    def handler(node: int, request: Any) -> Any:
        if isinstance(request, metadata.MetadataRequest):
            return metadata_response({0: 1})
        if isinstance(request, find_coordinator.FindCoordinatorRequest):
            assert (request.key_type, request.coordinator_keys) == (1, ("tx",))
            return find_coordinator_answer(2)
        return type(request).__name__

    # From v4 the transactional id sits inside the batched ``transactions`` array.
    txn = add_partitions_to_txn.AddPartitionsToTxnTransaction(transactional_id="tx")
    async with two_brokers(handler, log) as cluster:
        await cluster.send(add_partitions_to_txn.AddPartitionsToTxnRequest(transactions=(txn,)))
        await cluster.send(init_producer_id.InitProducerIdRequest(transactional_id="tx"))
        await cluster.send(init_producer_id.InitProducerIdRequest(transactional_id=None))
    sent = [(node, type(r).__name__) for node, r in log if r.__api_key__ in (22, 24)]
    assert sent[:2] == [
        (2, "AddPartitionsToTxnRequest"),
        (2, "InitProducerIdRequest"),
    ]
    # Without a transactional id (an idempotent producer): any broker.
    assert sent[2][1] == "InitProducerIdRequest"


async def test_an_unreachable_coordinator_is_looked_up_again() -> None:
    log: list[tuple[int, Any]] = []
    coordinator = {"node": 2}

    def handler(node: int, request: Any) -> Any:
        if isinstance(request, metadata.MetadataRequest):
            return metadata_response({0: 1})
        if isinstance(request, find_coordinator.FindCoordinatorRequest):
            return find_coordinator_answer(coordinator["node"])
        if node == 2:
            coordinator["node"] = 1  # broker 2 went away; broker 1 took the group over
            raise ConnectError("broker 2 is down")
        return heartbeat.HeartbeatResponse()

    async with two_brokers(handler, log) as cluster:
        await cluster.send(heartbeat.HeartbeatRequest(group_id="g"))
    kinds = [(n, type(r).__name__) for n, r in log if not isinstance(r, metadata.MetadataRequest)]
    assert kinds == [
        (1, "FindCoordinatorRequest"),
        (2, "HeartbeatRequest"),
        (1, "FindCoordinatorRequest"),
        (1, "HeartbeatRequest"),
    ]


async def test_a_long_poll_gets_its_wait_added_to_the_request_timeout() -> None:
    connections: list[FakeConnection] = []

    def handler(node: int, request: Any) -> Any:
        if isinstance(request, metadata.MetadataRequest):
            return metadata_response({0: 1})
        return fetch.FetchResponse()

    async def connect(host: str, port: int) -> Any:
        connections.append(FakeConnection(1, handler, []))
        return connections[-1]

    partition = fetch.FetchPartition(partition=0)
    request = fetch.FetchRequest(
        max_wait_ms=45_000, topics=(fetch.FetchTopic(partitions=(partition,)),)
    )
    async with Cluster(
        "127.0.0.1:9001", connect=connect, request_timeout=10, retry_timeout=60
    ) as cluster:
        await cluster.send(request, node_id=1)
        await cluster.send(heartbeat.HeartbeatRequest(group_id="g"), node_id=1)
    # Metadata and the heartbeat share the normal connection; the fetch has its own.
    assert [c.timeouts for c in connections] == [[10.0, 10.0], [55.0]]


async def test_a_failed_bootstrap_closes_the_connection_it_opened() -> None:
    opened: list[FakeConnection] = []

    def handler(node: int, request: Any) -> Any:
        raise UnknownServerError("the broker failed the bootstrap Metadata request")

    async def connect(host: str, port: int) -> Any:
        opened.append(FakeConnection(1, handler, []))
        return opened[-1]

    cluster = Cluster("127.0.0.1:9001", connect=connect)
    with pytest.raises(UnknownServerError):
        await cluster.__aenter__()
    assert [c.closed for c in opened] == [True]


async def test_send_to_all_cancels_the_other_sends_when_one_fails() -> None:
    cancelled: list[int] = []

    def handler(node: int, request: Any) -> Any:
        if isinstance(request, metadata.MetadataRequest):
            return metadata_response({0: 1})
        raise AssertionError("not reached")

    waiting = asyncio.Event()

    class SlowOrFailing(FakeConnection):
        async def send(self, request: Any, *, timeout: float | None = None) -> Any:
            if isinstance(request, metadata.MetadataRequest):
                return handler(self.node_id, request)
            if self.node_id == 1:
                await waiting.wait()  # fail once broker 2 holds its request
                raise BrokerError(code=999)  # an unlisted code: fatal
            try:
                waiting.set()
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                cancelled.append(self.node_id)
                raise

    async def connect(host: str, port: int) -> Any:
        return SlowOrFailing({9001: 1, 9002: 2}[port], handler, [])

    async with Cluster("127.0.0.1:9001", connect=connect, backoff=FAST) as cluster:
        with pytest.raises(BrokerError, match="UNLISTED"):
            await cluster.send_to_all(list_groups.ListGroupsRequest())
        assert cancelled == [2]


async def test_retry_false_raises_the_first_retriable_error() -> None:
    log: list[tuple[int, Any]] = []

    def handler(node: int, request: Any) -> Any:
        if isinstance(request, metadata.MetadataRequest):
            return metadata_response({0: 1})
        raise RequestTimeoutError("slow")

    async with two_brokers(handler, log) as cluster:
        with pytest.raises(RequestTimeoutError):
            await cluster.send(list_offsets_for(0), retry=False)
    assert sum(type(r).__name__ == "ListOffsetsRequest" for _, r in log) == 1


def test_metadata_requests_ask_for_all_topics_as_each_version_spells_it() -> None:
    from kafkawire.cluster._own_requests import metadata_request

    assert metadata_request(None, 0).topics == ()  # v0: an empty list means every topic
    assert metadata_request(None, 12).topics is None
    assert [t.name for t in metadata_request(["a"], 0).topics] == ["a"]
    assert not metadata_request(["a"], 12).allow_auto_topic_creation
    assert metadata_request(["a"], 12, auto_create=True).allow_auto_topic_creation
