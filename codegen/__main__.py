"""``python -m codegen import|generate [--check]``."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from . import generator, importer
from .output import emit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen")
    steps = parser.add_subparsers(dest="step", required=True)
    imp = steps.add_parser("import", help="upstream Kafka schemas -> schema-json/")
    imp.add_argument("--shared", type=Path, required=True, help="folder holding kafka-schema*/")
    imp.add_argument("--out", type=Path, required=True)
    imp.add_argument("--check", action="store_true", help="fail if the output would change")
    gen = steps.add_parser("generate", help="schema-json/ -> src/kafkawire/messages/")
    gen.add_argument("--schema", type=Path, required=True)
    gen.add_argument("--out", type=Path, required=True)
    gen.add_argument("--check", action="store_true", help="fail if the output would change")
    args = parser.parse_args(argv)
    # The steps log notes (such as a layout the importer chose on purpose) at INFO.
    logging.basicConfig(level=logging.INFO, format=f"codegen {args.step}: %(message)s")

    if args.step == "import":
        files, findings = importer.import_all(args.shared)
        if findings:
            for finding in findings:
                print(f"codegen import: {finding}", file=sys.stderr)
            return 1
        problems = emit(args.out, files, suffix=".json", check=args.check)
    else:
        problems = emit(
            args.out, generator.generate_all(args.schema), suffix=".py", check=args.check
        )
    if args.check:
        for problem in problems:
            print(f"codegen {args.step}: would change: {problem}", file=sys.stderr)
        return 1 if problems else 0
    print(f"codegen {args.step}: {len(problems)} file(s) written or removed under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
