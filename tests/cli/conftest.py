"""Run the installed ``kafkawire`` console script the way a user does: in a subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafkawire.cli._settings import ENVIRONMENT

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="session")
def kafkawire_script() -> str:
    # The script the install put next to this interpreter, not whatever PATH finds first.
    found = shutil.which("kafkawire", path=str(Path(sys.executable).parent))
    assert found is not None, "the kafkawire console script is not installed in this venv"
    return found


@pytest.fixture
def run(kafkawire_script: str) -> Run:
    # The tests say which broker they mean, and how to reach it; a KAFKAWIRE_BOOTSTRAP (or
    # security setting) from the shell would not.
    shell_only = {"KAFKAWIRE_BOOTSTRAP", "KAFKAWIRE_COMMAND_CONFIG", *ENVIRONMENT}
    base_env = {k: v for k, v in os.environ.items() if k not in shell_only}

    def run(
        *args: str,
        input: str | bytes | None = None,
        timeout: float = 60,
        env: dict[str, str] | None = None,
    ) -> Any:
        text = not isinstance(input, bytes)
        return subprocess.run(
            [kafkawire_script, *args],
            input=input,
            capture_output=True,
            text=text,
            timeout=timeout,
            check=False,
            env={**base_env, **(env or {})},
        )

    return run
