"""``kafkawire topics``: list, describe, create and delete topics."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click
from rich.console import Console
from rich.table import Table

from kafkawire.admin import ConfigResource, ConfigSource, NewTopic, TopicDescription
from kafkawire.errors import UnknownTopicOrPartitionError

from ._common import (
    CONTEXT_SETTINGS,
    INT16,
    INT32,
    BrokerArgs,
    Failure,
    broker_options,
    debug_option,
    key_values,
    run,
    topic_name,
)

__all__ = ["topics"]


@click.group(context_settings=CONTEXT_SETTINGS)
def topics() -> None:
    """List, describe, create and delete topics.

    \b
    Examples:
      kafkawire topics list -b localhost:9092
      kafkawire topics create orders --partitions 3 --config retention.ms=86400000
      kafkawire topics describe orders
      kafkawire topics delete orders
    """


@topics.command("list", context_settings=CONTEXT_SETTINGS)
@click.option("--internal", is_flag=True, help="Include internal topics.")
@broker_options
@debug_option
def list_topics(broker: BrokerArgs, internal: bool) -> None:
    """Print the names of the topics, one a line.

    \b
    Example:
      kafkawire topics list -b localhost:9092
    """

    async def names() -> list[str]:
        async with broker.admin() as admin:
            return await admin.list_topics(internal=internal)

    for name in sorted(run(names())):
        click.echo(name)


@topics.command(context_settings=CONTEXT_SETTINGS)
@click.argument("name", callback=topic_name)
@click.option("--all-configs", is_flag=True, help="Show every config, not only those set.")
@broker_options
@debug_option
def describe(broker: BrokerArgs, name: str, all_configs: bool) -> None:
    """Show a topic's partitions (leader, replicas, in-sync replicas) and the configs set on it.

    \b
    Examples:
      kafkawire topics describe orders -b localhost:9092
      kafkawire topics describe orders --all-configs
    """

    async def described() -> tuple[TopicDescription, dict[str, str | None]]:
        async with broker.admin() as admin:
            topic = (await admin.describe_topics([name]))[name]
            resource = ConfigResource.topic(name)
            entries = (await admin.describe_configs([resource]))[resource]
        # What differs from the defaults is what someone describing a topic looks for.
        configs = {
            k: e.value
            for k, e in entries.items()
            if all_configs or e.source != ConfigSource.DEFAULT_CONFIG
        }
        return topic, configs

    with _existing(name):
        topic, configs = run(described())
    console = Console(soft_wrap=True)
    console.print(f"Topic {name}  id {topic.topic_id}  partitions {len(topic.partitions)}")
    table = Table("partition", "leader", "replicas", "isr", box=None)
    for p in topic.partitions:
        table.add_row(str(p.partition), str(p.leader), _ids(p.replicas), _ids(p.isr))
    console.print(table)
    for key, value in sorted(configs.items()):
        console.print(f"{key}={value}", highlight=False)


@topics.command(context_settings=CONTEXT_SETTINGS)
@click.argument("name", callback=topic_name)
@click.option(
    "--partitions", type=click.IntRange(1, INT32), metavar="N", help="[default: the broker's]"
)
@click.option(
    "--replication-factor",
    type=click.IntRange(1, INT16),
    metavar="R",
    help="[default: the broker's]",
)
@click.option(
    "--config",
    "configs",
    multiple=True,
    metavar="KEY=VALUE",
    callback=key_values,
    help="A topic config (repeatable).",
)
@broker_options
@debug_option
def create(
    broker: BrokerArgs,
    name: str,
    partitions: int | None,
    replication_factor: int | None,
    configs: dict[str, str],
) -> None:
    """Create a topic.

    \b
    Examples:
      kafkawire topics create orders --partitions 3 -b localhost:9092
      kafkawire topics create audit --partitions 1 --replication-factor 3 \\
          --config cleanup.policy=compact --config retention.ms=-1
    """
    topic = NewTopic(name, partitions or -1, replication_factor or -1, configs)

    async def created() -> int:
        async with broker.admin() as admin:
            return (await admin.create_topics([topic]))[name].partitions

    count = run(created())
    click.echo(
        f"Created topic {name}" + (f" with {count} partitions" if count > 0 else ""), err=True
    )


@topics.command(context_settings=CONTEXT_SETTINGS)
@click.argument("name", callback=topic_name)
@broker_options
@debug_option
def delete(broker: BrokerArgs, name: str) -> None:
    """Delete a topic.

    \b
    Example:
      kafkawire topics delete orders -b localhost:9092
    """

    async def deleted() -> None:
        async with broker.admin() as admin:
            (await admin.delete_topics([name]))[name]

    with _existing(name):
        run(deleted())
    click.echo(f"Deleted topic {name}", err=True)


@contextlib.contextmanager
def _existing(name: str) -> Iterator[None]:
    """The broker's "unknown topic or partition", said of the topic the user named."""
    try:
        yield
    except UnknownTopicOrPartitionError:
        raise Failure(f"topic {name!r} does not exist") from None


def _ids(ids: tuple[int, ...]) -> str:
    return ",".join(map(str, ids))
