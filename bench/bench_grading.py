"""Time the free graders on a large run: a ~50 MB trace and 10,000 tool calls.

Run it directly (it is not a test)::

    python bench/bench_grading.py [--trace-mb 50] [--calls 10000]

It prints one line per measurement: the best of ``--repeat`` timings, in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pytest_plugin_evals.graders import grade, grade_all
from pytest_plugin_evals.graders.targets import clear_trace_cache, trace_text
from pytest_plugin_evals.model import GraderSpec, ToolCall, Transcript

TOOLS = ("Read", "Glob", "Grep", "Bash", "Edit", "Skill")


def make_calls(n: int) -> list[ToolCall]:
    calls = []
    for i in range(n):
        name = TOOLS[i % len(TOOLS)]
        data: dict[str, object]
        if name == "Skill":
            data = {"skill": f"kit:skill-{i % 7}", "args": f"run {i}"}
        else:
            data = {"file_path": f"src/pkg/module_{i}.py", "limit": 200, "note": "é ü"}
        calls.append(ToolCall(name, data, output=f"ok {i}"))
    return calls


def write_trace(path: Path, megabytes: int, calls: list[ToolCall]) -> int:
    """Write stream-json-like events until the file holds ``megabytes`` MB; return the lines."""
    target = megabytes * 1_000_000
    written = lines = 0
    filler = "lorem ipsum dolor sit amet " * 12
    with path.open("w", encoding="utf-8") as fh:
        i = 0
        while written < target:
            call = calls[i % len(calls)]
            event = {
                "type": "assistant",
                "message": {
                    "content": [
                        {"type": "text", "text": f"step {i}: {filler}"},
                        {"type": "tool_use", "name": call.name, "input": call.input},
                    ]
                },
            }
            line = json.dumps(event, separators=(",", ":"), ensure_ascii=False) + "\n"
            fh.write(line)
            written += len(line.encode("utf-8"))
            lines += 1
            i += 1
        fh.write('{"type":"result","result":"NEEDLE-AT-THE-END"}\n')
    return lines + 1


def best_ms(
    fn: Callable[[], object], repeat: int, before: Callable[[], None] | None = None
) -> float:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace-mb", type=int, default=50)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    calls = make_calls(args.calls)
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.jsonl"
        start = time.perf_counter()
        lines = write_trace(trace, args.trace_mb, calls)
        size = trace.stat().st_size / 1_000_000
        print(
            f"setup: trace {size:.1f} MB, {lines} lines, written in "
            f"{(time.perf_counter() - start):.1f} s; {len(calls)} tool calls"
        )
        run = Transcript(final_message="done", tool_calls=calls, trace_path=trace)

        def on_trace(pattern: str, **config: object) -> GraderSpec:
            return GraderSpec("g", "regex", {"pattern": pattern, "target": "trace", **config})

        def trace_case(
            label: str, spec: GraderSpec, cold: bool = False
        ) -> tuple[str, Callable[[], object], bool]:
            return (label, lambda: grade(spec, run), cold)

        cases: list[tuple[str, Callable[[], object], bool]] = [
            ("read trace (cold, no cache)", lambda: trace_text(run), True),
            trace_case("trace literal, hit at end", on_trace("NEEDLE-AT-THE-END")),
            trace_case("trace literal, not found", on_trace("absent-word")),
            trace_case("trace literal count:N", on_trace('"name":"Skill"', match="count:1")),
            trace_case("trace engine, hit at start", on_trace(r'"step \d:')),
            trace_case("trace engine, hit at end", on_trace(r"NEEDLE-AT-THE-END\W*$")),
            trace_case("trace engine, not found", on_trace(r"absent-\d+")),
            trace_case("trace engine, not found, flags i", on_trace("absent-word", flags="i")),
            trace_case("trace engine count:N", on_trace(r'"name":"Sk.ll"', match="count:1")),
            trace_case("trace literal, cold read + grade", on_trace("NEEDLE-AT-THE-END"), True),
            (
                "grade_all: 4 trace regexes (2 engine), cold",
                lambda: grade_all(
                    [
                        on_trace("NEEDLE"),
                        on_trace(r"absent\d"),
                        on_trace("Sk.ll", match="count:3"),
                        on_trace("error", match="not_contains"),
                    ],
                    run,
                ),
                True,
            ),
            (
                "tool_used, no input_match",
                lambda: grade(GraderSpec("g", "tool_used", {"tool": "Skill"}), run),
                False,
            ),
            (
                "tool_used, input_match (1/6 of calls)",
                lambda: grade(
                    GraderSpec(
                        "g", "tool_used", {"tool": "Skill", "input_match": r'"skill":"kit:skill-3"'}
                    ),
                    run,
                ),
                False,
            ),
            (
                "tool_used, input_match on every Read",
                lambda: grade(
                    GraderSpec(
                        "g", "tool_used", {"tool": "Read", "input_match": r"module_\d+\.py"}
                    ),
                    run,
                ),
                False,
            ),
            (
                "tool_order with input_match",
                lambda: grade(
                    GraderSpec(
                        "g",
                        "tool_order",
                        {"before": "Glob", "after": {"tool": "Skill", "input_match": "skill-6"}},
                    ),
                    run,
                ),
                False,
            ),
            (
                "callsTool with matcher tree",
                lambda: grade(
                    GraderSpec(
                        "g",
                        "callsTool",
                        {
                            "name": "Read",
                            "arguments": {"file_path": {"matches": "module_9999"}, "limit": 200},
                        },
                    ),
                    run,
                ),
                False,
            ),
        ]
        for label, fn, cold in cases:
            verdict = fn()
            ms = best_ms(fn, args.repeat, clear_trace_cache if cold else None)
            if isinstance(verdict, str):
                shown = f"{len(verdict)} characters"
            elif isinstance(verdict, list):
                shown = repr([v.passed for v in verdict])
            else:
                shown = repr(verdict)
            print(f"{label:45s} {ms:9.1f} ms   {shown}")


if __name__ == "__main__":
    main()
