"""``kafkawire groups``: list and describe consumer and share groups, and reset consumer groups'
offsets."""

from __future__ import annotations

from typing import NamedTuple

import click
from rich.console import Console
from rich.table import Table

from kafkawire.admin import (
    GroupDescription,
    ItemResults,
    PartitionLag,
    ResetTo,
    ShareGroupDescription,
    SharePartitionOffset,
)
from kafkawire.cluster import TopicPartition
from kafkawire.errors import GroupIdNotFoundError

from ._common import (
    CONTEXT_SETTINGS,
    INT64,
    BrokerArgs,
    Failure,
    broker_options,
    debug_option,
    plural,
    run,
    timestamp_ms,
)

__all__ = ["groups"]

GROUP_STATES = (
    "PreparingRebalance",
    "CompletingRebalance",
    "Stable",
    "Dead",
    "Empty",
    "Assigning",
    "Reconciling",
    "NotReady",
)


@click.group(context_settings=CONTEXT_SETTINGS)
def groups() -> None:
    """List and describe consumer and share groups, and reset consumer groups' offsets.

    \b
    Examples:
      kafkawire groups list -b localhost:9092
      kafkawire groups describe billing
      kafkawire groups reset-offsets billing --topic orders --to-earliest --dry-run
    """


def _print(table: Table) -> None:
    Console(soft_wrap=True).print(table)


def _group_id(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    if not value:  # Kafka's tools refuse it too: no coordinator can be found for it
        raise click.BadParameter("a group id cannot be empty")
    return value


@groups.command("list", context_settings=CONTEXT_SETTINGS)
@click.option(
    "--state",
    "states",
    multiple=True,
    # Kafka's group states (Java's GroupState, less Unknown); brokers match them by name
    type=click.Choice(GROUP_STATES, case_sensitive=False),
    help="Only groups in this state (repeatable).",
)
@click.option(
    "--type",
    "types",
    multiple=True,
    type=click.Choice(["classic", "consumer", "share"], case_sensitive=False),
    help="Only groups of this type (repeatable).",
)
@broker_options
@debug_option
def list_groups(*, broker: BrokerArgs, states: tuple[str, ...], types: tuple[str, ...]) -> None:
    """List the groups: id, type (classic, consumer or share), state and protocol type.

    \b
    Examples:
      kafkawire groups list -b localhost:9092
      kafkawire groups list --state Stable --state Empty
      kafkawire groups list --type share
    """

    async def listed() -> list[tuple[str, str, str, str]]:
        async with broker.admin() as admin:
            found = await admin.list_groups(states=states, types=types)
        return sorted((g.group_id, g.type, g.state, g.protocol_type) for g in found)

    found = run(listed())
    if not found:
        click.echo("No groups.", err=True)
        return
    table = Table("group", "type", "state", "protocol type", box=None)
    for row in found:
        table.add_row(*row)
    _print(table)


@groups.command(context_settings=CONTEXT_SETTINGS)
@click.argument("group", callback=_group_id)
@broker_options
@debug_option
def describe(*, broker: BrokerArgs, group: str) -> None:
    """Show a group's state, its members and their assignments, and per partition the
    committed offset, the end offset, the lag and the member it is assigned to. For a share
    group: its members and per partition its start offset, its lag and the members that
    share it.

    \b
    Example:
      kafkawire groups describe billing -b localhost:9092
    """

    async def described() -> ConsumerView | ShareView:
        async with broker.admin() as admin:
            types = {g.group_id: g.type for g in await admin.list_groups()}
            if types.get(group) == "share":
                share = (await admin.describe_share_groups([group]))[group]
                return ShareView(share, await admin.list_share_group_offsets(group))
            consumer = (await admin.describe_groups([group]))[group]
            return ConsumerView(consumer, await admin.group_lag(group))

    try:
        view = run(described())
    except GroupIdNotFoundError:  # Kafka 4 answers so for a group it does not have
        raise Failure(f"consumer group {group!r} does not exist") from None
    if isinstance(view, ShareView):
        _describe_share(view)
    else:
        _describe_consumer(group, view)


class ConsumerView(NamedTuple):
    description: GroupDescription
    lags: ItemResults[TopicPartition, PartitionLag]


class ShareView(NamedTuple):
    description: ShareGroupDescription
    offsets: ItemResults[TopicPartition, SharePartitionOffset]


def _describe_consumer(group: str, view: ConsumerView) -> None:
    description, lags = view
    # Older brokers answer "Dead", and some (Tansu) "Empty": a group with no members and no
    # committed offsets is one Kafka removes, so it is gone either way.
    if description.state == "Dead" or (not description.members and not lags):
        raise Failure(f"consumer group {group!r} does not exist")
    click.echo(
        f"Group {group}  state {description.state or '-'}  protocol {description.protocol or '-'}"
        f"  members {len(description.members)}"
    )
    owners = {tp: m.client_id or m.member_id for m in description.members for tp in m.assignment}
    table = Table("topic", "partition", "committed", "end", "lag", "member", box=None)
    for tp in sorted(set(lags) | set(owners)):
        lag = lags.outcome(tp) if tp in lags else None
        if isinstance(lag, PartitionLag):
            numbers = [_or_dash(lag.committed), str(lag.end), _or_dash(lag.lag)]
        else:
            numbers = ["-", "-", f"error: {lag}" if lag else "-"]
        table.add_row(tp.topic, str(tp.partition), *numbers, owners.get(tp, "-"))
    _print(table)


def _describe_share(view: ShareView) -> None:
    """A share group: its members, then per partition its start offset, its lag and the
    members that share it."""
    description, offsets = view
    click.echo(
        f"Share group {description.group_id}  state {description.state}  epoch "
        f"{description.group_epoch}  assignor {description.assignor}  members "
        f"{len(description.members)}"
    )
    members = Table("member", "client", "host", "epoch", "topics", box=None)
    for m in description.members:
        members.add_row(
            m.member_id, m.client_id, m.client_host, str(m.member_epoch), ",".join(m.topics)
        )
    if description.members:
        _print(members)
    sharing: dict[TopicPartition, list[str]] = {}
    for m in description.members:
        for tp in m.assignment:
            sharing.setdefault(tp, []).append(m.member_id)  # clients of a pool share an id
    table = Table("topic", "partition", "start", "lag", "members", box=None)
    for tp in sorted(set(offsets) | set(sharing)):
        found = offsets.outcome(tp) if tp in offsets else None
        if isinstance(found, SharePartitionOffset):
            numbers = [_or_dash(found.start_offset), _or_dash(found.lag)]
        else:
            numbers = ["-", f"error: {found}" if found else "-"]
        table.add_row(tp.topic, str(tp.partition), *numbers, ",".join(sharing.get(tp, ["-"])))
    _print(table)


def _or_dash(value: int | None) -> str:
    return "-" if value is None or value < 0 else str(value)


_TARGETS = ("to_earliest", "to_latest", "to_datetime", "shift_by", "to_offset")


@groups.command("reset-offsets", context_settings=CONTEXT_SETTINGS)
@click.argument("group", callback=_group_id)
@click.option(
    "--topic",
    "topics",
    multiple=True,
    help="Reset this topic's partitions (repeatable). [default: all the group committed for]",
)
@click.option("--to-earliest", is_flag=True, help="To each partition's first offset.")
@click.option("--to-latest", is_flag=True, help="To each partition's end.")
@click.option(
    "--to-datetime",
    callback=timestamp_ms,
    metavar="T",
    help="To the first record at or after T (ms since the epoch, or ISO 8601).",
)
@click.option(
    "--shift-by",
    type=click.IntRange(-INT64, INT64),
    metavar="N",
    help="By N from the committed offset (negative: back).",
)
@click.option("--to-offset", type=click.IntRange(0, INT64), metavar="N", help="To offset N.")
@click.option("--dry-run", is_flag=True, help="Show the new offsets without committing them.")
@broker_options
@debug_option
def reset_offsets(
    *,
    broker: BrokerArgs,
    group: str,
    topics: tuple[str, ...],
    dry_run: bool,
    **targets: int | bool | None,
) -> None:
    """Move a group's committed offsets; give exactly one --to-... or --shift-by.

    Offsets are kept within each partition's first and end offsets. The group should have no
    active members: a running consumer commits over the reset.

    \b
    Examples:
      kafkawire groups reset-offsets billing --topic orders --to-earliest -b localhost:9092
      kafkawire groups reset-offsets billing --to-datetime 2026-11-23T09:00 --dry-run
      kafkawire groups reset-offsets billing --shift-by -100
    """
    given = {name: value for name, value in targets.items() if value not in (None, False)}
    if len(given) != 1:
        options = ", ".join("--" + name.replace("_", "-") for name in _TARGETS)
        raise click.UsageError(f"give exactly one of {options}")
    ((name, value),) = given.items()
    to = _reset_to(name, int(value))

    async def reset() -> ItemResults[TopicPartition, int]:
        async with broker.admin() as admin:
            return await admin.reset_offsets(group, list(topics) or None, to, dry_run=dry_run)

    moved = run(reset())
    table = Table("topic", "partition", "new offset", box=None)
    for tp in sorted(moved):
        table.add_row(tp.topic, str(tp.partition), str(moved.outcome(tp)))
    _print(table)
    if moved.errors:
        first = next(iter(moved.errors.values()))
        raise Failure(f"{plural(len(moved.errors), 'partition')} not reset, the first: {first}")
    click.echo(
        ("Would reset" if dry_run else "Reset") + f" {plural(len(moved), 'partition')} of {group}",
        err=True,
    )


def _reset_to(name: str, value: int) -> ResetTo:
    if name == "to_earliest":
        return ResetTo.earliest()
    if name == "to_latest":
        return ResetTo.latest()
    if name == "to_datetime":
        return ResetTo.datetime(value)
    if name == "shift_by":
        return ResetTo.shift_by(value)
    return ResetTo.offset(value)
