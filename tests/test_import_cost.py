"""Importing the client does not pay for what only the first record batch needs."""

from __future__ import annotations

import subprocess
import sys

# The crc32c package reads its own version through importlib.metadata and loads argparse for
# its command line when imported: about 30 ms, a fifth of `import kafkawire.client`.
DEFERRED = ("crc32c", "importlib.metadata", "argparse")


def test_import_kafkawire_client_defers_crc32c() -> None:
    code = (
        "import sys, kafkawire.client\n"
        f"print(' '.join(name for name in {DEFERRED!r} if name in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == []


def test_crc32c_is_loaded_by_the_first_batch() -> None:
    code = (
        "import sys\n"
        "from kafkawire.records import RecordBatchBuilder, decode_batches\n"
        "builder = RecordBatchBuilder()\n"
        "builder.append(None, b'v', timestamp=0)\n"
        "[batch] = decode_batches(builder.build())\n"
        "print('crc32c' in sys.modules, [r.value for r in batch.records])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "True [b'v']"
