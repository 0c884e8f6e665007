"""Directory-format cases run as pytest items, as a plugin author runs them."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import needs_marker_arguments, write_tree

PLUGIN_JSON = '{"name": "release-helper", "version": "1.2.0"}'

PROMPT = """---
runs: 2
---
We fixed two bugs since v1.4.0. What should the next version be?
"""

ANSWER_GRADER = """---
type: regex
pattern: '1\\.4\\.1'
weight: 2
---
"""

SKILL_GRADER = """---
type: tool_used
tool: Skill
input_match: '"skill":"(?:[\\w-]+:)?next-version"'
---
"""

STYLE_GRADER = """---
type: regex
pattern: 2\\.0\\.0
match: not_contains
---
"""


def make_plugin(pytester: pytest.Pytester) -> None:
    pytester.makefile(".json", **{".claude-plugin/plugin": PLUGIN_JSON})
    pytester.makefile(".md", **{"evals/suggests-version/prompt": PROMPT})
    pytester.makefile(
        ".md",
        **{
            "evals/suggests-version/graders/answer": ANSWER_GRADER,
            "evals/suggests-version/graders/skill-fired": SKILL_GRADER,
            "evals/suggests-version/graders/no-major": STYLE_GRADER,
        },
    )


SKILL_CALL = {"name": "Skill", "input": {"skill": "release-helper:next-version"}, "output": "ok"}

RULES = [
    {
        "match": "next version",
        "arm": "with",
        "reply": "Ship 1.4.1 next.",
        "tool_calls": [SKILL_CALL],
        "usage": {"input_tokens": 1200, "output_tokens": 40, "cost_usd": 0.0056},
    },
    {
        "match": "next version",
        "arm": "without",
        "reply": "Maybe 2.0.0?",
        "usage": {"input_tokens": 1000, "output_tokens": 20, "cost_usd": 0.004},
    },
]


def reply_agent(pytester: pytest.Pytester, reply: str) -> str:
    """A ``py:`` agent that answers ``reply`` to every prompt (called in the session's process:
    no interpreter started per run); its ``--eval-agent`` value."""
    pytester.makepyfile(reply_agent=f"def answer(request):\n    return {reply!r}\n")
    pytester.makeini("[pytest]\npythonpath = .\n")
    return "py:reply_agent:answer"


def test_two_arms_score_and_delta(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent, read_doc
) -> None:
    make_plugin(pytester)
    result = pytester.runpytest(
        "evals",
        *plugin_args,
        "--eval-agent",
        scripted_agent(RULES),
        "--eval-json",
        "out.json",
        "--junitxml",
        "junit.xml",
    )
    result.assert_outcomes(passed=4)
    # The JUnit file holds each run's record as a property.
    tree = ET.parse(pytester.path / "junit.xml")
    props = [p for p in tree.iter("property") if p.get("name") == "plugin_evals"]
    records = [json.loads(p.get("value", "")) for p in props]
    assert sorted(r["arm"] for r in records) == ["with", "with", "without", "without"]
    assert all(r["case"]["name"] == "suggests-version" for r in records)
    doc = read_doc()
    (case,) = doc["cases"]
    assert case["name"] == "suggests-version"
    assert [r["score"] for r in case["arms"]["with"]] == [1.0, 1.0]
    # without: the Skill grader is an indicator and is not evaluated; answer (w2) fails,
    # no-major fails: 0 of 3 scored weight.
    assert [r["score"] for r in case["arms"]["without"]] == [0.0, 0.0]
    without_names = {g["name"] for g in case["arms"]["without"][0]["graders"]}
    assert without_names == {"answer", "no-major"}
    with_skill = next(g for g in case["arms"]["with"][0]["graders"] if g["name"] == "skill-fired")
    assert with_skill["scored"] is False and with_skill["withOnly"] is True
    assert case["aggregates"]["delta"] == pytest.approx(1.0)
    assert doc["aggregates"]["meanDelta"] == pytest.approx(1.0)
    assert doc["costUsd"] == pytest.approx(2 * 0.0056 + 2 * 0.004)
    assert doc["suite"]["plugins"][0]["name"] == "release-helper"
    result.stdout.re_match_lines(
        [
            r"CASE\s+WITH\s+W/OUT\s+Δ\s+RUNS\s+COST\s+NOTES",
            # Δ with its 95% interval: Newcombe's for 2 of 2 against 0 of 2.
            r"suggests-version\s+1\.00\s+0\.00\s+\+1\.00 \[\+0\.07, \+1\.00\]\s+4\s+",
            r"1 case\(s\) · mean Δ \+1\.00 \[\+0\.\d\d, \+1\.00\] · ",
            r"verdicts \(Δ = WITH − W/OUT, 95%, equivalent within ±0\.10\): suite mean Δ better .*",
            r"cases: 1 better \(suggests-version\) — false discovery rate held at 5% over 1 "
            r"cases .*",
            r"latency mean \d+\.\ds · p50 .* · tokens 4400 in / 120 out · 1\.5 turns/run",
        ]
    )
    assert case["aggregates"]["deltaInterval"] == pytest.approx([0.0700, 1.0], abs=1e-4)
    assert case["aggregates"]["deltaSignificant"] is True


@needs_marker_arguments
def test_item_ids_and_marker_selection(pytester: pytest.Pytester, scripted_agent) -> None:
    make_plugin(pytester)
    result = pytester.runpytest("evals", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "evals/suggests-version::suggests-version[[]with-1]",
            "evals/suggests-version::suggests-version[[]with-2]",
            "evals/suggests-version::suggests-version[[]without-1]",
            "evals/suggests-version::suggests-version[[]without-2]",
        ]
    )
    selected = pytester.runpytest("evals", "--collect-only", "-q", "-m", "evals(arm='with')")
    selected.stdout.fnmatch_lines(["*2/4 tests collected (2 deselected)*"])
    one = pytester.runpytest("evals", "--collect-only", "-q", "-m", "evals(arm='without', run=2)")
    one.stdout.fnmatch_lines(["*1/4 tests collected (3 deselected)*"])


def test_single_arm_without_a_plugin(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    pytester.makefile(".md", **{"evals/alpha/prompt": "---\nruns: 1\n---\nSay hi\n"})
    pytester.makefile(".md", **{"evals/alpha/graders/hi": "---\ntype: regex\npattern: hi\n---\n"})
    agent = reply_agent(pytester, "oh hi")
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "-v", "--eval-json", "out.json"
    )
    result.assert_outcomes(passed=1)
    result.stdout.re_match_lines(
        [r".*(PASSED evals/alpha::alpha\[1\]|evals/alpha::alpha\[1\] PASSED)"]
    )
    result.stdout.re_match_lines([r"CASE\s+SCORE\s+PASS%\s+RUNS\s+COST\s+NOTES"])
    doc = read_doc()
    assert doc["suite"]["ablation"] in ("none", "auto")
    assert list(doc["cases"][0]["arms"]) == ["with"]


def test_failing_grader_fails_with_arm_only(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    make_plugin(pytester)
    agent = reply_agent(pytester, "Ship 2.0.0.")
    result = pytester.runpytest("evals", *plugin_args, "--eval-agent", agent, "--eval-runs", "1")
    # with-arm fails on grades; the without-arm is a measurement and passes.
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*✗ answer: pattern not found in last_message*",
            "*✗ no-major: pattern found (expected absent)*",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_threshold_below_one_gates_on_case_means(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    pytester.makefile(".md", **{"evals/half/prompt": "---\nruns: 2\n---\nanswer please\n"})
    pytester.makefile(
        ".md",
        **{
            "evals/half/graders/a": "---\ntype: regex\npattern: alpha\n---\n",
            "evals/half/graders/b": "---\ntype: regex\npattern: beta\n---\n",
        },
    )
    agent = reply_agent(pytester, "alpha only")
    passing = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-threshold", "0.5",
        "--junitxml", "pass.xml",
    )  # fmt: skip
    # Each run scored 0.50: under the threshold 0.5 they are measurements, and the case passes.
    assert passing.ret == pytest.ExitCode.OK
    passing.assert_outcomes(passed=2)
    passing.stdout.fnmatch_lines(["every case's mean score meets the threshold 0.5"])
    assert junit_outcomes(pytester.path / "pass.xml") == {"passed": 2}
    failing = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-threshold", "0.8",
        "--junitxml", "fail.xml",
    )  # fmt: skip
    # The case is below 0.8: its last run to finish carries the failure, everywhere alike.
    assert failing.ret == pytest.ExitCode.TESTS_FAILED
    failing.assert_outcomes(passed=1, failed=1)
    failing.stdout.fnmatch_lines(
        [
            "*case half: mean score 0.50 is below the threshold 0.80 (runs: 0.50, 0.50)*",
            "*below the threshold 0.80: half (0.50)*",
        ]
    )
    assert junit_outcomes(pytester.path / "fail.xml") == {"passed": 1, "failure": 1}


def junit_outcomes(path: Path) -> dict[str, int]:
    """How many test cases of a JUnit file passed, failed, errored or were skipped."""
    import xml.etree.ElementTree as ET

    counts: dict[str, int] = {}
    for case in ET.parse(path).iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        for kind in kinds or ["passed"]:
            counts[kind] = counts.get(kind, 0) + 1
    return counts


def test_ini_keys_are_option_twins(pytester: pytest.Pytester, scripted_agent) -> None:
    make_plugin(pytester)
    agent = scripted_agent(RULES)
    pytester.makeini(f"[pytest]\neval_agent = {agent}\neval_runs = 1\neval_ablation = none\n")
    result = pytester.runpytest("evals", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["evals/suggests-version::suggests-version[[]1]", "*1 test*"])


@needs_marker_arguments
def test_a_session_of_without_arm_runs_only_applies_no_gate(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    """``-m "evals(arm='without')"`` measures the agent without the plugin: nothing to gate."""
    make_plugin(pytester)
    result = pytester.runpytest(
        "evals", *plugin_args, "-m", "evals(arm='without')", "--eval-agent",
        scripted_agent(RULES), "--eval-json", "out.json",
    )  # fmt: skip
    assert result.ret == 0
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["no with-arm run was selected: no threshold applies (the runs are measurements)"]
    )
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    assert doc["aggregates"]["thresholdMet"] is True
    assert doc["ungated"].startswith("no with-arm run was selected")
    assert "have no graded run" not in result.stdout.str()


def test_junit_shows_the_arm_run_score_and_failed_graders(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    write_tree(
        pytester.path,
        {
            "evals/greets/prompt.md": "---\nruns: 1\n---\nSay hi\n",
            "evals/greets/graders/hi.md": "---\ntype: regex\npattern: hi\n---\n",
            "evals/greets/graders/bye.md": "---\ntype: regex\npattern: bye\n---\n",
        },
    )
    agent = scripted_agent([{"match": "Say hi", "reply": "hi"}])
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--junitxml", "junit.xml"
    )
    result.assert_outcomes(failed=1)
    (case,) = ET.parse(pytester.path / "junit.xml").iter("testcase")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert "plugin_evals" in props
    assert {k: v for k, v in props.items() if k != "plugin_evals"} == {
        "eval_arm": "single",
        "eval_run": "1",
        "eval_score": "0.50",
        "eval_failed_graders": "bye",
    }


#: A hostile answer: it clears the screen, rings the bell, and goes on for 30,000 characters.
HOSTILE = "hi\x1b[2J there\x07\n" + "x" * 30_000


@pytest.mark.parametrize("logging", ["system-out", None])
def test_junit_system_out_holds_the_answer_when_junit_logging_asks(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any, logging: str | None
) -> None:
    """``junit_logging`` decides whether the testcase's system-out holds the agent's answer (cut,
    made inert); its properties are there either way."""
    check_junit_system_out(pytester, plugin_args, scripted_agent, logging)


@pytest.mark.workers
def test_junit_system_out_holds_the_answer_under_junit_logging_all(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    """``junit_logging=all`` (also with two workers: the answer crosses to the controller, which
    writes the file)."""
    check_junit_system_out(pytester, plugin_args, scripted_agent, "all")


def check_junit_system_out(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any, logging: str | None
) -> None:
    """One session of a hostile answer written to ``junit.xml`` under ``junit_logging``."""
    write_tree(
        pytester.path,
        {
            "evals/greets/prompt.md": "---\nruns: 1\n---\nSay hi\n",
            "evals/greets/graders/hi.md": "---\ntype: regex\npattern: hi\n---\n",
        },
    )
    ini = f"-o junit_logging={logging}".split() if logging else []
    agent = scripted_agent([{"match": "Say hi", "reply": HOSTILE}])
    result = pytester.runpytest(
        "evals", *plugin_args, *ini, "--eval-agent", agent, "--junitxml", "junit.xml"
    )
    result.assert_outcomes(passed=1)
    raw = (pytester.path / "junit.xml").read_text(encoding="utf-8")
    (case,) = ET.fromstring(raw).iter("testcase")
    assert case.find("properties") is not None  # the properties are there either way
    if logging is None:  # pytest writes no system-out unless junit_logging asks for it
        assert case.find("system-out") is None, raw[:2000]
        return
    out = case.findtext("system-out") or ""
    assert "the agent's answer (4,000+ characters):\nhi there␇\nxxx" in out, out[:300]
    assert out.rstrip().endswith("x\n[… cut at 4,000 characters]"), out[-300:]
    assert "\x1b" not in raw and "\x07" not in raw
    assert out.count("x") < 4_000  # bounded
