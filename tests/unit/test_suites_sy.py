"""sy suites: YAML or JSON, ``input`` cases, Python-dialect patterns, suite tags, secrets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_plugin_evals.model import Case, LoadError
from pytest_plugin_evals.suites import discover
from pytest_plugin_evals.suites.suite_file import load_suite_file

WEATHER = """\
name: weather
tags: [golden]
cases:
  - name: current-conditions
    input: "What's the weather in London?"
    expected_contains: ["london"]
    expected_not_contains: ["as an ai"]
    expected_regex: ["(?i)(temperature|°)"]
    expected_not_regex: ["(?i)error"]
    max_tokens: 800
    max_latency_ms: 45000
    tags: ["weather", "smoke", "golden"]
    expect_tool_success: ["get_weather"]
    expect_delivered: true
    requires_secret: ["WEATHER_API_KEY"]
  - name: plain
    input: hello
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def loaded(path: Path) -> list[Case]:
    found = load_suite_file(path, path.parent)
    assert all(isinstance(c, Case) for c in found), found
    return found  # type: ignore[return-value]


def test_seed_case(tmp_path: Path) -> None:
    path = write(tmp_path / "evals" / "golden", "weather.yaml", WEATHER)
    first, second = loaded(path)
    assert first.name == "current-conditions"
    assert first.prompt == "What's the weather in London?"
    assert first.source == "sy"
    assert first.regex_dialect == "python"
    assert first.runs == 1
    assert first.tags == ("golden", "weather", "smoke")
    assert first.requires_secret == ("WEATHER_API_KEY",)
    assert first.extra == {"suite": "weather"}
    assert first.path == path and first.dir == path.parent
    assert first.line == 4
    assert [(g.name, g.type, g.config, g.line) for g in first.graders] == [
        ('contains "london"', "expected_contains", {"value": "london"}, 6),
        ('does not contain "as an ai"', "expected_not_contains", {"value": "as an ai"}, 7),
        ("matches /(?i)(temperature|°)/", "expected_regex", {"pattern": "(?i)(temperature|°)"}, 8),
        ("does not match /(?i)error/", "expected_not_regex", {"pattern": "(?i)error"}, 9),
        ("at most 800 tokens", "max_tokens", {"max": 800}, 10),
        ("latency at most 45000 ms", "max_latency_ms", {"max": 45000}, 11),
        ("tool get_weather succeeded", "expect_tool_success", {"tool": "get_weather"}, 13),
        ("delivered", "expect_delivered", {"value": True}, 14),
    ]
    assert second.tags == ("golden",)
    assert second.graders == () and second.requires_secret == ()
    assert second.line == 16


def test_json_sy_suite(tmp_path: Path) -> None:
    doc = {"name": "s", "cases": [{"name": "a", "input": "i", "expect_delivered": False}]}
    path = write(tmp_path, "s.json", json.dumps(doc, indent=2))
    (case,) = loaded(path)
    assert case.source == "sy"
    assert [(g.name, g.config) for g in case.graders] == [("not delivered", {"value": False})]
    assert case.line == 4


def test_folder_of_yaml_suites(tmp_path: Path) -> None:
    golden = tmp_path / "evals" / "golden"
    write(golden, "weather.yaml", WEATHER)
    write(
        golden,
        "slack.yml",
        "name: slack\ncases:\n  - name: post\n    input: post it\n"
        "    requires_secret: [SLACK_BOT_TOKEN]\n",
    )
    write(golden, "README.md", "not a suite")
    sources = discover.walk(tmp_path / "evals")
    assert [s.path.name for s in sources] == ["slack.yml", "weather.yaml"]
    names = [c.name for s in sources for c in loaded(s.path)]
    assert names == ["post", "current-conditions", "plain"]


@pytest.mark.parametrize(
    ("case_yaml", "message", "line"),
    [
        ("    expected_regex: ['(']", 'invalid cases[0].expected_regex[0] "(": Invalid regular', 5),
        (
            "    expected_contain: [x]",
            'unknown key "cases[0].expected_contain" — did you mean expected_contains? '
            "(expected one of:",
            5,
        ),
        (
            "    expected_contains: london",
            "cases[0].expected_contains must be a list of strings",
            5,
        ),
        (
            "    max_tokens: 0",
            "cases[0].max_tokens must be a whole number of at least 1 (got 0)",
            5,
        ),
        (
            "    max_latency_ms: fast",
            'cases[0].max_latency_ms must be a number above 0 (got "fast")',
            5,
        ),
        ("    expect_delivered: maybe", "cases[0].expect_delivered must be true or false", 5),
        ("    requires_secret: KEY", "cases[0].requires_secret must be a list of strings", 5),
        ("    tags: smoke", "cases[0].tags must be a list of strings (got a string)", 5),
    ],
)
def test_bad_case_is_a_load_error_item(
    tmp_path: Path, case_yaml: str, message: str, line: int
) -> None:
    text = (
        f"name: s\ncases:\n  - name: bad\n    input: x\n{case_yaml}\n  - name: good\n    input: y\n"
    )
    bad, good = load_suite_file(write(tmp_path, "s.yaml", text), tmp_path)
    assert isinstance(bad, LoadError) and isinstance(good, Case)
    assert bad.message.startswith(message)
    assert bad.line == line
    assert bad.path == tmp_path / "s.yaml"


def test_missing_input_and_name(tmp_path: Path) -> None:
    text = "cases:\n  - name: a\n    input: x\n  - name: b\n  - input: y\n"
    found = load_suite_file(write(tmp_path, "s.yaml", text), tmp_path)
    assert isinstance(found[0], Case)
    assert [(e.message, e.line) for e in found[1:]] == [  # type: ignore[union-attr]
        ("cases[1].input is required", 4),
        ("cases[2].name is required", 5),
    ]


def test_suite_level_errors_raise(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match=r"tags must be a list of strings"):
        load_suite_file(
            write(tmp_path, "s.yaml", "tags: x\ncases:\n  - name: a\n    input: b\n"), tmp_path
        )
    with pytest.raises(LoadError) as info:
        load_suite_file(write(tmp_path, "t.yaml", "name: s\ncases:\n  - name: [a\n"), tmp_path)
    assert info.value.message.startswith("invalid YAML: ")
    assert info.value.line == 3
    with pytest.raises(LoadError) as info:
        load_suite_file(write(tmp_path, "u.yaml", "cases: []\ncases: []\n"), tmp_path)
    assert info.value.message == 'invalid YAML: duplicate key "cases"'
    assert info.value.line == 2


def test_python_dialect_inline_flags_compile(tmp_path: Path) -> None:
    text = "cases:\n  - name: a\n    input: x\n    expected_regex: ['(?i)hello', '\\d+']\n"
    (case,) = loaded(write(tmp_path, "s.yaml", text))
    assert [g.config["pattern"] for g in case.graders] == ["(?i)hello", "\\d+"]
