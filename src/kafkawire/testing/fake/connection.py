"""One client connection to a fake broker: read a request, answer it, then the next.

Kafka mutes a connection from a request until its response is sent, so it answers one request
of a connection at a time, in order; clients may still pipeline (the requests wait in the
socket). This loop does the same. Per request:

1. ApiVersions at a version not served is answered with a v0 body, error UNSUPPORTED_VERSION
   and the ApiVersions range served (KIP-511). Any other API or version not served, or a
   request that does not decode, closes the connection (Kafka's ``InvalidRequestException``).
2. The request is logged (``cluster.requests``), then the hooks run, then its handler.
3. The answer is written at the request's version; ``None`` sends nothing (Produce with
   acks 0); CUT closes the connection; DROP answers nothing, ever, on this connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
from typing import TYPE_CHECKING, Any

from kafkawire.errors import ConnectionClosedError, DecodeError, UnknownMessageError
from kafkawire.messages.api_versions import v0 as api_versions_v0
from kafkawire.protocol import convert, decode_request, encode_response, read_frame

from .call import Call
from .codes import Error
from .hooks import CUT, DROP
from .request_log import ReceivedRequest

if TYPE_CHECKING:
    from .broker import BrokerServer

__all__ = ["Connection"]

logger = logging.getLogger(__name__)

_HEADER_START = struct.Struct(">hhi")  # api key, api version, correlation id
_API_VERSIONS = api_versions_v0.ApiVersionsRequest.__api_key__


class Connection:
    def __init__(
        self,
        broker: BrokerServer,
        connection_id: int,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self.broker = broker
        self.connection_id = connection_id
        self.reader = reader
        self.writer = writer
        # Java's InetAddress.toString() of the peer, as Kafka names a member's client host.
        self.client_host = f"/{writer.get_extra_info('peername')[0]}"

    def abort(self) -> None:
        self.writer.transport.abort()

    async def serve(self) -> None:
        try:
            while await self._answer(await read_frame(self.reader)):
                pass
        except (ConnectionClosedError, OSError):
            pass
        finally:
            self.abort()
            # Kafka drops the share session a connection opened when it closes.
            self.broker.cluster.services.shares.disconnected(
                self.broker.node_id, self.connection_id
            )
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()

    async def _answer(self, frame: bytes) -> bool:
        """Answer one request; False to close the connection."""
        cluster = self.broker.cluster
        served = cluster.services.served
        if len(frame) < _HEADER_START.size:
            return False
        api_key, version, correlation_id = _HEADER_START.unpack_from(frame)
        if api_key == _API_VERSIONS and version not in served.get(api_key, range(0)):
            self._write(_unsupported_api_versions(served), correlation_id)
            return True
        if version not in served.get(api_key, range(0)):
            logger.info(
                "node %d: api key %d v%d is not served: closing the connection",
                self.broker.node_id,
                api_key,
                version,
            )
            return False
        try:
            header, request = decode_request(frame)
        except (DecodeError, UnknownMessageError) as exc:
            logger.info("node %d: undecodable request (%s): closing", self.broker.node_id, exc)
            return False
        cluster.requests.append(
            ReceivedRequest(self.broker.node_id, self.connection_id, header, request)
        )
        call = Call(
            cluster.services,
            node_id=self.broker.node_id,
            connection_id=self.connection_id,
            client_host=self.client_host,
            header=header,
            request=request,
            handler=cluster.handler_for(api_key),
        )
        try:
            result = await cluster.hooks.run(call, cluster)
            if result is None:
                result = await call.answer()
            if result is not None and result is not CUT and result is not DROP:
                self._write(convert(result, version), correlation_id)
        except Exception as exc:  # a bug in a handler or a hook's answer: fail the test at close
            logger.exception("node %d: answering %s failed", self.broker.node_id, call.api_name)
            cluster.errors.append(exc)
            return False
        if result is CUT:
            return False
        if result is DROP:
            await self._never_answer()
            return False
        await self.writer.drain()
        return True

    def _write(self, response: Any, correlation_id: int) -> None:
        self.writer.write(encode_response(response, correlation_id=correlation_id))

    async def _never_answer(self) -> None:
        """Read and discard until the client closes: a muted connection never unmutes."""
        while await self.reader.read(65536):
            pass


def _unsupported_api_versions(served: dict[int, range]) -> Any:
    own = served.get(_API_VERSIONS, range(0))
    entries: tuple[api_versions_v0.ApiVersion, ...] = ()
    if own:
        entries = (
            api_versions_v0.ApiVersion(
                api_key=_API_VERSIONS, min_version=own.start, max_version=own.stop - 1
            ),
        )
    return api_versions_v0.ApiVersionsResponse(
        error_code=Error.UNSUPPORTED_VERSION, api_keys=entries
    )
