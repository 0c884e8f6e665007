"""A ``cmd:`` agent for trigger cases: a prompt ``... fires on runs 1,3`` calls the ``Skill``
tool for ``kit:olympiad`` in those runs (``EVAL_RUN``) and answers in the others."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path


def main() -> int:
    prompt = sys.stdin.read()
    found = re.search(r"fires on runs ([\d,]+)", prompt)
    runs = {int(n) for n in found.group(1).split(",")} if found else set()
    if int(os.environ.get("EVAL_RUN", "0")) in runs:
        call = {"type": "tool_call", "name": "Skill", "input": {"skill": "kit:olympiad"}}
        with Path(os.environ["EVAL_TRACE_FILE"]).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(call) + "\n")
    sys.stdout.write("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
