"""GNU SASL's ``gsasl`` command as an independent SCRAM-SHA-256 server (it has no SHA-512)."""

from __future__ import annotations

import asyncio
import base64
import shutil

GSASL = shutil.which("gsasl")


class GsaslServer:
    """GNU SASL's ``gsasl --server`` for SCRAM-SHA-256, one base64 line per message."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, user: str, password: str) -> GsaslServer:
        assert GSASL is not None
        process = await asyncio.create_subprocess_exec(
            GSASL,
            "--server",
            "--mechanism",
            "SCRAM-SHA-256",
            "--quiet",
            "--authentication-id",
            user,
            "--password",
            password,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        server = cls(process)
        assert await server.line() == b"SCRAM-SHA-256"
        assert await server.line() == b""  # its empty initial challenge
        return server

    async def line(self) -> bytes:
        assert self.process.stdout is not None
        return (await asyncio.wait_for(self.process.stdout.readline(), 5)).strip()

    async def exchange(self, message: bytes) -> bytes:
        assert self.process.stdin is not None
        self.process.stdin.write(base64.b64encode(message) + b"\n")
        await self.process.stdin.drain()
        return base64.b64decode(await self.line())

    async def stop(self) -> bytes:
        assert self.process.stdin is not None
        assert self.process.stderr is not None
        self.process.stdin.close()
        stderr = await asyncio.wait_for(self.process.stderr.read(), 5)
        await asyncio.wait_for(self.process.wait(), 5)
        return stderr
