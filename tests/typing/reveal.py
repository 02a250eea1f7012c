"""What an IDE and mypy see of the public API. Checked by test_types.py; never executed.

Each ``reveal_type`` line carries the expected type after ``# revealed:``; each line that must
not type-check carries ``# error:`` and the start of mypy's message.
"""

from typing import TypeVar, reveal_type

from kafkawire.admin import Admin
from kafkawire.client import KafkaClient
from kafkawire.cluster import Cluster
from kafkawire.consumer import AcknowledgeType, Consumer, ShareConsumer
from kafkawire.messages import RequestMessage, ResponseMessage, request_type, response_type
from kafkawire.messages.metadata import v4 as metadata_v4
from kafkawire.messages.metadata.v12 import MetadataRequest, MetadataResponse
from kafkawire.net import Connection
from kafkawire.producer import Producer
from kafkawire.protocol import decode, decode_response, encode, encode_request

R = TypeVar("R", bound=ResponseMessage)


async def send(request: RequestMessage[R]) -> R:
    """The typed seam a client implements: the response type follows from the request's."""
    return decode(request.__response__, b"")  # __response__ of a RequestMessage[R] is type[R]


# One expectation a line, so the formatter must leave these lines alone.
# fmt: off
response = decode(MetadataResponse, b"")
reveal_type(response)  # revealed: kafkawire.messages.metadata.v12.MetadataResponse
reveal_type(response.topics)  # revealed: tuple[kafkawire.messages.metadata.v12.MetadataResponseTopic, ...]
reveal_type(response.topics[0].partitions[0].replica_nodes)  # revealed: tuple[int, ...]
reveal_type(response.cluster_id)  # revealed: str | None
reveal_type(response.topics[0].topic_id)  # revealed: uuid.UUID
reveal_type(encode(response))  # revealed: bytes
reveal_type(encode_request(MetadataRequest(topics=None), correlation_id=1, client_id=None))  # revealed: bytes
reveal_type(MetadataRequest.__api_key__)  # revealed: int
reveal_type(MetadataRequest.__response__)  # revealed: type[kafkawire.messages.metadata.v12.MetadataResponse]
reveal_type(request_type(3, 12))  # revealed: type[kafkawire.messages._base.RequestMessage[Any]]
reveal_type(request_type(3, 12).__response__)  # revealed: type[kafkawire.messages._base.ResponseMessage]
reveal_type(request_type(3, 12).__route__)  # revealed: str
reveal_type(request_type(3, 12)(topics=None))  # revealed: kafkawire.messages._base.RequestMessage[Any]
reveal_type(response_type(3, 12))  # revealed: type[kafkawire.messages._base.ResponseMessage]
reveal_type(response_type(3, 12).__version__)  # revealed: int
reveal_type(decode_response(b"", 3, 12)[0].correlation_id)  # revealed: int


async def client_sends(client: KafkaClient, cluster: Cluster, conn: Connection) -> None:
    reveal_type(await client.send(MetadataRequest(topics=None)))  # revealed: kafkawire.messages.metadata.v12.MetadataResponse
    reveal_type(await client.send(metadata_v4.MetadataRequest(topics=None)))  # revealed: kafkawire.messages.metadata.v4.MetadataResponse
    reveal_type(await client.send(MetadataRequest(topics=None), negotiate=True))  # revealed: Any
    reveal_type(await cluster.send(MetadataRequest(topics=None), node_id=1))  # revealed: kafkawire.messages.metadata.v12.MetadataResponse
    reveal_type(await conn.send(metadata_v4.MetadataRequest(topics=None)))  # revealed: kafkawire.messages.metadata.v4.MetadataResponse
    await client.send(response)  # error: No overload variant of "send" of "KafkaClient" matches argument type "MetadataResponse"
    KafkaClient("h:1", request_timout=1.0)  # error: Unexpected keyword argument "request_timout" for "KafkaClient"
    KafkaClient("h:1", request_timeout_ms=1.5)  # error: Argument "request_timeout_ms" to "KafkaClient" has incompatible type "float"; expected "int"
    Producer("h:1", lingr_ms=5)  # error: Unexpected keyword argument "lingr_ms" for "Producer"
    Producer("h:1", linger_ms=1.5)  # error: Argument "linger_ms" to "Producer" has incompatible type "float"; expected "int"
    Producer("h:1", acks=1.0)  # error: Argument "acks" to "Producer" has incompatible type "float"; expected "int | str"
    Consumer("t", bootstrap_servers="h:1", enable_auto_commit="false")  # error: Argument "enable_auto_commit" to "Consumer" has incompatible type "str"; expected "bool"
    Consumer("t", bootstrap_servers="h:1", default_api_timeout_ms="5")  # error: Argument "default_api_timeout_ms" to "Consumer" has incompatible type "str"; expected "int"
    Admin("h:1", default_api_timeout_ms=5.0)  # error: Argument "default_api_timeout_ms" to "Admin" has incompatible type "float"; expected "int"
    Admin("h:1", linger_ms=5)  # error: Unexpected keyword argument "linger_ms" for "Admin"


async def share_consumes(consumer: ShareConsumer) -> None:
    batch = await consumer.getmany(timeout_ms=100)
    reveal_type(batch)  # revealed: dict[tuple[str, int, fallback=kafkawire.cluster.metadata.TopicPartition], list[kafkawire.consumer.fetching.record.ConsumerRecord]]
    record = next(iter(batch.values()))[0]
    reveal_type(record.delivery_count)  # revealed: int | None
    consumer.acknowledge(record, AcknowledgeType.RELEASE)
    reveal_type(await consumer.commit())  # revealed: dict[tuple[str, int, fallback=kafkawire.cluster.metadata.TopicPartition], kafkawire.errors.KafkawireError | None]
    ShareConsumer("t", bootstrap_servers="h:1", group_id="g", share_acknowledgement_mode="manual")  # error: Argument "share_acknowledgement_mode" to "ShareConsumer" has incompatible type
    consumer.acknowledge(record, "ACCEPT")  # error: Argument 2 to "acknowledge" of "ShareConsumer" has incompatible type "str"; expected "AcknowledgeType"


async def client_returns(client: KafkaClient) -> MetadataResponse:
    return await client.send(MetadataRequest(topics=None))  # no Any returned: fine under --strict


async def sends() -> None:
    reveal_type(await send(MetadataRequest(topics=None)))  # revealed: kafkawire.messages.metadata.v12.MetadataResponse
    reveal_type(await send(metadata_v4.MetadataRequest(topics=None)))  # revealed: kafkawire.messages.metadata.v4.MetadataResponse
    await send(response)  # error: Argument 1 to "send" has incompatible type "MetadataResponse"; expected "RequestMessage[Never]"
    await send("MetadataRequest")  # error: Argument 1 to "send" has incompatible type "str"


MetadataRequest(topics=[])  # error: Argument "topics" to "MetadataRequest" has incompatible type
MetadataRequest(3)  # error: Too many positional arguments
response.cluster_id = "x"  # error: Property "cluster_id" defined in "MetadataResponse" is read-only
# fmt: on
