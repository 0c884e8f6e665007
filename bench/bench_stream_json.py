"""Time the stream-json parser on a long Claude Code trace (200,000 events by default).

Run it directly (it is not a test)::

    python bench/bench_stream_json.py [--events 200000]

The trace is written to a temporary file, then parsed line by line with
:func:`pytest_plugin_evals.stream_json.parse_file`. It prints the trace's size, the parse time and
the parser's peak memory (``tracemalloc``), once for a trace of tool round trips and once for a
trace of text messages only: the second holds no tool calls, so its peak shows what the parser
keeps per event beyond the transcript itself.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import tracemalloc
from pathlib import Path

from pytest_plugin_evals.agents.claude.stream_json import parse_file

INIT = {"type": "system", "subtype": "init", "cwd": "/w", "tools": ["Read"], "plugins": []}


def write_trace(path: Path, events: int, text_only: bool) -> None:
    with path.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(INIT) + "\n")
        for i in range(events - 2):
            msg = f"msg_{i // 3 if not text_only else i:08d}"
            step = i % 3
            if text_only or step == 0:
                block = {"type": "text", "text": f"step {i}: " + "words " * 20}
                event = {"type": "assistant", "message": {"id": msg, "content": [block]}}
            elif step == 1:
                block = {
                    "type": "tool_use",
                    "id": f"toolu_{i}",
                    "name": "Read",
                    "input": {"file_path": f"src/module_{i}.py"},
                }
                event = {"type": "assistant", "message": {"id": msg, "content": [block]}}
            else:
                block = {"type": "tool_result", "tool_use_id": f"toolu_{i - 1}", "content": "ok"}
                event = {"type": "user", "message": {"role": "user", "content": [block]}}
            event["parent_tool_use_id"] = None
            fh.write(json.dumps(event) + "\n")
        result = {"type": "result", "subtype": "success", "is_error": False, "result": "done"}
        fh.write(json.dumps(result) + "\n")


def measure(events: int, text_only: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.jsonl"
        write_trace(trace, events, text_only)
        size_mb = trace.stat().st_size / 1e6
        tracemalloc.start()
        start = time.perf_counter()
        transcript, _ = parse_file(trace)
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        start = time.perf_counter()
        parse_file(trace)
        untraced = time.perf_counter() - start
    kind = "text messages" if text_only else "tool round trips"
    print(
        f"{events} events ({kind}, {size_mb:.1f} MB): parsed in {untraced:.2f} s "
        f"({elapsed:.2f} s traced), peak {peak / 1e6:.1f} MB, "
        f"{len(transcript.tool_calls)} tool calls, {transcript.turns} turns"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    args = parser.parse_args()
    measure(args.events, text_only=False)
    measure(args.events, text_only=True)


if __name__ == "__main__":
    main()
