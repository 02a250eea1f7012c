"""``kafkawire broker``: the embedded Tansu broker, in the foreground until Ctrl-C."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket

import click

from kafkawire.testing import TansuBroker

from ._common import CONTEXT_SETTINGS, Failure, debug_option, run

__all__ = ["broker"]


@click.command(context_settings=CONTEXT_SETTINGS)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    metavar="PORT",
    help="Listen on 127.0.0.1:PORT. [default: a free port]",
)
@debug_option
def broker(port: int | None) -> None:
    """Run the embedded Tansu broker on a loopback port until Ctrl-C.

    Prints its address (HOST:PORT) on stdout, for --bootstrap-server or
    KAFKAWIRE_BOOTSTRAP. Storage is in memory: stopping it loses every topic. Needs the
    broker extra: pip install 'kafkawire[broker]'.

    \b
    Example:
      kafkawire broker
      export KAFKAWIRE_BOOTSTRAP=127.0.0.1:PORT   # in another terminal, the address it printed
      kafkawire broker --port 9092
    """
    if port is not None and not _free(port):
        raise click.BadParameter(f"127.0.0.1:{port} is in use", param_hint="'--port'")

    async def serve() -> None:
        stop = asyncio.Event()
        # SIGTERM too (kill, systemd, docker stop; and background jobs ignore SIGINT): the
        # default would end this process at once and leave the broker's process running.
        for signum in (signal.SIGTERM, signal.SIGHUP):
            asyncio.get_running_loop().add_signal_handler(signum, stop.set)
        async with TansuBroker(port=port) as embedded:
            click.echo(embedded.bootstrap)
            click.echo(f"{embedded.name} is listening; Ctrl-C stops it.", err=True)
            # A broker that dies is this command's failure, not a silent hang on its address.
            ended = asyncio.create_task(embedded.wait_exit(), name="tansu-exit")
            ended.add_done_callback(lambda _: stop.set())
            try:
                await stop.wait()  # or until Ctrl-C cancels it
            finally:
                if not ended.done():
                    ended.cancel()
            if ended.done() and not ended.cancelled():
                raise Failure(ended.result())

    # Ctrl-C is how this command ends, not a failure: the broker is stopped on the way out.
    with contextlib.suppress(KeyboardInterrupt):
        run(serve())
    click.echo("Stopped.", err=True)


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True
