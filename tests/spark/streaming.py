"""Running a streaming query to its end in a test, through Spark's one start-up fault."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyspark.errors import StreamingQueryException

# Spark gives the Python process of a streaming source 10 s (hard-coded in
# PythonWorkerFactory) to connect back; a test machine under load misses that now and then.
_NO_WORKER = "Python worker failed to connect back"
_ATTEMPTS = 3


def run_to_end(start: Callable[[], Any]) -> Any:
    """The query ``start()`` returns, waited for to its end; started again (as a user restarts
    a failed query) when Spark could not start its Python worker, which happens before the
    query has run any batch, so the restart changes nothing a test checks."""
    for _ in range(_ATTEMPTS - 1):
        query = start()
        try:
            query.awaitTermination()
        except StreamingQueryException as exc:
            ran = any(p["numInputRows"] for p in query.recentProgress)
            if _NO_WORKER not in str(exc) or ran:
                raise
            continue
        return query
    query = start()
    query.awaitTermination()
    return query
