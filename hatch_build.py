"""Hatch build hook: compile the optional C extension ``kafkawire.records._accel``.

The extension is an accelerator, never a requirement: when there is no compiler, or the
compilation fails for any reason, the build warns and goes on, and kafkawire uses its
pure-Python record loop.

- editable installs (``pip install -e .``) compile it in place, next to ``_accel.c`` in
  ``src/kafkawire/records/``, where the editable import finds it (``*.so`` is git-ignored); a
  build that fails removes the previous in-place build, so the install matches what was built;
- wheels get it through ``force_include``, and only then are tagged for this interpreter and
  platform (``infer_tag``); without it the wheel stays ``py3-none-any``.

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

EXTENSION = "kafkawire.records._accel"
SOURCE = Path("src", "kafkawire", "records", "_accel.c")


class AccelBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"
    _kept: Path | None = None

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        package_dir = root / SOURCE.parent
        if version == "editable":  # this interpreter's previous build (others' may stay)
            (package_dir / f"_accel{sysconfig.get_config_var('EXT_SUFFIX')}").unlink(
                missing_ok=True
            )
        with tempfile.TemporaryDirectory(prefix="kafkawire-build-") as tmp:
            try:
                built = _compile(root, Path(tmp))
            except Exception as exc:  # any failure: no compiler, no headers, a compile error
                self.app.display_warning(
                    f"kafkawire: not building the optional C extension {EXTENSION} ({exc}); "
                    "kafkawire will use its pure-Python record decoder"
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
            kept = root / "build" / "accel" / built.name
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_bytes(built.read_bytes())
        self._kept = kept
        build_data["force_include"][str(kept)] = f"kafkawire/records/{built.name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        self.app.display_info(f"kafkawire: built {EXTENSION} ({built.name})")

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self._kept is not None:
            self._kept.unlink(missing_ok=True)
            with contextlib.suppress(OSError):  # build/accel and build/, if now empty
                self._kept.parent.rmdir()
                self._kept.parent.parent.rmdir()
            self._kept = None


def _compile(root: Path, tmp: Path) -> Path:
    """Compile the extension under ``tmp``; return the path of the built module."""
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    extension = Extension(EXTENSION, sources=[str(root / SOURCE)])
    distribution = Distribution({"name": "kafkawire-accel", "ext_modules": [extension]})
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
    built = Path(command.get_ext_fullpath(EXTENSION))
    if not built.is_file():
        raise RuntimeError(f"{built} was not built")
    return built
