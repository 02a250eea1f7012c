"""Hatch build hook: compile kafkawire's optional C extensions.

- ``kafkawire.records._accel``: the v2 record loop;
- ``kafkawire.protocol._accel``: the message-body decoders;
- ``kafkawire.producer._accel``: the producer's per-record steps (key hash, append).

Each is an accelerator, never a requirement, and each is built on its own: when there is no
compiler, or a compilation fails for any reason, the build warns and goes on without that
extension, and kafkawire uses the pure-Python code it stands in for.

- editable installs (``pip install -e .``) compile them in place, next to their ``.c`` files,
  where the editable import finds them (``*.so`` is git-ignored); a build that fails removes
  the previous in-place build, so the install matches what was built;
- wheels get them through ``force_include``, and only then are tagged for this interpreter and
  platform (``infer_tag``); with none built the wheel stays ``py3-none-any``.

The compiler is the one Python was built with, driven by setuptools' ``build_ext`` (which
honours ``CC``, ``CFLAGS`` and friends); setuptools is therefore a build requirement.
"""

from __future__ import annotations

import contextlib
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# extension -> what kafkawire uses without it
EXTENSIONS = {
    "kafkawire.records._accel": "its pure-Python record decoder",
    "kafkawire.protocol._accel": "its pure-Python message decoders",
    "kafkawire.producer._accel": "its pure-Python key hash and record append",
}
KEPT = Path("build", "accel")


def source_of(extension: str) -> Path:
    """``kafkawire.records._accel`` -> ``src/kafkawire/records/_accel.c``."""
    return Path("src", *extension.split(".")).with_suffix(".c")


class AccelBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"
    _kept: list[Path]

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        self._kept = []
        if self.target_name != "wheel":
            return
        for extension, fallback in EXTENSIONS.items():
            self._build(extension, fallback, version, build_data)
        if self._kept:
            build_data["pure_python"] = False
            build_data["infer_tag"] = True

    def _build(self, extension: str, fallback: str, version: str, data: dict[str, Any]) -> None:
        root = Path(self.root)
        source = source_of(extension)
        package_dir = root / source.parent
        if version == "editable":  # this interpreter's previous build (others' may stay)
            suffix = sysconfig.get_config_var("EXT_SUFFIX")
            (package_dir / f"{source.stem}{suffix}").unlink(missing_ok=True)
        with tempfile.TemporaryDirectory(prefix="kafkawire-build-") as tmp:
            try:
                built = _compile(root, extension, Path(tmp))
            except Exception as exc:  # any failure: no compiler, no headers, a compile error
                self.app.display_warning(
                    f"kafkawire: not building the optional C extension {extension} ({exc}); "
                    f"kafkawire will use {fallback}"
                )
                return
            if version == "editable":
                target = package_dir / built.name
                # A new file moved into place: a running process may have the old one mapped.
                partial = target.with_name(f".{target.name}.partial")
                partial.write_bytes(built.read_bytes())
                partial.replace(target)
                self.app.display_info(f"kafkawire: built {target.relative_to(root)}")
                return
            # Kept outside the temporary directory until the wheel is written.
            kept = root / KEPT / extension / built.name
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_bytes(built.read_bytes())
        self._kept.append(kept)
        package = extension.rpartition(".")[0].replace(".", "/")
        data["force_include"][str(kept)] = f"{package}/{built.name}"
        self.app.display_info(f"kafkawire: built {extension} ({built.name})")

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        root = Path(self.root)
        for kept in getattr(self, "_kept", []):
            kept.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                kept.parent.rmdir()
        with contextlib.suppress(OSError):  # build/accel and build/, if now empty
            (root / KEPT).rmdir()
            (root / KEPT).parent.rmdir()
        self._kept = []


def _compile(root: Path, extension: str, tmp: Path) -> Path:
    """Compile ``extension`` under ``tmp``; return the path of the built module."""
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    module = Extension(extension, sources=[str(root / source_of(extension))])
    distribution = Distribution({"name": "kafkawire-accel", "ext_modules": [module]})
    command = build_ext(distribution)
    command.build_lib = str(tmp / "lib")
    command.build_temp = str(tmp / "temp")
    command.inplace = False
    command.ensure_finalized()
    # distutils prints its compiler commands on stdout, which a PEP 517 frontend may read.
    stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        command.run()
    finally:
        sys.stdout = stdout
    built = Path(command.get_ext_fullpath(extension))
    if not built.is_file():
        raise RuntimeError(f"{built} was not built")
    return built
