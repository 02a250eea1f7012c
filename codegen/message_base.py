"""The base types of the generated API messages: a request's type names its response's type.

Every generated request class derives from ``RequestMessage[ItsResponse]`` and names that class
in ``__response__``; every response class derives from ``ResponseMessage``. So a function such
as ``async def send(request: RequestMessage[R]) -> R`` returns, for mypy, the response class of
the very version the request was built at, and refuses a response passed as a request.

The bases hold nothing: with ``__slots__ = ()`` the frozen, slotted dataclasses keep exactly
their own slots, which the codecs (the compiled decoder too) fill. Their annotations declare the
class facts the generator writes on every class, so code holding a ``type[RequestMessage[Any]]``
reads them typed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, overload

__all__ = ["RequestMessage", "ResponseMessage"]


class _ApiMessage:
    """What requests and responses share: the facts of one API version, as class attributes."""

    __slots__ = ()

    __kind__: ClassVar[str]
    __api_key__: ClassVar[int]
    __version__: ClassVar[int]
    __flexible__: ClassVar[bool]
    __header_version__: ClassVar[int]

    if TYPE_CHECKING:
        # Every generated class takes its fields as keywords (each has a default), so a class
        # looked up by key and version (request_type, response_type) is called that way too;
        # the generated dataclasses declare their own, exact __init__.
        def __init__(self, **fields: Any) -> None: ...


class ResponseMessage(_ApiMessage):
    """The base of every generated response class."""

    __slots__ = ()


# Covariant: a MetadataRequest (v12) is a RequestMessage[ResponseMessage] too.
ResponseT_co = TypeVar("ResponseT_co", bound=ResponseMessage, covariant=True)
_R = TypeVar("_R", bound=ResponseMessage)


class RequestMessage(_ApiMessage, Generic[ResponseT_co]):
    """The base of every generated request class; ``ResponseT_co`` is its response class."""

    __slots__ = ()

    __route__: ClassVar[str]
    if TYPE_CHECKING:
        # Each generated class sets __response__ to its response class. For mypy it reads as
        # type[R] from a RequestMessage[R] (so a generic send decodes its answer without a
        # cast), and as type[ResponseMessage] from a request class of unknown API.
        __response__: ClassVar[_ResponseClass]


if TYPE_CHECKING:

    class _ResponseClass:
        """The type of ``__response__`` seen from a request (never created: typing only)."""

        @overload
        def __get__(self, request: None, owner: Any) -> type[ResponseMessage]: ...
        @overload
        def __get__(self, request: RequestMessage[_R], owner: Any) -> type[_R]: ...
        def __get__(self, request: Any, owner: Any) -> Any: ...
