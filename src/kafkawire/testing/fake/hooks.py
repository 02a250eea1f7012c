"""Control hooks: script any answer of the fake cluster, as franz-go's kfake ``ControlKey`` does.

``cluster.control(fn, api_key=None, keep=False)`` puts ``fn(request, ctx)`` before the handler
of every request (of that API). Hooks run in the order they were added; each returns

- a response (of the request's API, at any version: it is converted to the request's): the
  broker answers with it and the handler never runs;
- ``None``: not handled here; the next hook, then the handler, answers;
- :data:`CUT`: the broker closes the connection without answering;
- :data:`DROP`: the broker never answers this request (the connection stays open, and the
  requests after it wait behind it, as a broker answers one connection in order).

An ``async`` hook may ``await ctx.sleep(seconds)`` or ``await ctx.hold(awaitable)`` first (a
slow broker, or one that answers when the test says), and ``await ctx.handle()`` to get the
handler's own answer, to return it changed; ``ctx.response(**values)`` builds an answer of the
request's API at its version from values. Ready-made hooks (errors per partition, a refused
topic, delays, holds) are in :mod:`.faults`. A hook that
raises is a bug in the test: the connection is cut and the cluster raises the error when it
closes.

A hook not ``keep``-ed is spent by the first request it acts on (answers, cuts, drops or
delays) and removed; one that returns ``None`` without sleeping stays for the next request,
like kfake's (``ctx.remove()`` removes it anyway). ``keep=True`` keeps it until
``hook.remove()``.
"""

from __future__ import annotations

import asyncio
import enum
import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkawire.protocol import RequestHeader

from .build import build, response_class
from .call import Call

if TYPE_CHECKING:
    from .cluster import FakeCluster

__all__ = ["CUT", "DROP", "Action", "Hook", "HookContext", "HookFunction", "Hooks"]

logger = logging.getLogger(__name__)


class Action(enum.Enum):
    """What a hook may do instead of answering."""

    CUT = "cut the connection"
    DROP = "never answer"


CUT = Action.CUT
"""A hook's answer: close the connection without answering."""
DROP = Action.DROP
"""A hook's answer: never answer this request (the connection stays open)."""

HookFunction = Callable[[Any, "HookContext"], Any]


@dataclass(eq=False)
class Hook:
    """A hook in place; ``remove()`` takes it out."""

    function: HookFunction
    api_key: int | None
    keep: bool
    _hooks: Hooks

    def remove(self) -> None:
        """Take the hook out; the requests after it are answered without it."""
        self._hooks.remove(self)


class HookContext:
    """What a hook knows of the request besides its body, and what it may do."""

    def __init__(self, hook: Hook, call: Call, cluster: FakeCluster) -> None:
        self._hook = hook
        self._call = call
        self.cluster = cluster
        self.acted = False

    @property
    def node_id(self) -> int:
        """The broker that received the request."""
        return self._call.node_id

    @property
    def connection_id(self) -> int:
        """The connection the request came on (unique within the cluster)."""
        return self._call.connection_id

    @property
    def api_key(self) -> int:
        """The request's API key."""
        return self._call.api_key

    @property
    def api_version(self) -> int:
        """The request's version."""
        return self._call.version

    @property
    def header(self) -> RequestHeader:
        """The request's header (client id, correlation id, ...)."""
        return self._call.header

    async def sleep(self, seconds: float) -> None:
        """Delay the answer (the connection's later requests wait too)."""
        self.acted = True
        await asyncio.sleep(seconds)

    async def hold(self, until: Awaitable[Any]) -> None:
        """Delay the answer until ``until`` is done (an event a test sets, a future)."""
        self.acted = True
        await until

    def response(self, **values: Any) -> Any:
        """A response of the request's API at its version, from ``values`` (those the version
        has no field for are left out): ``ctx.response(error_code=31)``."""
        return build(response_class(self.api_key, self.api_version), **values)

    async def handle(self) -> Any:
        """The handler's answer to this request, computed now (and only once)."""
        return await self._call.answer()

    def remove(self) -> None:
        """Take this hook out after this request, whatever it returns."""
        self._hook.remove()


class Hooks:
    def __init__(self) -> None:
        self._hooks: list[Hook] = []
        self.errors: list[Exception] = []

    def add(self, function: HookFunction, api_key: int | None, keep: bool) -> Hook:
        hook = Hook(function, api_key, keep, self)
        self._hooks.append(hook)
        return hook

    def remove(self, hook: Hook) -> None:
        if hook in self._hooks:
            self._hooks.remove(hook)

    async def run(self, call: Call, cluster: FakeCluster) -> Any:
        """The first hook's answer (a response or an :class:`Action`), or None for none."""
        for hook in list(self._hooks):
            if hook not in self._hooks or hook.api_key not in (None, call.api_key):
                continue
            context = HookContext(hook, call, cluster)
            try:
                result = hook.function(call.request, context)
                if inspect.isawaitable(result):
                    result = await result
            except Exception as exc:  # a test's hook failed: report it when the cluster closes
                logger.exception("hook %r failed on %s", hook.function, call.api_name)
                self.errors.append(exc)
                self.remove(hook)
                return CUT
            if result is None and not context.acted:
                continue
            if not hook.keep:
                self.remove(hook)
            if result is not None:
                return result
        return None
