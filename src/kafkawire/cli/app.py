"""The command group, and what every command shares: errors in one line, exit codes.

Exit codes: 0 success, 1 failure (the broker, the network or the input), 2 usage error
(click's own). An error prints as one line on stderr; ``--debug`` adds its traceback.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

import click

from . import api_versions, broker, consume, decode, groups, produce, topics
from ._common import CONTEXT_SETTINGS, DEBUG, Failure, debug_option, one_line

__all__ = ["cli", "main"]


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)  # in the order they are added: the everyday ones first

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            raise click.exceptions.Exit(130) from None
        except Exception as exc:  # the command line's last resort: one line, not a traceback
            if ctx.meta.get(DEBUG):
                traceback.print_exc()
            raise Failure(one_line(exc)) from exc


@click.group(cls=_Group, context_settings=CONTEXT_SETTINGS)
@debug_option
@click.version_option(package_name="kafkawire", message="%(prog)s %(version)s")
def cli() -> None:
    """kafkawire: Kafka from the command line, and a protocol debugger.

    Commands that talk to a broker take --bootstrap-server HOST:PORT (or the
    KAFKAWIRE_BOOTSTRAP environment variable). Every command takes --help, with
    examples. Exit codes: 0 success, 1 failure, 2 usage error.

    \b
    Examples:
      kafkawire broker                  # a broker to try things on; prints its address
      export KAFKAWIRE_BOOTSTRAP=127.0.0.1:9092
      kafkawire topics create greetings --partitions 3
      seq 10 | kafkawire produce greetings
      kafkawire consume greetings --from-beginning --format json
      kafkawire decode --hex 00000012000300000000000100047465737400000000
    """


for command in (
    topics.topics,
    produce.produce,
    consume.consume,
    groups.groups,
    api_versions.api_versions,
    decode.decode,
    broker.broker,
):
    cli.add_command(command)


def main() -> None:
    # Without a handler, Python prints the library's warnings on stderr beside the command's
    # own one-line error; --debug adds one (see debug_option).
    logging.getLogger("kafkawire").addHandler(logging.NullHandler())
    cli(prog_name="kafkawire")
