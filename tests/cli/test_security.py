"""``kafkawire produce`` and ``consume`` against a SASL_SSL cluster, settings by Java's names.

The same three settings (security.protocol, sasl.mechanism, sasl.jaas.config, and the test CA)
given three ways: ``-X``, ``--command-config`` (a Java properties file) and ``KAFKAWIRE_*``
variables. The cluster is the fake cluster behind the TLS and SASL front of ``tests/net``, in
a thread of this process; the command runs in this process too (``run``, conftest.py).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.net.pki import Pki
from tests.net.secure_front import ThreadedSecureCluster
from tests.net.secured import PASSWORD, WRONG_PASSWORD, jaas

from .conftest import Run


def settings(
    pki: Pki, mechanism: str = "SCRAM-SHA-256", password: str = PASSWORD
) -> dict[str, str]:
    return {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": mechanism,
        "sasl.jaas.config": jaas(mechanism, password=password),
        "ssl.truststore.location": str(pki.ca),
    }


def as_x(given: dict[str, str]) -> list[str]:
    return [arg for name, text in given.items() for arg in ("-X", f"{name}={text}")]


def as_file(given: dict[str, str], path: Path) -> str:
    # A JAAS line's quotes and spaces need no escaping in a properties file.
    path.write_text("".join(f"{name}={text}\n" for name, text in given.items()))
    return str(path)


def as_environment(given: dict[str, str]) -> dict[str, str]:
    return {"KAFKAWIRE_" + name.upper().replace(".", "_"): text for name, text in given.items()}


def test_produce_with_x_then_consume_with_a_file_and_with_the_environment(
    run: Run, secured_cluster: ThreadedSecureCluster, pki: Pki, tmp_path: Path
) -> None:
    topic = f"cli-{uuid.uuid4().hex[:8]}"
    given = settings(pki)
    produced = run(
        "produce", topic, "-b", secured_cluster.bootstrap, *as_x(given), input="one\ntwo\nthree\n"
    )
    assert produced.returncode == 0, produced.stderr
    config = as_file(
        {"bootstrap.servers": secured_cluster.bootstrap, **given}, tmp_path / "c.properties"
    )
    read = ["--from-beginning", "--max-messages", "3", "--format", "json"]
    by_file = run("consume", topic, "--command-config", config, *read)
    assert by_file.returncode == 0, by_file.stderr
    assert [json.loads(line)["value"] for line in by_file.stdout.splitlines()] == [
        "one",
        "two",
        "three",
    ]
    by_env = run(
        "consume", topic, "-b", secured_cluster.bootstrap, *read, env=as_environment(given)
    )
    assert by_env.returncode == 0, by_env.stderr
    assert by_env.stdout == by_file.stdout
    assert secured_cluster.front is not None
    assert {s.principal for s in secured_cluster.front.sessions} == {"alice"}


def test_x_goes_over_the_file_and_the_file_over_the_environment(
    run: Run, secured_cluster: ThreadedSecureCluster, pki: Pki, tmp_path: Path
) -> None:
    good, bad = settings(pki, "PLAIN"), settings(pki, "PLAIN", WRONG_PASSWORD)
    config = as_file(bad, tmp_path / "bad.properties")
    fixed = run(
        "topics", "list", "-b", secured_cluster.bootstrap, "--command-config", config, *as_x(good),
        env=as_environment(bad),
    )  # fmt: skip
    assert fixed.returncode == 0, fixed.stderr
    config = as_file(good, tmp_path / "good.properties")
    over_env = run(
        "api-versions", "-b", secured_cluster.bootstrap, "--command-config", config,
        env=as_environment(bad),
    )  # fmt: skip
    assert over_env.returncode == 0, over_env.stderr


@pytest.mark.parametrize("debug", [[], ["--debug"]], ids=["plain", "debug"])
def test_a_wrong_password_is_one_line_without_the_secret(
    run: Run, secured_cluster: ThreadedSecureCluster, pki: Pki, debug: list[str]
) -> None:
    wrong = settings(pki, "SCRAM-SHA-512", WRONG_PASSWORD)
    result = run(
        "consume", "any", "-b", secured_cluster.bootstrap, *as_x(wrong), "--exit-at-end", *debug
    )
    assert result.returncode == 1
    assert "SASL SCRAM-SHA-512 authentication" in result.stderr
    if not debug:
        assert result.stderr.count("\n") == 1, result.stderr
    assert WRONG_PASSWORD not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-X", "sasl.mechansim=PLAIN"],
            "-X sasl.mechansim is not a setting kafkawire has; did you mean sasl.mechanism?",
        ),
        (["-X", "security.protocol"], "'security.protocol' is not KEY=VALUE"),
        (["-X", "sasl.mechanism=PLAIN"], "sasl.mechanism needs security.protocol 'SASL_SSL'"),
        (["--command-config", "/nowhere.properties"], "/nowhere.properties: No such file"),
        (
            ["-X", "request.timeout.ms=soon"],
            "-X request.timeout.ms cannot be 'soon': it takes an integer",
        ),
    ],
)
def test_settings_that_cannot_be_used_are_usage_errors(
    run: Run, secured_cluster: ThreadedSecureCluster, args: list[str], message: str
) -> None:
    result = run("topics", "list", "-b", secured_cluster.bootstrap, *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr


def test_bootstrap_servers_is_needed_from_somewhere(run: Run) -> None:
    result = run("topics", "list")
    assert result.returncode == 2
    assert "give --bootstrap-server (or KAFKAWIRE_BOOTSTRAP" in result.stderr
