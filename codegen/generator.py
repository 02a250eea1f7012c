"""Step 2: ``schema-json/`` -> ``src/kafkawire/messages/``.

Layout: one package per API (``messages/metadata/``) with one module per version (``v12.py``)
holding that version's request and response classes and their nested structs; one package per
data message and header (``messages/request_header/v2.py``); the upstream test messages under
``messages/testdata/``; ``messages/_base.py``, the base types of requests and responses (copied
from ``codegen/message_base.py``); and ``messages/__init__.py``, the registry from (api key,
version) to classes.
"""

from __future__ import annotations

from pathlib import Path

from .model import Message, Struct, snake_case
from .render import BASE_MODULE, TopLevel, header, module
from .routing import route

# Kafka's exceptions to "flexible means the newer header": ControlledShutdown v0 sends request
# header v0, and ApiVersions responses always use response header v0 so that a client can read
# the error of a version the broker does not support.
_CONTROLLED_SHUTDOWN = 7
_API_VERSIONS = 18


def _request_header_version(api_key: int, version: int, flexible: bool) -> int:
    if api_key == _CONTROLLED_SHUTDOWN and version == 0:
        return 0
    return 2 if flexible else 1


def _response_header_version(api_key: int, flexible: bool) -> int:
    return 0 if api_key == _API_VERSIONS else int(flexible)


def _names(struct: Struct) -> set[str]:
    return {s.name for s in struct.nested()}


def _api_module(request: Message, response: Message, version: int) -> str:
    api_key = request.api_key
    assert api_key is not None
    api = request.name.removesuffix("Request")
    req, resp = request.resolve(version), response.resolve(version)
    clashes = (_names(req) & _names(resp)) - {req.name, resp.name}

    def names(struct: Struct, prefix: str) -> dict[str, str]:
        return {n: f"{prefix}{n}" if n in clashes else n for n in _names(struct)}

    # The response first: the request class derives from RequestMessage[its response class]
    # and names it in __response__, both evaluated when the module is imported.
    tops = [
        TopLevel(
            resp,
            {
                "__kind__": "response",
                "__api_key__": api_key,
                "__version__": version,
                "__flexible__": resp.flexible,
                "__header_version__": _response_header_version(api_key, resp.flexible),
            },
            names(resp, response.name),
            f"{response.name} version {version} (API key {api_key}).",
        ),
        TopLevel(
            req,
            {
                "__kind__": "request",
                "__api_key__": api_key,
                "__version__": version,
                "__flexible__": req.flexible,
                "__header_version__": _request_header_version(api_key, version, req.flexible),
                "__route__": route(api, list(request.listeners or []) or None),
            },
            names(req, request.name),
            f"{request.name} version {version} (API key {api_key}).",
            response=names(resp, response.name)[resp.name],
        ),
    ]
    doc = f"{api} (API key {api_key}) version {version}: request and response."
    return module(doc, [request.source, response.source], tops)


def _data_module(message: Message, version: int) -> str:
    struct = message.resolve(version)
    top = TopLevel(
        struct,
        {"__kind__": message.kind, "__version__": version, "__flexible__": struct.flexible},
        {n: n for n in _names(struct)},
        f"{message.name} version {version}.",
    )
    return module(f"{message.name} version {version}.", [message.source], [top])


def _package_init(doc: str, sources: list[str]) -> str:
    return header(sources) + f'"""{doc}"""\n'


def _package(message: Message) -> str:
    package = snake_case(message.name.removesuffix("Request"))
    return f"testdata/{package}" if message.is_test else package


def generate_all(schema_dir: Path) -> dict[str, str]:
    messages = [Message.load(p, schema_dir) for p in sorted(schema_dir.rglob("*.json"))]
    files: dict[str, str] = {}
    apis: dict[int, dict[str, Message]] = {}
    for message in messages:
        if message.api_key is not None:
            apis.setdefault(message.api_key, {})[message.kind] = message
            continue
        package = _package(message)
        files[f"{package}/__init__.py"] = _package_init(
            f"{message.name}: versions {message.valid}, one module each.", [message.source]
        )
        for version in message.valid:
            files[f"{package}/v{version}.py"] = _data_module(message, version)
    if any(m.is_test for m in messages):
        files["testdata/__init__.py"] = _package_init(
            "Kafka's own test messages, which exercise corners of the format.", []
        )
    for api_key, pair in sorted(apis.items()):
        request, response = pair["request"], pair["response"]
        if request.valid != response.valid:
            raise ValueError(f"API {api_key}: request and response declare different versions")
        package = _package(request)
        files[f"{package}/__init__.py"] = _package_init(
            f"{request.name.removesuffix('Request')} (API key {api_key}): versions "
            f"{request.valid}, one module each.",
            [request.source, response.source],
        )
        for version in request.valid:
            files[f"{package}/v{version}.py"] = _api_module(request, response, version)
    files["__init__.py"] = _registry(apis)
    files[_BASE_FILE] = _base_module()
    return files


_BASE_SOURCE = Path(__file__).with_name("message_base.py")
_BASE_FILE = BASE_MODULE.removeprefix("kafkawire.messages.") + ".py"


def _base_module() -> str:
    """The base types, copied from codegen/ with a header.

    Hand-written, but every file under ``messages/`` is this step's output (it deletes what it
    did not write), so the base module is too; mypy and ruff check both copies.
    """
    return header([f"codegen/{_BASE_SOURCE.name}"]) + _BASE_SOURCE.read_text(encoding="utf-8")


_REGISTRY_BODY = '''
import importlib
from typing import Any, NamedTuple

from kafkawire.errors import UnknownMessageError
from kafkawire.messages._base import RequestMessage, ResponseMessage

__all__ = ["APIS", "ApiInfo", "RequestMessage", "ResponseMessage", "request_type", "response_type"]


class ApiInfo(NamedTuple):
    """Where one API's generated classes live and which versions kafkawire knows."""

    name: str
    module: str
    request: str
    response: str
    versions: range


APIS: dict[int, ApiInfo] = {
%(entries)s
}


def _lookup(api_key: int, version: int, which: str) -> type[Any]:
    info = APIS.get(api_key)
    if info is None:
        raise UnknownMessageError(f"no Kafka API with key {api_key} is known to kafkawire")
    if version not in info.versions:
        known = f"{info.versions.start}-{info.versions.stop - 1}"
        raise UnknownMessageError(
            f"{info.name} (API key {api_key}) has no version {version}; known versions: {known}"
        )
    module = importlib.import_module(f"{__name__}.{info.module}.v{version}")
    cls: type[Any] = getattr(module, getattr(info, which))
    return cls


def request_type(api_key: int, version: int) -> type[RequestMessage[Any]]:
    """The generated request class for an API key and version (imported on first use)."""
    return _lookup(api_key, version, "request")


def response_type(api_key: int, version: int) -> type[ResponseMessage]:
    """The generated response class for an API key and version (imported on first use)."""
    return _lookup(api_key, version, "response")
'''

_REGISTRY_DOC = '''"""Kafka's messages as generated dataclasses, one module per API and version.

Import a class directly (``from kafkawire.messages.metadata.v12 import MetadataRequest``) or
look one up with :func:`request_type` and :func:`response_type`, which import on first use.
Every request class is a :class:`RequestMessage` of its response class (``__response__``);
every response class is a :class:`ResponseMessage`.
"""
'''


def _registry(apis: dict[int, dict[str, Message]]) -> str:
    entries = []
    for api_key, pair in sorted(apis.items()):
        request, response = pair["request"], pair["response"]
        low, stop = request.valid.low, request.valid.high + 1
        versions = f"range({low}, {stop})" if low else f"range({stop})"
        entries.append(
            f'    {api_key}: ApiInfo("{request.name.removesuffix("Request")}", '
            f'"{_package(request)}", "{request.name}", "{response.name}", {versions}),'
        )
    sources = ["schema-json/*Request.json", "schema-json/*Response.json"]
    return header(sources) + _REGISTRY_DOC + _REGISTRY_BODY % {"entries": "\n".join(entries)}
