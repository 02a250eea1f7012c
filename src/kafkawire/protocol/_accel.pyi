"""The compiled message decoders (``_accel.c``); see :mod:`kafkawire.protocol._accelerated`."""

import uuid
from collections.abc import Callable
from typing import Any

PLAN_VERSION: int

def setup(uuid_class: type[uuid.UUID], safe_unknown: uuid.SafeUUID, plan_version: int) -> None: ...

class Decoder:
    def __init__(
        self,
        cls: type[Any],
        fields: tuple[tuple[Any, ...], ...],
        tagged: tuple[tuple[Any, ...], ...],
        flexible: bool,
        holds_records: bool,
        fallback: Callable[..., tuple[Any, int]] | None,
    ) -> None: ...
    def __call__(self, buf: bytes, pos: int, view: memoryview | None = None) -> tuple[Any, int]: ...
    def raw(self, buf: bytes, pos: int, view: memoryview | None = None) -> tuple[Any, int]: ...
