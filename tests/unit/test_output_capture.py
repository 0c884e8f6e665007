"""What is kept of a process's output: within the budget, in bounded memory, valid JSON lines."""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

from pytest_plugin_evals.agents.claude.stream_json import parse_file
from pytest_plugin_evals.util.capture import NOTE_EVENT, Capture, capture_file

MB = 1024 * 1024


def feed(capture: Capture, data: bytes, chunk: int = 1 << 16) -> None:
    for start in range(0, len(data), chunk):
        capture.feed(data[start : start + chunk])
    capture.close()


def test_output_under_the_budget_is_kept_byte_for_byte() -> None:
    data = b"".join(
        json.dumps({"n": i, "text": "x" * (i % 300)}).encode() + b"\n" for i in range(5000)
    )
    out = io.BytesIO()
    capture = Capture(out, json_lines=True)
    feed(capture, data, chunk=777)  # chunks that cut lines anywhere
    assert out.getvalue() == data
    assert capture.note is None


def test_a_long_json_line_keeps_both_ends_and_stays_json() -> None:
    """A 200 MB answer in a result event: the event keeps its cost, the answer its two ends."""
    answer_head, answer_tail = b"BEGIN" + b"a" * 100, b"z" * 100 + b"END"
    prefix = b'{"type":"result","subtype":"success","is_error":false,"result":"' + answer_head
    suffix = answer_tail + b'","total_cost_usd":0.0123,"num_turns":2}\n'
    out = io.BytesIO()
    capture = Capture(out, json_lines=True)
    tracemalloc.start()
    try:
        capture.feed(prefix)
        block = b'\xc3\xa9\\n\\"' * (1 << 14)  # é, escapes: the cut may fall anywhere in them
        for _ in range(200 * MB // len(block)):
            capture.feed(block)
        capture.feed(suffix)
        capture.close()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * MB
    line = out.getvalue()
    assert len(line) < 2 * MB and line.endswith(b"\n")
    event = json.loads(line)
    assert event["total_cost_usd"] == 0.0123 and event["num_turns"] == 2
    assert event["result"].startswith("BEGIN") and event["result"].endswith("END")
    assert "cut by pytest-plugin-evals" in event["result"]
    assert capture.note is not None and "1 long line cut by 199." in capture.note


def test_a_long_json_line_that_cannot_be_joined_becomes_a_note() -> None:
    numbers = b'{"numbers":[' + b"1," * (2 * MB) + b"1]}\n"
    out = io.BytesIO()
    capture = Capture(out, json_lines=True)
    feed(capture, b'{"a":1}\n' + numbers + b'{"b":2}\n')
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0] == {"a": 1} and lines[2] == {"b": 2}
    assert lines[1]["type"] == NOTE_EVENT and "was dropped" in lines[1]["note"]


def test_past_the_budget_the_middle_is_dropped_and_the_end_kept() -> None:
    lines = [json.dumps({"n": i, "pad": "p" * 200}).encode() + b"\n" for i in range(200_000)]
    out = io.BytesIO()
    capture = Capture(out, json_lines=True, budget=4 * MB, tail_keep=1 * MB)
    feed(capture, b"".join(lines))
    kept = out.getvalue()
    assert 4 * MB - 300 <= len(kept) <= 4 * MB + (1 << 16) + 300
    events = [json.loads(line) for line in kept.splitlines()]  # every kept line is whole JSON
    notes = [e for e in events if e.get("type") == NOTE_EVENT]
    assert len(notes) == 1 and "dropped here" in notes[0]["note"]
    numbers = [e["n"] for e in events if "n" in e]
    assert numbers[0] == 0 and numbers[-1] == 199_999
    assert numbers == sorted(numbers)
    dropped = 200_000 - len(numbers)
    assert capture.dropped_lines == dropped
    assert capture.note is not None and f"{dropped} lines" in capture.note


def test_text_output_is_cut_in_the_middle_of_a_line() -> None:
    out = io.BytesIO()
    capture = Capture(out, json_lines=False)
    feed(capture, b"start " + b"x" * (3 * MB) + b" done")
    kept = out.getvalue()
    assert kept.startswith(b"start ") and kept.endswith(b" done")
    assert b"cut by pytest-plugin-evals" in kept and len(kept) < MB


def test_a_file_a_process_wrote_is_kept_the_same_way(tmp_path: Path) -> None:
    source, target = tmp_path / "big.jsonl", tmp_path / "kept.jsonl"
    with source.open("wb") as fh:
        fh.write(b'{"type":"system","subtype":"init"}\n')
        fh.write(b'{"type":"result","result":"' + b"r" * (5 * MB) + b'","total_cost_usd":1.5}\n')
    note = capture_file(source, target, json_lines=True)
    assert note is not None and target.stat().st_size < MB
    transcript, summary = parse_file(target)
    assert transcript.cost_usd == 1.5 and summary.init is not None
