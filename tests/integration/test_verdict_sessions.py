"""Intervals and verdicts as a plugin author sees them: runs that all agree, the regression of a
constant partial score, the gate, through pytest as users run it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

#: A deterministic ``py:`` agent (called in the session's process: no interpreter started per
#: run): it answers with the words ``answers.json`` beside it gives its case and arm.
AGENT = """\
import json
from pathlib import Path

ANSWERS = Path(__file__).with_name("answers.json")


def answer(request):
    answers = json.loads(ANSWERS.read_text(encoding="utf-8"))
    return " ".join(answers[request.case.name][request.arm])
"""

#: Three graders of one weight each: a run that says only ALPHA scores 1/3.
WORDS = ("ALPHA", "BRAVO", "CHARLIE")


def make_suite(pytester: pytest.Pytester, cases: list[str], runs: int) -> None:
    pytester.makefile(".json", **{".claude-plugin/plugin": '{"name": "helper"}'})
    for name in cases:
        pytester.makefile(".md", **{f"evals/{name}/prompt": f"---\nruns: {runs}\n---\nDo {name}"})
        for word in WORDS:
            grader = f"---\ntype: regex\npattern: {word}\n---\n"
            pytester.makefile(".md", **{f"evals/{name}/graders/{word.lower()}": grader})
    (pytester.path / "verdict_agent.py").write_text(AGENT, encoding="utf-8")
    pytester.makeini("[pytest]\npythonpath = .\n")


def answer(pytester: pytest.Pytester, table: dict[str, tuple[int, int]]) -> str:
    """Make each case's with arm say the first ``w`` words and its without arm the first
    ``wo`` (scores w/3 and wo/3 in every run); the ``--eval-agent`` value."""
    path = pytester.path / "answers.json"
    words = {
        name: {"with": list(WORDS[:w]), "without": list(WORDS[:wo])}
        for name, (w, wo) in table.items()
    }
    path.write_text(json.dumps(words), encoding="utf-8")
    return "py:verdict_agent:answer"


def run(pytester: pytest.Pytester, agent: str, plugin_args: list[str], *extra: str) -> Any:
    return pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-json", "out.json", *extra
    )


def test_runs_that_all_agree_have_intervals_and_an_inconclusive_case_its_runs_to_come(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    """Constant partial scores (1/3 in every run), all passed, all failed: every arm and every
    Δ has an interval in the JSON and the table, Wilson's and Newcombe's with n · mean as the
    count. 3 runs of 1.00 against 3 of 0.33 are not yet beyond noise: inconclusive, and about
    one more run per arm would decide it (4 against 4 is, see the comparison test below)."""
    make_suite(pytester, ["partial", "agree", "close"], runs=3)
    agent = answer(pytester, {"partial": (1, 1), "agree": (3, 0), "close": (3, 1)})
    result = run(pytester, agent, plugin_args, "--eval-threshold", "0")
    assert result.ret == 0
    cases = {c["name"]: c["aggregates"] for c in read_doc()["cases"]}
    partial, agree = cases["partial"], cases["agree"]
    assert partial["score"] == pytest.approx(1 / 3)
    assert partial["scoreInterval"] == pytest.approx(
        list(proportion_confint(1.0, 3, method="wilson")), abs=1e-6
    )
    expected = confint_proportions_2indep(1.0, 3, 1.0, 3, method="newcomb", compare="diff")
    assert partial["deltaInterval"] == pytest.approx(list(expected), abs=1e-6)
    assert agree["scoreInterval"] == pytest.approx(
        list(proportion_confint(3, 3, method="wilson")), abs=1e-6
    )
    assert agree["scoreWithoutInterval"] == pytest.approx(
        list(proportion_confint(0, 3, method="wilson")), abs=1e-6
    )
    low, high = agree["deltaInterval"]
    assert 0 < low < high == 1.0
    result.stdout.re_match_lines(
        [
            rf"agree\s+1\.00\s+0\.00\s+\+1\.00 \[\+{low:.2f}, \+1\.00\]\s+6\s+",
            r"partial\s+0\.33\s+0\.33\s+\+0\.00 \[-0\.\d\d, \+0\.\d\d\]\s+6\s+",
        ],
        consecutive=False,
    )
    interval = read_doc()["aggregates"]["meanDeltaInterval"]
    assert interval is not None and interval[0] < 0.5 < interval[1]
    decision = cases["close"]["deltaDecision"]
    assert decision["verdict"] == "inconclusive" and decision["moreRuns"] == 1
    result.stdout.re_match_lines(
        [r"cases: .*inconclusive \(close: about 1 more run\(s\).*\) — false discovery rate .*"]
    )


def test_constant_partial_regression_between_sessions_is_a_regression(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    """The issue's regression: every with-arm run scored 1.00, then every run 0.33; the
    comparison with the earlier session finds it beyond noise and
    ``--eval-fail-on-regression`` fails the session."""
    make_suite(pytester, ["steady"], runs=4)
    first = run(
        pytester, answer(pytester, {"steady": (3, 0)}), plugin_args, "--eval-threshold", "0"
    )
    assert first.ret == 0
    agent = answer(pytester, {"steady": (1, 0)})
    result = run(
        pytester,
        agent,
        plugin_args,
        "--eval-threshold",
        "0",
        "--eval-compare",
        "last",
        "--eval-fail-on-regression",
    )
    (change,) = read_doc()["comparison"]["cases"]
    assert change["before"] == pytest.approx(1.0) and change["after"] == pytest.approx(1 / 3)
    assert change["changeInterval"][1] < 0
    assert change["verdict"] == "worse"
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*--eval-fail-on-regression: 1 case(s) worse since*: steady"])


def test_three_way_verdicts_in_the_json_and_the_terminal_and_the_gate(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    """better, worse and equivalent (inside ±--eval-margin) per case, the suite's verdict,
    the false discovery rate line; --eval-gate not-worse fails on the worse case."""
    make_suite(pytester, ["win", "lose", "same"], runs=6)
    agent = answer(pytester, {"win": (3, 0), "lose": (0, 3), "same": (3, 3)})
    result = run(
        pytester,
        agent,
        plugin_args,
        "--eval-threshold",
        "0",
        "--eval-margin",
        "0.5",
        "--eval-gate",
        "not-worse",
    )
    doc = read_doc()
    verdicts = {c["name"]: c["aggregates"]["deltaDecision"] for c in doc["cases"]}
    assert verdicts["win"]["verdict"] == "better" and verdicts["win"]["pValue"] < 0.05
    assert verdicts["lose"]["verdict"] == "worse"
    # 6 of 6 against 6 of 6: Newcombe's interval lies within ±0.5.
    assert verdicts["same"]["verdict"] == "equivalent"
    agg = doc["aggregates"]
    assert agg["margin"] == 0.5
    assert agg["meanDeltaDecision"]["verdict"] == "inconclusive"
    assert agg["meanDeltaDecision"]["claim"] in ("better", "worse", "equivalent")
    assert result.ret == 1
    result.stdout.re_match_lines(
        [
            r"verdicts \(Δ = WITH − W/OUT, 95%, equivalent within ±0\.50\): suite mean Δ "
            r"inconclusive — .*",
            r"cases: 1 better \(win\), 1 worse \(lose\), 1 equivalent \(same\) — false "
            r"discovery rate held at 5% over 3 cases \(Benjamini–Hochberg\)",
            r".*--eval-gate not-worse: 1 case\(s\) worse than the without arm: lose$",
        ],
        consecutive=False,
    )
    # The same suite without the losing case: the gate passes; "better" asks for more.
    kept = run(
        pytester, agent, plugin_args, "--eval-threshold", "0", "-k", "win", "--eval-gate", "better"
    )
    assert kept.ret == 0, kept.stdout.str()
    assert read_doc()["aggregates"]["meanDeltaDecision"]["verdict"] == "better"
    lost = run(
        pytester, agent, plugin_args, "--eval-threshold", "0", "-k", "lose", "--eval-gate", "better"
    )
    assert lost.ret == 1
    lost.stdout.re_match_lines(
        [r".*--eval-gate better: the suite's mean Δ is worse, not better than the without arm$"]
    )
