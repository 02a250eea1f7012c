"""The ``kafkawire`` command: a protocol debugger and Kafka shell tools on kafkawire.

Installed as a console script (``kafkawire --help``); needs the ``cli`` extra (click, rich).
"""

import sys

__all__ = ["main"]


def main() -> None:
    # Imported here so that a missing extra is one line naming it, not a traceback.
    try:
        from .app import main as run
    except ModuleNotFoundError as exc:
        if exc.name not in {"click", "rich"}:
            raise
        sys.exit(f"kafkawire: the command line needs {exc.name}: pip install 'kafkawire[cli]'")
    run()
