"""A plugin folder holding all four suite formats at once, graded by every free grader.

The scores below are computed by hand from the graders and the scripted agent's answers; the
terminal table, the JSON document and the HTML report must all say the same, with and without
pytest-xdist.
"""

from __future__ import annotations

import html
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

PLUGIN_JSON = '{"name": "kit", "version": "0.3.0"}'

# -- directory cases --------------------------------------------------------------------------

RELEASE_PROMPT = """---
runs: 1
tags: [smoke]
---
Release notes please: summarise the fixes.
"""

RELEASE_GRADERS = {
    # weight 2; JS named group and the i flag
    "answer": "---\ntype: regex\npattern: 'v(?<major>\\d+)\\.\\d+'\nflags: i\nweight: 2\n---\n",
    "skill-fired": (
        "---\ntype: tool_used\ntool: Skill\n"
        'input_match: \'"skill"\\s*:\\s*"(?:[\\w-]+:)?notes"\'\n---\n'
    ),
    "read-then-write": "---\ntype: tool_order\nbefore: Read\nafter: Write\n---\n",
    "notes-file": "---\ntype: file_exists\npath: 'notes/*.md'\n---\n",
    "no-temp-files": "---\ntype: file_exists\npath: '**/*.tmp'\nexists: false\n---\n",
    "two-fixes": (
        "---\ntype: regex\npattern: fix\nmatch: 'count:2'\n"
        "target: {source: file, path: notes/CHANGES.md}\n---\n"
    ),
    "wrote-in-trace": '---\ntype: regex\ntarget: trace\n---\n"name":\\s*"Write"\n',
    "created-list": "---\ntype: regex\npattern: CHANGES\ntarget: files\n---\n",
    "no-todo": "---\ntype: regex\npattern: TODO\nmatch: not_contains\n---\n",
    "judged": "---\ntype: llm\n---\nPASS if the notes are short.\n",
}

NESTED_PROMPT = "---\nruns: 1\n---\nNested group question\n"
NESTED_GRADER = "---\ntype: regex\npattern: nested ok\n---\n"

YAML_ONLY = """schema_version: "1.1"
name: yaml-only
runs: 1
execution:
  prompt: Yaml only case, say yaml
graders:
  - name: says-yaml
    type: regex
    pattern: yaml
    flags: i
  - name: never-skill
    type: tool_used
    tool: Skill
    min: 0
    max: 0
    arm: both
"""

# -- evals.json (seed 000) --------------------------------------------------------------------

EVALS_JSON = {
    "cases": [
        {
            "name": "suggests version",
            "prompt": "JSON alpha: what should the next version be?",
            "expect": {"contains": ["1.4.1"], "not_contains": ["2.0.0"]},
        },
        {
            "name": "explains itself",
            "prompt": "JSON beta: explain yourself",
            "expect": {"contains": ["changelog", "tag"], "min_chars": 80},
        },
    ]
}
SMOKE_JSON = {"cases": [{"name": "answers something", "prompt": "Smoke: say anything"}]}

# -- sy suites (seed 002) ---------------------------------------------------------------------

WEATHER_YAML = """name: weather
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
    tags: ["weather"]
    expect_tool_success: ["get_weather"]
    expect_delivered: true
  - name: slack-post
    input: "Post the forecast to slack"
    requires_secret: ["EVAL_TEST_SLACK_TOKEN_UNSET"]
    expected_contains: ["posted"]
"""

BUDGET_YAML = """name: budgets
cases:
  - name: tight-budget
    input: "Budget case: be brief"
    max_tokens: 10
    expected_contains: ["brief"]
"""

# -- package.json ai.evals (seed 003) ---------------------------------------------------------

PACKAGE_JSON = {
    "name": "kit",
    "ai": {
        "evals": [
            {
                "input": "@kit Mark the announcement as done",
                "mocks": {"get-todos": {"todos": [{"id": "a1", "text": "Post it"}]}},
                "expected": [
                    {"callsTool": "get-todos"},
                    {
                        "callsTool": {
                            "name": "toggle-todo",
                            "arguments": {
                                "id": "a1",
                                "note": {"includes": "done"},
                                "label": {"or": [{"eq": "later"}, {"matches": "^urg"}]},
                                "by": {"not": {"eq": "bot"}},
                                "meta": {"source": {"matches": "^ui$"}},
                                "priority": {"and": [{"matches": "^h"}, {"not": "hopeless"}]},
                            },
                        }
                    },
                    {"includes": "COMPLETED"},
                    {"matches": "\\bdone\\b"},
                    {"meetsCriteria": "Tells that the item was marked as done"},
                ],
            }
        ]
    },
}

PACKAGE_CASE = "kit-mark-the-announcement-as-done"

# -- the agent --------------------------------------------------------------------------------

WITH_RULES: list[dict[str, Any]] = [
    {
        "match": "Release notes",
        "arm": "with",
        "reply": "Release V2.1 is ready.",
        "tool_calls": [
            {"name": "Skill", "input": {"skill": "kit:notes"}, "output": "ok"},
            {"name": "Read", "input": {"file_path": "CHANGELOG.md"}, "output": "..."},
            {"name": "Write", "input": {"file_path": "notes/CHANGES.md"}, "output": "ok"},
        ],
        "files": {"notes/CHANGES.md": "- fix a\n- fix b\n"},
        "usage": {"input_tokens": 100, "output_tokens": 10, "cost_usd": 0.25},
    },
    {"match": "Release notes", "reply": "I cannot see any notes.", "usage": {"cost_usd": 0.125}},
    {"match": "Nested group", "reply": "nested ok"},
    {"match": "Yaml only", "arm": "with", "reply": "YAML here"},
    {"match": "Yaml only", "reply": "nope"},
    {"match": "JSON alpha", "arm": "with", "reply": "Ship 1.4.1 next."},
    {"match": "JSON alpha", "reply": "Ship 1.4.1 or 2.0.0."},
    {"match": "JSON beta", "reply": "I update the changelog."},
    {"match": "Smoke", "reply": "anything"},
    {
        "match": "weather in London",
        "arm": "with",
        "reply": "London: temperature 12°C, light rain.",
        "tool_calls": [{"name": "get_weather", "input": {"city": "London"}, "output": "12C"}],
        "usage": {"output_tokens": 120, "latency_ms": 900},
        "events": [{"type": "delivered", "value": True}],
    },
    {
        "match": "weather in London",
        "reply": "As an AI I cannot know; error.",
        "usage": {"output_tokens": 900, "latency_ms": 50000},
    },
    {"match": "Budget case", "reply": "Brief.", "usage": {"output_tokens": 50}},
    {
        "match": "@kit Mark",
        "arm": "with",
        "reply": "Completed: the announcement is done.",
        "tool_calls": [
            {"name": "get-todos", "input": {}, "output": "[...]"},
            {
                "name": "mcp__kit__toggle-todo",
                "input": {
                    "id": "a1",
                    "note": "marked done",
                    "label": "urgent",
                    "by": "user",
                    "meta": {"source": "ui"},
                    "priority": "high",
                },
                "output": "ok",
            },
        ],
    },
    {
        "match": "@kit Mark",
        "reply": "I could not do that.",
        "tool_calls": [
            {"name": "get-todos", "input": {}, "output": "[...]"},
            {
                "name": "toggle-todo",
                "input": {"id": "a1", "note": "x", "label": "later", "by": "bot"},
                "output": "ok",
            },
        ],
    },
]


def make_kit(root: Path) -> None:
    """Write the plugin folder with its four suite formats under ``root``."""

    def write(rel: str, text: str) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    write(".claude-plugin/plugin.json", PLUGIN_JSON)
    write("skills/notes/SKILL.md", "---\nname: notes\ndescription: release notes\n---\nWrite.\n")
    write("evals/release/prompt.md", RELEASE_PROMPT)
    for name, text in RELEASE_GRADERS.items():
        write(f"evals/release/graders/{name}.md", text)
    write("evals/group/nested-case/prompt.md", NESTED_PROMPT)
    write("evals/group/nested-case/graders/nested.md", NESTED_GRADER)
    write("evals/yaml-only/case.yaml", YAML_ONLY)
    write("evals/evals.json", json.dumps(EVALS_JSON, indent=2))
    write("evals/smoke.json", json.dumps(SMOKE_JSON, indent=2))
    write("evals/golden/weather.yaml", WEATHER_YAML)
    write("evals/golden/budgets.yaml", BUDGET_YAML)
    write("package.json", json.dumps(PACKAGE_JSON, indent=2))


# -- the hand-computed expectations -----------------------------------------------------------

#: case -> arm -> {grader name: passed}; graders absent from an arm are not evaluated there.
VERDICTS: dict[str, dict[str, dict[str, bool | None]]] = {
    "release": {
        "with": {
            "answer": True,
            "created-list": True,
            "judged": None,  # skipped: no judge configured
            "no-temp-files": True,
            "no-todo": True,
            "notes-file": True,
            "read-then-write": True,
            "skill-fired": True,  # an indicator: not scored
            "two-fixes": True,
            "wrote-in-trace": True,
        },
        "without": {
            "answer": False,
            "created-list": False,
            "judged": None,
            "no-temp-files": True,
            "no-todo": True,
            "notes-file": False,
            "read-then-write": False,
            "two-fixes": False,
            "wrote-in-trace": False,
        },
    },
    "nested-case": {"with": {"nested": True}, "without": {"nested": True}},
    "yaml-only": {
        "with": {"says-yaml": True, "never-skill": True},
        "without": {"says-yaml": False, "never-skill": True},
    },
    "suggests version": {
        "with": {'contains "1.4.1"': True, 'does not contain "2.0.0"': True},
        "without": {'contains "1.4.1"': True, 'does not contain "2.0.0"': False},
    },
    "explains itself": {
        "with": {
            'contains "changelog"': True,
            'contains "tag"': False,
            "at least 80 characters": False,
        },
        "without": {
            'contains "changelog"': True,
            'contains "tag"': False,
            "at least 80 characters": False,
        },
    },
    "answers something": {"with": {}, "without": {}},
    "current-conditions": {
        "with": {
            'contains "london"': True,
            'does not contain "as an ai"': True,
            "matches /(?i)(temperature|°)/": True,
            "does not match /(?i)error/": True,
            "at most 800 tokens": True,
            "latency at most 45000 ms": True,
            "tool get_weather succeeded": True,
            "delivered": True,
        },
        "without": {
            'contains "london"': False,
            'does not contain "as an ai"': False,
            "matches /(?i)(temperature|°)/": False,
            "does not match /(?i)error/": False,
            "at most 800 tokens": False,
            "latency at most 45000 ms": False,
            "tool get_weather succeeded": False,
            "delivered": False,
        },
    },
    "tight-budget": {
        "with": {'contains "brief"': True, "at most 10 tokens": False},
        "without": {'contains "brief"': True, "at most 10 tokens": False},
    },
    PACKAGE_CASE: {
        "with": {
            "calls tool get-todos": True,
            "calls tool toggle-todo (id, note, label, by, meta, priority)": True,
            'includes "COMPLETED"': True,
            "matches /\\bdone\\b/": True,
            'meets criteria "Tells that the item was marked as done"': None,
        },
        "without": {
            "calls tool get-todos": True,
            "calls tool toggle-todo (id, note, label, by, meta, priority)": False,
            'includes "COMPLETED"': False,
            "matches /\\bdone\\b/": False,
            'meets criteria "Tells that the item was marked as done"': None,
        },
    },
}

#: case -> (with score, without score), by hand from VERDICTS and the weights.
SCORES: dict[str, tuple[float, float]] = {
    # with: every scored grader passes (skill-fired is an indicator, judged is skipped).
    # without: answer (w2), notes-file, read-then-write, two-fixes, wrote-in-trace,
    # created-list fail; no-temp-files, no-todo pass: 2 of 9.
    "release": (1.0, 2 / 9),
    "nested-case": (1.0, 1.0),
    "yaml-only": (1.0, 0.5),
    "suggests version": (1.0, 0.5),
    "explains itself": (1 / 3, 1 / 3),
    "answers something": (1.0, 1.0),  # no checks: the run succeeded
    "current-conditions": (1.0, 0.0),
    "tight-budget": (0.5, 0.5),
    PACKAGE_CASE: (1.0, 0.25),  # meetsCriteria is skipped, never scored
}

WITH_COST = {"release": 0.25}
WITHOUT_COST = {"release": 0.125}


def run_kit(
    pytester: pytest.Pytester, scripted_agent: Any, *args: str, subprocess: bool = False
) -> pytest.RunResult:
    make_kit(pytester.path / "kit")
    run = pytester.runpytest_subprocess if subprocess else pytester.runpytest
    return run(
        "kit",
        "--eval-agent",
        scripted_agent(WITH_RULES),
        "--eval-json",
        "out.json",
        "--eval-output-dir",
        "results",
        "-p",
        "no:cacheprovider",
        "-rs",
        *args,
    )


def embedded_document(page: str) -> dict[str, Any]:
    found = re.search(
        r'<script type="application/json" id="eval-document">(.*?)</script>', page, re.DOTALL
    )
    assert found, "the HTML report embeds the document"
    doc: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return doc


def test_every_format_every_free_grader(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any, read_doc: Any
) -> None:
    result = run_kit(pytester, scripted_agent, *plugin_args)
    doc = read_doc()
    cases = {case["name"]: case for case in doc["cases"]}
    assert set(cases) == set(SCORES)

    # Per grader verdicts, arm by arm.
    for name, arms in VERDICTS.items():
        case = cases[name]
        assert set(case["arms"]) == {"with", "without"}, name
        for arm, expected in arms.items():
            (run,) = case["arms"][arm]
            got = {g["name"]: (None if "skipped" in g else g["passed"]) for g in run["graders"]}
            assert got == expected, (name, arm, run["graders"])
            assert run["error"] is None, (name, arm)

    # Indicators and skipped judges are shown, never scored.
    release_with = {g["name"]: g for g in cases["release"]["arms"]["with"][0]["graders"]}
    assert release_with["skill-fired"]["scored"] is False
    assert release_with["skill-fired"]["withOnly"] is True
    assert release_with["judged"]["skipped"] == "no judge configured"
    assert release_with["judged"]["passed"] is False
    never_skill = cases["yaml-only"]["arms"]["without"][0]["graders"][1]
    assert never_skill["name"] == "never-skill" and never_skill["scored"] is True

    # Case scores and Δ, by hand.
    for name, (with_score, without_score) in SCORES.items():
        agg = cases[name]["aggregates"]
        assert agg["score"] == pytest.approx(with_score), name
        assert agg["scoreWithout"] == pytest.approx(without_score), name
        assert agg["delta"] == pytest.approx(with_score - without_score), name
        assert agg["passed"] is (with_score == 1.0), name
    overall = sum(w for w, _ in SCORES.values()) / len(SCORES)
    mean_delta = sum(w - wo for w, wo in SCORES.values()) / len(SCORES)
    assert doc["aggregates"]["casesTotal"] == 9
    assert doc["aggregates"]["casesPassed"] == 7
    assert doc["aggregates"]["overallScore"] == pytest.approx(overall)
    assert doc["aggregates"]["meanDelta"] == pytest.approx(mean_delta)
    assert doc["costUsd"] == pytest.approx(0.375)
    assert doc["suite"]["plugins"][0]["name"] == "kit"
    assert doc["loadErrors"] == []
    assert doc["partial"] is False

    # The sources each case came from.
    sources = {name: case["source"] for name, case in cases.items()}
    assert sources["release"] == "prose"
    assert sources["yaml-only"] == "case_yaml"
    assert sources["suggests version"] == sources["answers something"] == "evals_json"
    assert sources["current-conditions"] == "sy"
    assert sources[PACKAGE_CASE] == "package_json"
    # dir as the reference writes it (from the plugin's folder); suiteDir from the suite's.
    assert cases["nested-case"]["dir"] == "evals/group/nested-case"
    assert cases["nested-case"]["suiteDir"] == "group/nested-case"

    # pytest's own account: the with-arm items of the two imperfect cases fail, the secret
    # case skips, everything else passes; the exit status says tests failed.
    result.assert_outcomes(passed=16, failed=2, skipped=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*SKIPPED*missing required secret(s): EVAL_TEST_SLACK_TOKEN_UNSET*"]
    )

    # The terminal table says what the JSON says.
    rows = table_rows(result.stdout.lines)
    assert set(rows) == set(SCORES)
    for name, case in cases.items():
        agg = case["aggregates"]
        row = rows[name]
        assert row[0] == f"{agg['score']:.2f}", name
        assert row[1] == f"{agg['scoreWithout']:.2f}", name
        shown = f"{agg['delta']:+.2f}"
        if agg["deltaInterval"] is not None:
            low, high = agg["deltaInterval"]
            shown += f" [{low:+.2f}, {high:+.2f}]"
        assert row[2] == shown, name
        assert row[3] == "2", name
        cost = sum(r["costUsd"] for arm in case["arms"].values() for r in arm)
        assert row[4] == f"${cost:.2f}", name
        assert row[5] == (case["notes"] or ""), name
    # NOTES: the highest-weight failing grader (the first of equals) of the with-arm.
    assert rows["explains itself"][5] == 'contains "tag": missing "tag"'
    low, high = doc["aggregates"]["meanDeltaInterval"]
    footer = f"9 case(s) · mean Δ {mean_delta:+.2f} [{low:+.2f}, {high:+.2f}] · "
    assert any(line.startswith(footer) and line.endswith(" · $0.38") for line in result.outlines)

    # The HTML report embeds the same document, and shows every case.
    page = (pytester.path / "results" / "report.html").read_text(encoding="utf-8")
    assert embedded_document(page) == doc
    overview = overview_rows(page)
    assert set(overview) == set(SCORES)
    for name, case in cases.items():
        agg = case["aggregates"]
        assert overview[name] == [
            "✓" if agg["passed"] else "✗",
            f"{agg['score'] * 100:.0f}%",
            f"{agg['scoreWithout'] * 100:.0f}%",
            f"{agg['delta'] * 100:+.1f} pts",
            case["notes"] or "",
        ], name
    aggregate = json.loads((pytester.path / "results" / "aggregate-result.json").read_text())
    assert aggregate == doc


def overview_rows(page: str) -> dict[str, list[str]]:
    """The HTML overview table's rows by case name: mark, with, without, Δ, notes."""
    table = re.search(r'<table class="overview">(.*?)</table>', page, re.DOTALL)
    assert table, "the HTML report has an overview table"
    rows: dict[str, list[str]] = {}
    for row in re.findall(r'<tr class="case-row[^>]*>(.*?)</tr>', table.group(1), re.DOTALL):
        cells = [
            html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
            for cell in re.findall(r"<td>(.*?)</td>", row, re.DOTALL)
        ]
        mark, _, name = cells[0].partition(" ")
        rows[name] = [mark, *cells[1:]]
    return rows


def table_rows(lines: list[str]) -> dict[str, list[str]]:
    """The terminal table's rows by case name: the cells after the name, NOTES last."""
    start = next(i for i, line in enumerate(lines) if re.match(r"CASE\s+WITH\s+W/OUT", line))
    header = lines[start]
    columns = [header.index(title) for title in ("WITH", "W/OUT", "Δ", "RUNS", "COST", "NOTES")]
    rows: dict[str, list[str]] = {}
    for line in lines[start + 1 :]:
        if "case(s) ·" in line:
            break
        name = line[: columns[0]].strip()
        bounds = [*columns, len(line) + 1]
        rows[name] = [line[a:b].strip() for a, b in itertools.pairwise(bounds)]
    return rows


#: What depends on the clock (``duration``: the efficiency ratio of the runs' times).
TIMING = {"startedAt", "durationSeconds", "tracePath", "concurrency", "latency", "duration"}


def without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def test_two_workers_give_the_same_document(
    pytester: pytest.Pytester, scripted_agent: Any, read_doc: Any
) -> None:
    """The kit run in one process and again with two workers writes the same document (but
    for what depends on the clock): what the workers report and the controller merges is what
    one process finds."""
    serial = run_kit(pytester, scripted_agent, "-n0")
    serial.assert_outcomes(passed=16, failed=2, skipped=2)
    first = read_doc()
    # The second session in a process of its own: two sessions in this one would mix the
    # package's modules pytester removed after the first with those it kept (a record of one
    # import's class is then not an instance of the other's).
    parallel = run_kit(pytester, scripted_agent, "-n2", subprocess=True)
    parallel.assert_outcomes(passed=16, failed=2, skipped=2)
    second = read_doc()
    assert first["suite"]["concurrency"] == 1
    assert second["suite"]["concurrency"] == 2
    assert without_timings(second) == without_timings(first)
