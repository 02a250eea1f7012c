"""What the commands share: options and the one-line failure."""

from __future__ import annotations

from typing import Any

import click

from kafkawire.errors import KafkawireError

__all__ = ["CONTEXT_SETTINGS", "DEBUG", "Failure", "debug_option", "one_line"]

DEBUG = "kafkawire.debug"
CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Failure(click.ClickException):
    """A failure that is not a usage error: exit code 1, one line on stderr."""

    exit_code = 1


def _set_debug(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[DEBUG] = True


debug_option = click.option(
    "--debug",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_set_debug,
    help="Print the traceback of an error.",
)


def one_line(exc: BaseException) -> str:
    message = " ".join(str(exc).split())
    # Our own errors and the operating system's explain themselves; anything else is named.
    if isinstance(exc, KafkawireError | OSError) and message:
        return message
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
