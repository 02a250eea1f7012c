"""``kafkawire api-versions``: what a broker serves, beside what kafkawire supports."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.table import Table

from kafkawire.messages import APIS
from kafkawire.messages.api_versions import v3

from ._common import CONTEXT_SETTINGS, BrokerArgs, broker_options, debug_option, run

__all__ = ["api_versions"]


@click.command("api-versions", context_settings=CONTEXT_SETTINGS)
@broker_options
@debug_option
def api_versions(broker: BrokerArgs) -> None:
    """Show the API versions a broker serves beside those kafkawire supports.

    The last column is the version kafkawire would use (the highest both sides speak), or
    "-" where they have none in common.

    \b
    Examples:
      kafkawire api-versions --bootstrap-server localhost:9092
      KAFKAWIRE_BOOTSTRAP=localhost:9092 kafkawire api-versions
    """
    served = run(_served(broker))
    table = Table("API", "key", "broker", "kafkawire", "used", box=None)
    for key in sorted(served.keys() | APIS.keys()):
        ours = APIS[key].versions if key in APIS else range(0)
        theirs = served.get(key, range(0))
        common = range(max(ours.start, theirs.start), min(ours.stop, theirs.stop))
        name = APIS[key].name if key in APIS else "(unknown to kafkawire)"
        table.add_row(
            name, str(key), _span(theirs), _span(ours), str(common[-1]) if common else "-"
        )
    Console(soft_wrap=True).print(table)


async def _served(broker: BrokerArgs) -> dict[int, range]:
    async with broker.client() as client:
        request = v3.ApiVersionsRequest(
            client_software_name="kafkawire", client_software_version="cli"
        )
        answer: Any = await client.send(request, negotiate=True)
    return {k.api_key: range(k.min_version, k.max_version + 1) for k in answer.api_keys}


def _span(versions: range) -> str:
    return f"{versions.start}-{versions[-1]}" if versions else "-"
