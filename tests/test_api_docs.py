"""Every public name of kafkawire is documented on the documentation site.

The public packages are those the API reference renders (the ``::: module`` lines of
docs/reference/*.md). Each name in such a package's ``__all__`` (class, function, constant or
type alias), and each public method and property of such a class (its own and those it
inherits from kafkawire's classes), must have a docstring as the site reads it: griffe's view
of the source, through the site's own extension (docs/extensions/griffe_kafkawire.py). The
fields of classes are shown with their types whether or not they have one.
"""

from __future__ import annotations

import importlib
import re
from functools import cache
from pathlib import Path

import griffe
import pytest

ROOT = Path(__file__).parents[1]
REFERENCE = ROOT / "docs" / "reference"
EXTENSION = ROOT / "docs" / "extensions" / "griffe_kafkawire.py"
# What the reference must cover besides every top-level package, whatever else it adds.
REQUIRED = {
    "kafkawire.cluster.security",
    "kafkawire.testing.fake",
    "kafkawire.testing.pytest_plugin",
}
# Top-level packages the reference leaves out, and why. Any other one (a new package too) must
# have a ``::: kafkawire.<name>`` line in docs/reference/.
NOT_IN_REFERENCE = {
    "kafkawire.cli": "the command line; its guide is docs/guide/cli.md",
    "kafkawire.messages": "generated from Kafka's schemas, 686 classes: the protocol guide",
    "kafkawire.operations": "the wire operations the clients share, not called by applications",
}


def _rendered_modules() -> list[str]:
    return sorted(
        {
            path
            for page in REFERENCE.glob("*.md")
            for path in re.findall(r"^::: (\S+)", page.read_text(), flags=re.M)
        }
    )


PUBLIC = _rendered_modules()


@cache
def _package() -> griffe.Module:
    extensions = griffe.load_extensions(str(EXTENSION))
    package = griffe.load("kafkawire", search_paths=[ROOT / "src"], extensions=extensions)
    assert isinstance(package, griffe.Module)
    return package


def _target(obj: griffe.Object | griffe.Alias) -> griffe.Object:
    target = obj.final_target if isinstance(obj, griffe.Alias) else obj
    assert isinstance(target, griffe.Object)
    return target


def _undocumented_members(cls: griffe.Class) -> list[str]:
    """Public methods and properties of ``cls`` (own or inherited from kafkawire) lacking one."""
    missing = []
    for name, member in cls.all_members.items():
        if name.startswith("_") or not member.path.startswith("kafkawire."):
            continue
        target = _target(member)
        if (target.is_function or "property" in target.labels) and not target.docstring:
            missing.append(f"{cls.name}.{name}")
    return missing


def _undocumented(module: str) -> list[str]:
    exported = importlib.import_module(module).__all__
    missing = []
    for name in exported:
        target = _target(_package()[module.removeprefix("kafkawire.")][name])
        if not target.docstring:
            missing.append(name)
        if isinstance(target, griffe.Class):
            missing += _undocumented_members(target)
    return missing


def _top_level_packages() -> set[str]:
    """``kafkawire.<name>`` for each public module or package of kafkawire with an ``__all__``."""
    return {
        member.path
        for name, member in _package().members.items()
        if not name.startswith("_") and not member.is_alias and "__all__" in member.members
    }


def test_the_reference_renders_every_public_package() -> None:
    wanted = (_top_level_packages() - NOT_IN_REFERENCE.keys()) | REQUIRED
    assert wanted - set(PUBLIC) == set()


@pytest.mark.parametrize("module", PUBLIC)
def test_every_public_name_has_a_docstring(module: str) -> None:
    assert _undocumented(module) == []
