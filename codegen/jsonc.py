"""Reading Kafka's comment-bearing JSON: ``//`` comments outside strings are dropped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def strip_comments(text: str) -> str:
    out: list[str] = []
    in_string = escaped = False
    i = 0
    while i < len(text):
        ch = text[i]
        if in_string:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif text.startswith("//", i):
            newline = text.find("\n", i)
            i = len(text) if newline < 0 else newline
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def load(path: Path) -> dict[str, Any]:
    data = json.loads(strip_comments(path.read_text(encoding="utf-8")))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: top level is not an object")
    return data
