"""Three-way verdicts and their false discovery rate control, checked against statsmodels and
by simulation (never against the code itself)."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from pytest_plugin_evals.stats import decisions
from pytest_plugin_evals.stats import intervals as stats
from pytest_plugin_evals.stats.decisions import Decision, classify


@pytest.mark.parametrize(
    ("interval", "margin", "verdict"),
    [
        ((0.2, 0.6), 0.1, "better"),
        ((-0.6, -0.2), 0.1, "worse"),
        ((-0.05, 0.08), 0.1, "equivalent"),
        ((0.01, 0.08), 0.1, "equivalent"),  # above 0, but too small to matter
        ((-0.2, 0.4), 0.1, "inconclusive"),
        ((-0.05, 0.08), 0.0, "inconclusive"),  # margin 0: never equivalent
        (None, 0.1, "inconclusive"),
    ],
)
def test_classify(interval: tuple[float, float] | None, margin: float, verdict: str) -> None:
    assert classify(interval, margin) == verdict


def test_a_decided_verdict_has_a_p_value_below_five_percent() -> None:
    win = decisions.decide_difference([1.0] * 8 + [0.0] * 2, [1.0] * 2 + [0.0] * 8, 0.1)
    assert win is not None and win.verdict == "better" and win.p_value < 0.05
    coin = decisions.decide_difference([1.0, 0.0, 1.0], [0.0, 1.0, 0.0], 0.1)
    assert coin is not None and coin.verdict == "inconclusive" and coin.p_value > 0.05
    # The projection: with the same means, the interval at "more runs" decides it.
    close = decisions.decide_difference([1.0] * 3, [1 / 3] * 3, 0.1)
    assert close is not None and close.more_runs == 1
    n = 3 + close.more_runs
    assert (
        classify(stats.newcombe(n, n, n / 3, n), 0.1) == "worse"
        or classify(stats.newcombe(n, n, n / 3, n), 0.1) == "better"
    )


def test_benjamini_hochberg_matches_statsmodels() -> None:
    rng = np.random.default_rng(5)
    ps = [*list(rng.uniform(0, 0.2, size=15)), 0.001, 0.004, 0.03]
    given = [Decision("better" if p < 0.05 else "inconclusive", "better", p) for p in ps]
    adjusted = decisions.control_fdr(given, 0.05)
    reject, *_ = multipletests(ps, alpha=0.05, method="fdr_bh")
    for kept, d, rejected in zip(adjusted, given, reject, strict=True):
        assert kept is not None
        assert (kept.verdict == "better") == (bool(rejected) and d.verdict == "better")
        if d.verdict == "better" and not rejected:
            assert kept.fdr_withdrawn and kept.unadjusted == "better"


def test_false_decisions_among_unchanged_cases_stay_below_the_rate() -> None:
    """20 cases with no effect (both arms pass half the time), 10 runs per arm, 200 sessions:
    the share of sessions that call any case better or worse stays at 5% (with no true
    effect, the false discovery rate is the chance of any false call), give or take two
    standard errors of the simulation (1.5 points each); uncorrected, it would be about 60%."""
    rng = np.random.default_rng(21)
    sessions_with_a_false_call = 0
    for _ in range(200):
        found = []
        for _ in range(20):
            a = list(rng.binomial(1, 0.5, 10).astype(float))
            b = list(rng.binomial(1, 0.5, 10).astype(float))
            found.append(decisions.decide_difference(a, b, 0.1))
        adjusted = decisions.control_fdr(found)
        if any(d is not None and d.verdict in ("better", "worse") for d in adjusted):
            sessions_with_a_false_call += 1
    assert sessions_with_a_false_call / 200 <= 0.05 + 2 * 0.0154


def test_the_suite_verdict_projects_more_runs_only_when_runs_would_help() -> None:
    agree = decisions.decide_mean([0.3, 0.3, 0.3], [(-0.5, 1.0)] * 3, 0.1, runs=3)
    assert agree is not None and agree.verdict == "inconclusive" and agree.more_runs is not None
    spread = decisions.decide_mean(
        [1.0, -1.0, 0.2], [(0.8, 1.0), (-1.0, -0.8), (0.0, 0.4)], 0.1, runs=3
    )
    assert spread is not None and spread.verdict == "inconclusive" and spread.more_runs is None
    assert "add cases" in decisions.describe(spread, beyond="add cases")


def test_each_agent_gets_its_own_verdict_and_the_terminal_says_it() -> None:
    """Under --eval-agents, each agent's mean Δ has its verdict: the plugin helps on one agent
    (5 of 5 against 0 of 5 on two cases), not yet on the other (3 of 5 against 2 of 5)."""
    import dataclasses
    from pathlib import Path

    from pytest_plugin_evals.model import Case
    from pytest_plugin_evals.reporting.terminal import summary_lines
    from tests.helpers import run_record, summary

    root = Path("/suite/evals")
    records = []
    for agent, (w, wo) in {"fast": (5, 0), "slow": (3, 2)}.items():
        for name in ("one", "two"):
            case = Case(name, "p", "prose", root / name / "prompt.md", root / name, root)
            for arm, passes in (("with", w), ("without", wo)):
                for n in range(1, 6):
                    record = run_record(case, arm, n, score=float(n <= passes), two_arm=True)
                    nodeid = f"evals/{name}::{name}[{agent}-{arm}-{n}]"
                    records.append(dataclasses.replace(record, nodeid=nodeid, agent=agent))
    result = summary(records, agents=[("fast", "cmd:a"), ("slow", "cmd:b")])
    verdicts = {a.label: a.mean_delta_decision for a in result.agents}
    assert verdicts["fast"] is not None and verdicts["fast"].verdict == "better"
    assert verdicts["slow"] is not None and verdicts["slow"].verdict == "inconclusive"
    (line,) = [x for x in summary_lines(result) if x.startswith("agents' mean Δ: ")]
    assert line.startswith("agents' mean Δ: fast better (p 0.")
    assert "slow inconclusive — " in line


@pytest.mark.parametrize(("a", "b"), [([0.0, 0.0], [0.0, 0.0]), ([1.0, 1.0, 0.0], [0.0, 1.0, 0.0])])
def test_a_one_case_suite_needs_the_runs_its_case_needs(a: list[float], b: list[float]) -> None:
    # The suite's projection narrows each case's interval as that case's own does (Newcombe
    # at n runs of the same means), not as 1/√n: one case, one figure.
    case = decisions.decide_difference(a, b, 0.1)
    assert case is not None and case.verdict == "inconclusive" and case.more_runs
    delta = sum(a) / len(a) - sum(b) / len(b)
    bounds = [stats.newcombe(sum(a), len(a), sum(b), len(b))]
    assert bounds[0] is not None
    means = [(sum(a) / len(a), sum(b) / len(b))]
    suite = decisions.decide_mean([delta], [bounds[0]], 0.1, len(a), means)
    assert suite is not None and suite.verdict == "inconclusive"
    assert suite.more_runs == case.more_runs
