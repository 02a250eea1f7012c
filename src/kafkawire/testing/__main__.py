"""``python -m kafkawire.testing > docs/brokers.md``: survey the embedded brokers' APIs."""

import asyncio
import sys

from .capabilities import render_doc, survey

sys.stdout.write(render_doc(asyncio.run(survey())))
