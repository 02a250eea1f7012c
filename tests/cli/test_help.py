"""Every command's --help shows examples (in-process: the help needs no broker)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from kafkawire.cli.app import cli


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in group.commands.items():
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found += _commands(command, (*prefix, name))
    return found


@pytest.mark.parametrize("path", [(), *_commands(cli)], ids=" ".join)
def test_help_has_examples(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"], prog_name="kafkawire")
    assert result.exit_code == 0
    assert "Example" in result.output
    # Metavars say what a value is (N, P, SECONDS), not click's type names.
    assert "INTEGER" not in result.output
