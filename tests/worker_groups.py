"""Which tests share a pytest-xdist worker under ``make test`` (``--dist loadgroup``).

Every Spark test of ``tests/spark`` runs on one worker, so one JVM (the session-scoped ``spark``
fixture, 10-30 s to start and a core while it does) serves them all instead of one JVM per
worker; the demo's two runs (each a process with a JVM of its own) share another worker, one
after the other; the API reference's tests, which load griffe's view of the package once per
process, share a third. Being the largest groups they are dealt out first, so they do not end
the run alone. Every other test is a group of its own, dealt out as a worker asks for more.

The groups are told by path, here on the controller, rather than by ``xdist_group`` marks:
pytest-xdist 3.8 puts a mark's group into the test's node id, which pytest 9.2 no longer lets a
plugin change, so the marks would silently do nothing.
"""

from __future__ import annotations

from xdist.scheduler import LoadGroupScheduling

__all__ = ["SharedWorkerScheduling", "group_of"]

# Path prefixes of node ids, and the group of the tests under each; the first that matches.
GROUPS = (
    ("tests/spark/test_demo.py::", "spark-demo"),
    ("tests/spark/", "spark-session"),
    # griffe's view of the package, loaded once per process (20 s on a loaded machine)
    ("tests/test_api_docs.py::", "api-docs"),
)


def group_of(nodeid: str) -> str | None:
    """The group of the test ``nodeid``, or None for a test that is a group of its own."""
    return next((group for prefix, group in GROUPS if nodeid.startswith(prefix)), None)


class SharedWorkerScheduling(LoadGroupScheduling):
    """xdist's ``loadgroup`` with the groups of :data:`GROUPS` (and any ``xdist_group`` mark
    that does reach the node id)."""

    def _split_scope(self, nodeid: str) -> str:
        group = group_of(nodeid)
        return super()._split_scope(nodeid) if group is None else group
