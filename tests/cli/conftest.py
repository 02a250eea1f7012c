"""Run the ``kafkawire`` command: in this process (``run``), or as the installed console script
in a subprocess, the way a user does (``kafkawire_script``).

``run`` calls the same click group the script calls, with its own stdin, stdout, stderr and
environment (click's ``CliRunner``), on a thread of its own: a command runs its own event loop
(``asyncio.run``), which a thread may do while an async test's loop waits. It answers as
``subprocess.run`` would (exit code, stdout, stderr; bytes when the input is bytes), and saves
starting an interpreter per command (about a second each on a loaded machine). The tests of
``tests/cli/test_script.py`` and ``test_broker.py`` run the real script: its entry point, its
exit codes as the shell sees them, and signals.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from kafkawire.cli._settings import ENVIRONMENT
from kafkawire.cli.app import cli

Run = Callable[..., subprocess.CompletedProcess[Any]]

# The tests say which broker they mean, and how to reach it; a KAFKAWIRE_BOOTSTRAP (or security
# setting) from the shell would not.
SHELL_ONLY = frozenset({"KAFKAWIRE_BOOTSTRAP", "KAFKAWIRE_COMMAND_CONFIG", *ENVIRONMENT})


@pytest.fixture(scope="session")
def kafkawire_script() -> str:
    # The script the install put next to this interpreter, not whatever PATH finds first.
    found = shutil.which("kafkawire", path=str(Path(sys.executable).parent))
    assert found is not None, "the kafkawire console script is not installed in this venv"
    return found


# Put SIGINT back to its default, then become the script (exec keeps that default).
_DEFAULT_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


@pytest.fixture
def interruptible_script(kafkawire_script: str) -> list[str]:
    """The script's command, with SIGINT at its default as a terminal's foreground job has it,
    for the tests that press Ctrl-C: a test run started in the background (``make test &``,
    or a runner that starts it so) hands SIGINT down ignored, and a Python started with SIGINT
    ignored never sees Ctrl-C."""
    return [sys.executable, "-c", _DEFAULT_SIGINT, kafkawire_script]


@pytest.fixture
def run() -> Run:
    def run(
        *args: str,
        input: str | bytes | None = None,
        timeout: float = 60,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[Any]:
        overrides: dict[str, str | None] = {
            **dict.fromkeys(SHELL_ONLY.intersection(os.environ)),
            **(env or {}),
        }
        outcome: list[Result | BaseException] = []

        def invoke() -> None:
            try:
                outcome.append(in_process(list(args), input, overrides))
            except BaseException as exc:  # raised again in the test's thread
                outcome.append(exc)

        thread = threading.Thread(target=invoke, name=f"kafkawire {' '.join(args[:2])}")
        thread.start()
        thread.join(timeout)
        if thread.is_alive():
            raise subprocess.TimeoutExpired(["kafkawire", *args], timeout)
        (result,) = outcome
        if isinstance(result, BaseException):
            raise result
        if isinstance(input, bytes):
            out, err = result.stdout_bytes, result.stderr_bytes
        else:
            out, err = result.stdout, result.stderr
        return subprocess.CompletedProcess(["kafkawire", *args], result.exit_code, out, err)

    return run


def in_process(args: list[str], input: str | bytes | None, env: dict[str, str | None]) -> Result:
    """``kafkawire ARGS`` as the script's ``main`` runs it; the handlers ``--debug`` adds to
    kafkawire's logger (on this run's stderr) are taken off again afterwards."""
    logger = logging.getLogger("kafkawire")
    handlers, level = list(logger.handlers), logger.level
    logger.addHandler(logging.NullHandler())  # as main() does
    try:
        return CliRunner(catch_exceptions=False).invoke(
            cli, args, input=input, env=env, prog_name="kafkawire"
        )
    finally:
        logger.handlers[:] = handlers
        logger.setLevel(level)


def created_topic(run: Run, bootstrap: str, partitions: int) -> str:
    """A new topic of ``partitions`` partitions, made with ``kafkawire topics create``."""
    name = f"cli-{uuid.uuid4().hex[:8]}"
    created = run("topics", "create", name, "--partitions", str(partitions), "-b", bootstrap)
    assert created.returncode == 0, created.stderr
    return name
