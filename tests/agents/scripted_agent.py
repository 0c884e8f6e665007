"""A scripted agent executable speaking the ``cmd:`` protocol, for the integration tests.

Usage: ``cmd:python scripted_agent.py RULES.json``. The first rule whose ``match`` is a
substring of the prompt (and whose ``arm``, if given, equals ``EVAL_ARM``) decides the run:
``reply`` (stdout), ``tool_calls`` (trace lines), ``files`` (written in the cwd), ``usage``,
``exit``, ``stderr``, ``sleep`` (seconds, before answering), ``env`` (names of variables whose
values are echoed into the reply, ``NAME=value``), ``events`` (more trace lines, written as given),
``raw_events`` (trace lines written verbatim), ``flood_mb`` (megabytes of ``a`` printed before the
reply, in chunks), ``reply_latin1`` (bytes printed after the reply, given as latin-1 text).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main() -> int:
    rules = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    prompt = sys.stdin.read()
    arm = os.environ.get("EVAL_ARM", "")
    for rule in rules:
        if rule.get("match", "") in prompt and rule.get("arm", arm) == arm:
            break
    else:
        print("no rule matched")
        return 0
    trace = Path(os.environ["EVAL_TRACE_FILE"])
    with trace.open("a", encoding="utf-8") as fh:
        for call in rule.get("tool_calls", []):
            fh.write(json.dumps({"type": "tool_call", **call}) + "\n")
        if "usage" in rule:
            fh.write(json.dumps({"type": "usage", **rule["usage"]}) + "\n")
        for event in rule.get("events", []):
            fh.write(json.dumps(event) + "\n")
        for line in rule.get("raw_events", []):
            fh.write(line + "\n")
    for rel, content in rule.get("files", {}).items():
        target = Path.cwd() / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    if rule.get("sleep"):
        sys.stdout.write(rule.get("partial", ""))
        sys.stdout.flush()
        time.sleep(rule["sleep"])
    chunk = b"a" * (1 << 20)
    for _ in range(int(rule.get("flood_mb", 0))):
        sys.stdout.buffer.write(chunk)
    reply = rule.get("reply", "")
    for name in rule.get("env", []):
        reply += f"\n{name}={os.environ.get(name, '<unset>')}"
    sys.stdout.write(reply)
    sys.stdout.flush()
    sys.stdout.buffer.write(rule.get("reply_latin1", "").encode("latin-1"))
    if rule.get("stderr"):
        sys.stderr.write(rule["stderr"])
    return int(rule.get("exit", 0))


if __name__ == "__main__":
    sys.exit(main())
