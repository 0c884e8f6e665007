"""Intervals and reducers as a plugin author sees them: the JSON, the terminal, the exit status."""

from __future__ import annotations

import shlex
from typing import Any

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep

#: A deterministic agent (a shell script: tens of runs start no interpreter): run N of an arm
#: passes when N is at most that arm's pass count (the ``case`` lines, one per case and arm).
AGENT = """\
case "$EVAL_CASE:$EVAL_ARM" in
{lines}
esac
if [ "$EVAL_RUN" -le "$passes" ]; then echo PASS; else echo FAIL; fi
"""

GRADER = "---\ntype: regex\npattern: PASS\n---\n"


def make_suite(pytester: pytest.Pytester, cases: dict[str, tuple[int, int]], runs: int) -> str:
    pytester.makefile(".json", **{".claude-plugin/plugin": '{"name": "helper"}'})
    for name in cases:
        pytester.makefile(".md", **{f"evals/{name}/prompt": f"---\nruns: {runs}\n---\nDo {name}"})
        pytester.makefile(".md", **{f"evals/{name}/graders/passes": GRADER})
    lines = [
        f"  {shlex.quote(f'{name}:{arm}')}) passes={n} ;;"
        for name, counts in cases.items()
        for arm, n in zip(("with", "without"), counts, strict=True)
    ]
    script = pytester.path / "agent.sh"
    script.write_text(AGENT.format(lines="\n".join(lines)), encoding="utf-8")
    return "cmd:" + shlex.join(["sh", str(script)])


def run(pytester: pytest.Pytester, agent: str, plugin_args: list[str], *extra: str) -> Any:
    return pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-json", "out.json", *extra
    )


def newcombe(s1: int, n1: int, s2: int, n2: int) -> list[float]:
    low, high = confint_proportions_2indep(s1, n1, s2, n2, method="newcomb", compare="diff")
    return [float(low), float(high)]


def test_eight_of_ten_against_two_of_ten_is_beyond_noise(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    agent = make_suite(pytester, {"clear-win": (8, 2), "coin-flip": (1, 0)}, runs=10)
    # coin-flip makes 10 runs as well: 1 of 10 against 0 of 10.
    result = run(pytester, agent, plugin_args, "--eval-threshold", "0.5")
    doc = read_doc()
    cases = {c["name"]: c["aggregates"] for c in doc["cases"]}
    win = cases["clear-win"]
    assert win["delta"] == pytest.approx(0.6)
    assert win["deltaInterval"] == pytest.approx(newcombe(8, 10, 2, 10), abs=1e-6)
    assert win["deltaSignificant"] is True
    flip = cases["coin-flip"]
    assert flip["deltaInterval"] == pytest.approx(newcombe(1, 10, 0, 10), abs=1e-6)
    assert flip["deltaSignificant"] is False
    assert win["scoreInterval"][0] < 0.8 < win["scoreInterval"][1]
    assert win["unstable"] == ["with", "without"]
    low, high = win["deltaInterval"]
    result.stdout.re_match_lines(
        [
            rf"clear-win\s+0\.80\s+0\.20\s+\+0\.60 \[\+{low:.2f}, \+{high:.2f}\]\s+20\s+",
            r"cases: 1 better \(clear-win\), 1 inconclusive \(coin-flip: about \d+ more run\(s\)\)"
            r" — false discovery rate held at 5% over 2 cases \(Benjamini–Hochberg\)",
            r"unstable: 2 case\(s\) whose runs disagree within an arm: clear-win \(with, "
            r"without\), coin-flip \(with\)",
        ],
        consecutive=False,
    )
    assert doc["aggregates"]["meanDeltaInterval"] is not None
    assert doc["aggregates"]["reducer"] == "mean"
    assert doc["aggregates"]["latency"]["p95Seconds"] >= doc["aggregates"]["latency"]["p50Seconds"]


def test_one_of_three_against_none_includes_zero_and_asks_for_more_runs(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    agent = make_suite(pytester, {"maybe": (1, 0)}, runs=3)
    result = run(pytester, agent, plugin_args, "--eval-threshold", "0")
    assert result.ret == 0
    agg = read_doc()["cases"][0]["aggregates"]
    assert agg["deltaInterval"] == pytest.approx(newcombe(1, 3, 0, 3), abs=1e-6)
    assert agg["deltaInterval"][0] < 0 < agg["deltaInterval"][1]
    assert agg["deltaSignificant"] is False
    result.stdout.re_match_lines(
        [
            r"cases: 1 inconclusive \(maybe: about \d+ more run\(s\)\) — false discovery .*",
            r"wide intervals: the Δ of 1 case\(s\) spans more than 1\.0 \(maybe\) — about "
            r"--eval-runs \d+ would narrow them",
        ],
        consecutive=False,
    )


def test_the_reducer_and_a_cases_own_decide_the_cases(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    """``--eval-reducer at-least:2`` decides each case (two of three runs pass, one does not)
    but one that ``eval_case_reducers`` gives its own (``any``: one of three is enough); the
    failure is on the case's last run, naming the reducer (JUnit and --lf see it), and the
    exit status is the gate's (the reducers' rules: tests/unit/test_case_decision.py)."""
    agent = make_suite(pytester, {"twice": (2, 0), "once": (1, 0), "lucky-once": (1, 0)}, runs=3)
    pytester.makeini("[pytest]\neval_case_reducers =\n    lucky-* = any\n")
    result = run(pytester, agent, plugin_args, "--eval-reducer", "at-least:2")
    doc = read_doc()
    cases = {c["name"]: c["aggregates"] for c in doc["cases"]}
    assert {name: (agg["reducer"], agg["passed"]) for name, agg in cases.items()} == {
        "twice": ("at-least:2", True),
        "once": ("at-least:2", False),
        "lucky-once": ("any", True),
    }
    assert doc["aggregates"]["reducer"] == "at-least:2"
    assert doc["aggregates"]["thresholdMet"] is False
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*case once: failed under the at-least:2 reducer*"])
    result.assert_outcomes(passed=17, failed=1)


def test_under_all_each_failed_run_fails_its_item(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    """``--eval-reducer all`` (pass^k, threshold 1): one failed run fails the case, and that
    run's item, as under mean."""
    agent = make_suite(pytester, {"flaky": (2, 0)}, runs=3)
    result = run(pytester, agent, plugin_args, "--eval-reducer", "all")
    doc = read_doc()
    agg = doc["cases"][0]["aggregates"]
    assert (agg["reducer"], doc["aggregates"]["reducer"]) == ("all", "all")
    assert agg["passed"] is False and doc["aggregates"]["thresholdMet"] is False
    assert result.ret == 1
    result.assert_outcomes(passed=5, failed=1)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--eval-reducer", "most"), "--eval-reducer must be mean, all, any or at-least:M*"),
        (("--eval-reducer", "at-least:0"), "--eval-reducer must be mean, all, any or at-least:M*"),
    ],
)
def test_a_bad_reducer_is_one_line(
    pytester: pytest.Pytester, args: tuple[str, ...], message: str
) -> None:
    agent = make_suite(pytester, {"one": (1, 0)}, runs=1)
    result = pytester.runpytest("evals", "-p", "no:cacheprovider", "--eval-agent", agent, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
    assert "Traceback" not in result.stderr.str()


def test_a_bad_case_reducer_line_is_one_line(pytester: pytest.Pytester) -> None:
    agent = make_suite(pytester, {"one": (1, 0)}, runs=1)
    pytester.makeini("[pytest]\neval_case_reducers =\n    smoke-* any\n")
    result = pytester.runpytest("evals", "-p", "no:cacheprovider", "--eval-agent", agent)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(['ERROR: ini eval_case_reducers: each line is "GLOB = REDUCER"*'])


def test_python_tests_with_numbered_parameters_are_not_eval_runs(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``test_x[0]`` looks like a run label; it is not an eval item: no eval notices."""
    pytester.makepyfile(
        "import pytest\n@pytest.mark.parametrize('n', [0, 1])\ndef test_x(n):\n    assert n < 2\n"
    )
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_OAUTH_TOKEN", raising=False)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert "credential" not in result.stdout.str()
    assert "plugin evals" not in result.stdout.str()
