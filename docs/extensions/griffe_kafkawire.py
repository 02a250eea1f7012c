"""A griffe extension for kafkawire's documentation site (mkdocs.yml loads it).

kafkawire's docstrings are written for people reading the source: Sphinx roles
(``:class:`~kafkawire.cluster.TopicPartition```), literal blocks introduced by ``::``. The site
renders docstrings as Markdown, so this extension rewrites each role into a cross-reference
(an optional one: a name that is documented on no page stays plain code, not a broken link),
and ends a paragraph that introduces a literal block with one colon, not two. A method that
overrides a documented one without a docstring of its own shows the one it overrides, as
``inspect.getdoc`` does.

The broker error classes of :mod:`kafkawire.errors` take their docstrings from the table in
:mod:`kafkawire.error_codes` when Python creates them; reading the source shows none, so for
that module the docstring is taken from the class Python made.
"""

from __future__ import annotations

import html
import importlib
import re
from collections.abc import Iterator
from typing import Any

import griffe

__all__ = ["KafkawireDocs", "documented_objects"]

_ROLE = re.compile(r":(?:class|func|meth|mod|attr|exc|data|obj|const):`(~?)(\.?)([^`]+)`")
_LITERAL_BLOCK = re.compile(r"::\n(?=\n[ \t])")
# Modules whose classes are given their docstrings at run time (see the module docstring).
_RUNTIME_DOCSTRINGS = frozenset({"kafkawire.errors"})


def documented_objects(obj: griffe.Object) -> Iterator[griffe.Object]:
    """``obj`` and every module, class, function and attribute defined inside it (not aliases)."""
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from documented_objects(member)  # type: ignore[arg-type]


def _identifier(obj: griffe.Object, name: str, relative: bool) -> str:
    """The dotted path that ``name`` stands for where ``obj``'s docstring mentions it."""
    first, _, rest = name.partition(".")
    scope = obj if obj.is_module or obj.is_class or relative else obj.parent
    try:
        path = scope.resolve(first) if scope is not None else name
    except griffe.NameResolutionError:
        return name
    return f"{path}.{rest}" if rest else path


def _cross_references(obj: griffe.Object, text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        short, dot, name = match.groups()
        identifier = _identifier(obj, name, relative=bool(dot))
        title = name.rsplit(".", 1)[-1] if short else name
        return (
            f'<autoref identifier="{html.escape(identifier)}" optional>'
            f"<code>{html.escape(title)}</code></autoref>"
        )

    return _LITERAL_BLOCK.sub(":\n", _ROLE.sub(replace, text))


def _inherited_docstring(obj: griffe.Object) -> griffe.Docstring | None:
    """The docstring of the nearest member of that name in the base classes of ``obj``'s class."""
    cls = obj.parent
    if not isinstance(cls, griffe.Class) or not (obj.is_function or obj.is_attribute):
        return None
    for base in cls.mro():
        member = base.members.get(obj.name)
        if member is not None and not member.is_alias and member.docstring is not None:
            return griffe.Docstring(member.docstring.value, parent=obj)
    return None


def _runtime_docstring(obj: griffe.Object) -> str | None:
    module = importlib.import_module(obj.module.path)
    value: Any = module
    for part in obj.path.removeprefix(obj.module.path + ".").split("."):
        value = getattr(value, part)
    doc = vars(value).get("__doc__") if isinstance(value, type) else None
    return doc if isinstance(doc, str) else None


class KafkawireDocs(griffe.Extension):
    """Markdown cross-references for Sphinx roles, and docstrings made at run time."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Rewrite every docstring of the ``kafkawire`` package once it is loaded."""
        if pkg.path != "kafkawire":
            return
        for obj in documented_objects(pkg):
            if obj.docstring is None and obj.is_class and obj.module.path in _RUNTIME_DOCSTRINGS:
                doc = _runtime_docstring(obj)
                if doc is not None:
                    obj.docstring = griffe.Docstring(doc, parent=obj)
            if obj.docstring is None:
                obj.docstring = _inherited_docstring(obj)
            if obj.docstring is not None:
                obj.docstring.value = _cross_references(obj, obj.docstring.value)
