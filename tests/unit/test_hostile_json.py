"""Reading a hostile JSON line never raises, and what it yields can always be written again."""

from __future__ import annotations

import json
import math

import pytest

from pytest_plugin_evals.agents.claude.stream_json import parse_events
from pytest_plugin_evals.util.jsonlines import (
    TOO_DEEP,
    JSONFileError,
    amount,
    count,
    dumps,
    load_event,
    load_strict,
    number,
)


@pytest.mark.parametrize(
    "line",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"v": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"n": ' + "9" * 5000 + "}",
        '{"a": "unterminated',
        "\x00{}",
        "",
        "[1, 2]",
    ],
    ids=["deep-array", "deep-value", "huge-int", "invalid", "nul", "empty", "not-an-object"],
)
def test_a_line_that_holds_no_readable_object_is_none(line: str) -> None:
    assert load_event(line) is None


def test_lone_surrogates_become_replacement_characters() -> None:
    event = load_event(r'{"text": "a \ud800 b", "pair": "\ud83d\ude00", "\udfff": 1}')
    assert event == {"text": "a \ufffd b", "pair": "\U0001f600", "\ufffd": 1}
    dumps(event).encode("utf-8")


def test_deep_values_are_cut_to_a_note() -> None:
    line = '{"v": ' + '{"a": ' * 300 + "1" + "}" * 300 + "}"
    event = load_event(line)
    assert event is not None
    assert TOO_DEEP in json.dumps(event)
    json.dumps(event)  # no RecursionError writing it again


def test_reported_numbers_are_believed_only_when_they_make_sense() -> None:
    assert count(12) == 12 and count(-1) is None and count(10**20) is None
    assert count(True) is None and count(1.5) is None
    assert number(10**400) == math.inf and number(-(10**400)) == -math.inf
    assert number("1") is None and math.isnan(number(float("nan")) or 0.0)
    assert amount(-3) is None and amount(float("inf")) is None and amount(2.5) == 2.5


def test_dumps_writes_json_any_reader_takes() -> None:
    text = dumps({"cost": float("nan"), "big": float("inf"), "s": "\ud800", "ok": [1.5]})
    assert json.loads(text, parse_constant=lambda name: pytest.fail(name)) == {
        "cost": None,
        "big": None,
        "s": "\ufffd",
        "ok": [1.5],
    }


def test_a_claude_trace_with_hostile_events_still_parses() -> None:
    lines = [
        '{"type":"system","subtype":"init","plugins":[]}',
        "[" * 50_000 + "]" * 50_000,
        '{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1",'
        '"name":"Read","input":{"p":"\\ud800"}}],"usage":{"input_tokens":' + "9" * 4500 + "}}}",
        '{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"t2",'
        '"name":"Read","input":{"p":"x"}}]}}',
        '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2",'
        '"content":"\\udc00 out"}]}}',
        '{"type":"result","result":"fine \\ud800","num_turns":-4,"total_cost_usd":-1000,'
        '"usage":{"input_tokens":-5,"output_tokens":7},"duration_ms":NaN}',
    ]
    transcript, summary = parse_events(lines)
    assert summary.init is not None
    assert [c.name for c in transcript.tool_calls] == ["Read"]  # the unreadable line is skipped
    assert transcript.tool_calls[0].output == "\ufffd out"
    assert transcript.final_message == "fine \ufffd"
    assert transcript.cost_usd == -1000  # kept as reported: the runner refuses it
    assert transcript.turns == 1 and transcript.input_tokens is None  # counted, not -4
    assert transcript.output_tokens == 7 and transcript.latency_ms is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": [1, {"b c": NaN}]}', 'a number JSON cannot hold: NaN (at $.a[1]["b c"])'),
        ('{"x": -Infinity}', "a number JSON cannot hold: -Infinity (at $.x)"),
        ('{"x": 1e400}', "a number JSON cannot hold: 1e400 (at $.x)"),
        (
            '{"x": ' + "9" * 400 + "}",
            "a number JSON cannot hold: an integer of 400 digits (at $.x)",
        ),
        (
            '{"x": ' + "9" * 5000 + "}",
            "a number JSON cannot hold: an integer of 5000 digits (at $.x)",
        ),
        (
            "{bad",
            "not JSON: Expecting property name enclosed in double quotes (at line 1, column 2)",
        ),
        ("[" * 100_000, "not JSON a reader can follow: nested too deep (at $)"),
    ],
    ids=["nan", "infinity", "huge-float", "huge-int", "huger-int", "invalid", "deep"],
)
def test_a_json_file_with_what_json_cannot_hold_is_one_error(text: str, message: str) -> None:
    with pytest.raises(JSONFileError) as info:
        load_strict(text)
    assert str(info.value) == message


def test_a_json_file_within_json_reads_as_json() -> None:
    text = '{"ok": 1.5, "n": -3, "big": ' + "9" * 300 + ', "f": 1e308, "s": "\\ud800"}'
    assert load_strict(text) == json.loads(text)
