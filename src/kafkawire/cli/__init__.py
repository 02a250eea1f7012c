"""The ``kafkawire`` command: a protocol debugger and Kafka shell tools on kafkawire.

Installed as a console script (``kafkawire --help``); needs the ``cli`` extra (click, rich).
"""

from .app import main

__all__ = ["main"]
