"""``--eval-plan``'s lines (``reporting.plan``), called directly: the worst case without an
earlier session, the variances an earlier session measured, and what a design cannot decide.
(That a plan starts no agent and its exit status: tests/integration/test_plan.py.)"""

from __future__ import annotations

import math
import re
import statistics
from pathlib import Path

from scipy.stats import norm

from pytest_plugin_evals.model import Case
from pytest_plugin_evals.reporting.plan import plan_lines
from tests.helpers import run_record, summary

Z = norm.ppf(0.975) + norm.ppf(0.8)
ROOT = Path("/suite/evals")


def two_arm_items(names: list[str], runs: int) -> list[tuple[str, str, int, bool]]:
    """The eval items of two-arm cases, as ``plugin.plan`` gives them: one per arm and run."""
    return [(name, name, run, True) for name in names for run in range(1, runs + 1) for _ in "ab"]


def test_without_an_earlier_session_the_worst_variance_and_stated_defaults_are_assumed() -> None:
    lines = plan_lines(two_arm_items(["ask"], 3), None, 0.2, None, 0.1)
    assert lines[0] == (
        "eval plan (no agent started): runs per arm to detect a Δ of 0.20 at 80% power "
        "(95%, two-sided), from no earlier session; 1 case(s) assume the worst-case variance 0.25"
    )
    needed = math.ceil(Z**2 * 0.5 / 0.2**2)  # two arms of σ² 0.25: 99 runs per arm
    assert re.fullmatch(rf"ask\s+0\.250\s+0\.250\s+3\s+{needed}\s+\$\d+\.\d\d\s+\S+", lines[2])
    assert re.fullmatch(
        r"CASE\s+VAR WITH\s+VAR W/OUT\s+RUNS NOW\s+RUNS NEEDED\s+COST\s+TIME", lines[1]
    )
    assert lines[3].startswith(f"every case at its runs needed: {2 * needed} run(s), ")
    assert "(between-case spread τ² 0 (assumed: no earlier Δ))" in lines[4]
    assert lines[5] == "assumed per run (no earlier session): $0.05, 30s"


def case(name: str) -> Case:
    return Case(
        name=name, prompt="p", source="prose", path=ROOT / name / "prompt.md",
        dir=ROOT / name, suite_root=ROOT,
    )  # fmt: skip


def test_an_earlier_session_gives_each_case_its_variance_and_the_suite_its_spread() -> None:
    scores = {"with": [1.0, 1.0, 1.0, 0.0, 1.0], "without": [0.0, 0.0, 0.0, 1.0, 0.0]}
    records = [
        run_record(case(name), arm, n + 1, score=score if name == "a" else 1 - score)
        for name in ("a", "b")
        for arm, arm_scores in scores.items()
        for n, score in enumerate(arm_scores)
    ]
    before = summary(records)
    lines = plan_lines(two_arm_items(["a", "b"], 5), before, 0.3, None, 0.1)
    assert lines[0].endswith(", from the session of 2026-01-01T00:00:00Z")  # no case assumed
    var = statistics.variance(scores["with"])  # 0.2, both arms, both cases
    assert re.match(rf"a\s+{var:.3f}\s+{var:.3f}\s+5\s+", lines[2]), lines[2]
    assert re.search(r"\(between-case spread τ² \d\.\d{3} \(measured\)\)$", lines[5]), lines[5]
    assert not any(line.startswith("assumed per run") for line in lines)


def test_the_design_s_operating_characteristics_and_what_it_cannot_decide() -> None:
    """The session's design beside fixed 10's and auto:20's; with 3 runs per arm over 8
    two-arm cases no case can be called better alone (3 of 3 against 0 of 3 has p 0.0071 >
    0.05 / 8) nor equivalent (35 runs)."""
    names = [f"case-{i}" for i in range(8)]
    lines = plan_lines(two_arm_items(names, 3), None, 0.2, None, 0.1)
    at = lines.index(
        "operating characteristics (pass/fail runs, one case, computed exactly): the chance of "
        "the correct verdict and the expected runs per arm"
    )
    design = lines[at + 1 :]
    assert re.fullmatch(
        r"DESIGN\s+TRUE Δ 0\.0\s+TRUE Δ 0\.1\s+TRUE Δ 0\.2\s+TRUE Δ 0\.4", design[0]
    )
    assert any(
        re.fullmatch(
            r"fixed:3\s+98\.6% \(3\.0\)\s+1\.4% \(3\.0\)\s+3\.1% \(3\.0\)\s+10\.0% \(3\.0\)", x
        )
        for x in design
    ), design
    assert any(re.fullmatch(r"fixed:10\s+97\.3% \(10\.0\)\s+.*45\.4% \(10\.0\)", x) for x in design)
    assert design[-2:] == [
        "cannot decide: with 3 run(s) per arm and 8 cases (more than 7), no case can be called "
        "better or worse alone: even its clearest result (p 0.0071) is called only with at least "
        "2 cases as clear",
        "cannot decide: no case can be called equivalent within ±0.1 with fewer than 35 runs per "
        "arm",
    ]
    auto = plan_lines(two_arm_items(names, 3), None, 0.2, 20, 0.1)
    assert any(re.fullmatch(r"auto:20\s+97\.5% \(7\.9\)\s+.*59\.2% \(13\.0\)", x) for x in auto)
    assert not any("no case can be called better or worse alone" in x for x in auto)


def test_one_arm_cases_have_no_design_to_judge() -> None:
    lines = plan_lines(
        [("solo", "solo", 1, False), ("solo", "solo", 2, False)], None, 0.2, None, 0.1
    )
    assert not any(line.startswith("operating characteristics") for line in lines)
    needed = math.ceil(Z**2 * 0.25 / 0.2**2)  # one arm: its variance alone
    assert re.match(rf"solo\s+0\.250\s+0\.000\s+2\s+{needed}\s+", lines[2]), lines[2]
