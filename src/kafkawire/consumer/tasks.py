"""The consumer's background tasks, owned by one :class:`~kafkawire.cluster.supervisor.Supervisor`
(the rules are there): the fetcher's loop and its Fetch to each leader, the group membership and
a KIP-848 reconciliation, an auto-commit, the positioning of partitions from the group's
commits. An error a task does not expect is raised once by the application's next call
(``getmany``, ``commit``, ``position``, ...) as a :class:`~.errors.BackgroundTaskError` naming
the task; the fetcher and the membership are lasting tasks, run again after
``retry_backoff_max_ms``; a one-shot task (a fetch, a commit) is done anew by its owner.
"""

from __future__ import annotations

import logging

from kafkawire.cluster.supervisor import Supervisor, is_transient

from .errors import BackgroundTaskError

__all__ = ["BackgroundTasks", "is_transient"]

_log = logging.getLogger(__name__)


class BackgroundTasks(Supervisor):
    """The consumer's supervisor: failures wait in its inbox as :class:`BackgroundTaskError`."""

    def __init__(self, restart_delay: float, client: str = "consumer") -> None:
        super().__init__(client, log=_log, restart_delay=restart_delay, wrap=BackgroundTaskError)
