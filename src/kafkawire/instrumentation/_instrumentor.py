"""``KafkawireInstrumentor``: wraps the clients' methods while instrumented, and only then.

Uninstrumented, the clients' classes hold their own functions: no wrapper, no check, nothing
of OpenTelemetry is imported (it is imported here, and only this package imports it).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import Any

import wrapt

# The module opens with "# type: ignore", so mypy sees nothing in it: BaseInstrumentor is Any.
from opentelemetry.instrumentation.instrumentor import (  # type: ignore[attr-defined]
    BaseInstrumentor,
)
from opentelemetry.instrumentation.utils import unwrap

from kafkawire.consumer import Consumer, ShareConsumer
from kafkawire.producer import Producer

from ._consumer import ConsumerTracing
from ._producer import Wrapper, traced_send
from ._semconv import Naming
from ._telemetry import Telemetry

__all__ = ["KafkawireInstrumentor"]

# The consumer classes whose getmany, __anext__ and close are traced alike: a share
# consumer's records are received and processed as a consumer's are (its group is the share
# group); its acknowledgements are not spans (the conventions' "settle" spans are optional).
_CONSUMERS: tuple[type, ...] = (Consumer, ShareConsumer)


class KafkawireInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Traces and measures kafkawire's producers and consumers (every instance, from the
    call on): ``KafkawireInstrumentor().instrument(tracer_provider=...,
    meter_provider=...)`` (both optional: the global ones by default), ``.uninstrument()``.
    ``opentelemetry-instrument`` finds it by its entry point."""

    _wrapped: list[tuple[type, str]]
    _consumers: ConsumerTracing

    def instrumentation_dependencies(self) -> Collection[str]:
        """The packages OpenTelemetry checks before instrumenting: none, as kafkawire ships it."""
        return ()  # it ships inside the library it instruments

    def _instrument(self, **kwargs: Any) -> None:
        telemetry = Telemetry(
            kwargs.get("tracer_provider"),
            kwargs.get("meter_provider"),
            Naming.from_environment(os.environ),
        )
        self._consumers = consumers = ConsumerTracing(telemetry)
        wrappers: dict[tuple[type, str], Wrapper] = {(Producer, "send"): traced_send(telemetry)}
        for cls in _CONSUMERS:
            wrappers[cls, "getmany"] = consumers.getmany
            wrappers[cls, "__anext__"] = consumers.anext
            wrappers[cls, "close"] = consumers.close
        for (cls, name), wrapper in wrappers.items():
            wrapt.wrap_function_wrapper(cls, name, wrapper)
        self._wrapped = list(wrappers)

    def _uninstrument(self, **kwargs: Any) -> None:
        for cls, name in self._wrapped:
            unwrap(cls, name)
        self._consumers.end_all()
