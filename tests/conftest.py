"""Shared pytest set-up for kafkawire's tests.

The broker fixtures (``tansu_broker``, ``mock_cluster``, ``kafka_broker``) come from the same
plugin that users of ``kafkawire.testing`` load.

Hypothesis budgets, by ``KAFKAWIRE_HYPOTHESIS_PROFILE`` (``kafkawire``, the default; ``quick``
for `make check`; ``thorough``): ``tests/budgets.py``.

``pki`` (a throwaway CA and certificates, ``tests/net/pki.py``) and ``secured_cluster`` (the
fake cluster behind TLS and SASL, in a thread: ``tests/net/secure_front.py``) serve the tests of
every entry point against a secured cluster.
"""

import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings

from tests.budgets import PROFILE, register_profiles
from tests.net.pki import Pki, make_pki
from tests.net.sasl_server import SaslSession
from tests.net.secure_front import ThreadedSecureCluster
from tests.net.secured import server_context
from tests.worker_groups import SharedWorkerScheduling

pytest_plugins = ["kafkawire.testing.pytest_plugin"]

register_profiles()
settings.load_profile(PROFILE)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` (what `make test` runs) with the Spark tests on one worker:
    ``tests/worker_groups.py``."""
    if config.getvalue("dist") != "loadgroup":
        return None
    return SharedWorkerScheduling(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The share tests' own mock cluster (``share_mock``) is a broker too: ``integration``,
    out of `make check` (the plugin marks the users of its broker fixtures)."""
    for item in items:
        if "share_mock" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """A throwaway CA, a broker and a client certificate it signed, and a CA not trusted."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def secured_cluster(pki: Pki) -> Iterator[ThreadedSecureCluster]:
    """A fake cluster behind TLS (``pki``'s CA) and SASL (the users of ``sasl_server``), on an
    event loop in a thread: for tests that block, on Spark or a subprocess."""
    tls = server_context(pki.server_cert, pki.server_key)
    with ThreadedSecureCluster(ssl=tls, sasl=SaslSession) as cluster:
        yield cluster
