"""Intervals and verdicts as a plugin author sees them: runs that all agree, the regression of a
constant partial score, the gate, through pytest as users run it."""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

#: A deterministic agent: it answers with the words ``answers.json`` gives its case and arm.
AGENT = """\
import json, os, sys
answers = json.load(open(sys.argv[1], encoding="utf-8"))
print(" ".join(answers[os.environ["EVAL_CASE"]][os.environ["EVAL_ARM"]]))
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
    (pytester.path / "agent.py").write_text(AGENT, encoding="utf-8")


def answer(pytester: pytest.Pytester, table: dict[str, tuple[int, int]]) -> str:
    """Make each case's with arm say the first ``w`` words and its without arm the first
    ``wo`` (scores w/3 and wo/3 in every run); the ``--eval-agent`` value."""
    path = pytester.path / "answers.json"
    words = {
        name: {"with": list(WORDS[:w]), "without": list(WORDS[:wo])}
        for name, (w, wo) in table.items()
    }
    path.write_text(json.dumps(words), encoding="utf-8")
    return "cmd:" + shlex.join([sys.executable, str(pytester.path / "agent.py"), str(path)])


def run(pytester: pytest.Pytester, agent: str, plugin_args: list[str], *extra: str) -> Any:
    return pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-json", "out.json", *extra
    )


def test_runs_that_all_agree_have_intervals(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    """Constant partial scores (1/3 in every run), all passed, all failed: every arm and every
    Δ has an interval in the JSON and the table, Wilson's and Newcombe's with n · mean as the
    count."""
    make_suite(pytester, ["partial", "agree"], runs=3)
    agent = answer(pytester, {"partial": (1, 1), "agree": (3, 0)})
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
    assert change["verdict"] == "regressed"
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*--eval-fail-on-regression: 1 case(s) regressed*steady*"])
