"""What :mod:`.fetch_request` takes from the fetch sessions (:mod:`.fetching.fetch_session`),
at the import path it names.

Only until that module's wire work moves to ``kafkawire.operations`` (issue 20): then this
module goes.
"""

from .fetching.fetch_session import FINAL_EPOCH, NO_SESSION, PartitionFetch

__all__ = ["FINAL_EPOCH", "NO_SESSION", "PartitionFetch"]
