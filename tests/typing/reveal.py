"""What an IDE and mypy see of the public API. Checked by test_types.py; never executed.

Each ``reveal_type`` line carries the expected type after ``# revealed:``; each line that must
not type-check carries ``# error:`` and the start of mypy's message.
"""

from typing import reveal_type

from kafkawire.messages import request_type
from kafkawire.messages.metadata.v12 import MetadataRequest, MetadataResponse
from kafkawire.protocol import decode, decode_response, encode, encode_request

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
reveal_type(request_type(3, 12))  # revealed: type[Any]
reveal_type(decode_response(b"", 3, 12)[0].correlation_id)  # revealed: int

MetadataRequest(topics=[])  # error: Argument "topics" to "MetadataRequest" has incompatible type
MetadataRequest(3)  # error: Too many positional arguments
response.cluster_id = "x"  # error: Property "cluster_id" defined in "MetadataResponse" is read-only
# fmt: on
