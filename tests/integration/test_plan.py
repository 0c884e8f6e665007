"""``--eval-plan`` on the project's example plugin: it starts no agent, and says the runs per
arm and the cases a decision needs, from the worst case, then from an earlier session."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
from scipy.stats import norm

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "release-helper"
Z = norm.ppf(0.975) + norm.ppf(0.8)


def copy_example(pytester: pytest.Pytester) -> Path:
    copy = pytester.path / "release-helper"
    shutil.copytree(
        EXAMPLE, copy, ignore=shutil.ignore_patterns("results", "__pycache__", ".runs.lock")
    )
    return copy


def test_the_plan_starts_no_agent_and_assumes_the_worst_without_history(
    pytester: pytest.Pytester,
) -> None:
    copy = copy_example(pytester)
    # An agent that cannot start: the plan must not try it.
    result = pytester.runpytest(
        str(copy), "-p", "no:cacheprovider", "--eval-plan", "--eval-agent=cmd:/nonexistent/agent"
    )
    assert result.ret == pytest.ExitCode.OK  # it planned: a CI step that plans passes
    out = result.stdout.str()
    assert "passed" not in out and "error" not in out.lower()
    assert not (copy / "evals" / "results").exists()
    # Two arms, σ² = 0.25 each: (z.975 + z.8)² · 0.5 / 0.2² runs per arm.
    needed = math.ceil(Z**2 * 0.5 / 0.2**2)
    result.stdout.re_match_lines(
        [
            r"eval plan \(no agent started\): runs per arm to detect a Δ of 0\.20 at 80% power "
            r"\(95%, two-sided\), from no earlier session; \d+ case\(s\) assume the worst-case "
            r"variance 0\.25",
            r"CASE\s+VAR WITH\s+VAR W/OUT\s+RUNS NOW\s+RUNS NEEDED\s+COST\s+TIME",
            rf"suggests-next-version\s+0\.250\s+0\.250\s+\d+\s+{needed}\s+\$",
            r"suite: \d+ case\(s\) at \d+ run\(s\)/arm detect a mean Δ of 0\.\d\d; to detect "
            r"0\.20: \d+ case\(s\) at 3 runs/arm, .* \(between-case spread τ² 0 \(assumed: no "
            r"earlier Δ\)\)",
            r"assumed per run \(no earlier session\): \$0\.05, 30s",
        ],
        consecutive=False,
    )


def test_the_plan_uses_the_earlier_sessions_variance_cost_and_latency(
    pytester: pytest.Pytester,
) -> None:
    copy = copy_example(pytester)
    earlier = pytester.runpytest(
        str(copy), "-p", "no:cacheprovider", f"--eval-agent=replay:{copy / 'recorded'}"
    )
    earlier.assert_outcomes(passed=16, skipped=2)
    result = pytester.runpytest(
        str(copy), "-p", "no:cacheprovider", "--eval-plan", "--eval-min-effect", "0.3"
    )
    result.stdout.re_match_lines(
        [
            r"eval plan \(no agent started\): runs per arm to detect a Δ of 0\.30 .*, from the "
            r"session of \d{4}-\d\d-\d\dT.*",
            r"suite: .* to detect 0\.30: .*\(between-case spread τ² \d\.\d{3} \(measured\)\)",
        ],
        consecutive=False,
    )
    assert "assumed per run" not in result.stdout.str()


def test_a_plan_over_a_case_that_does_not_load_still_fails(pytester: pytest.Pytester) -> None:
    copy = copy_example(pytester)
    (copy / "evals" / "broken" / "graders").mkdir(parents=True)
    (copy / "evals" / "broken" / "graders" / "g.md").write_text("---\ntype: regex\n---\n")
    result = pytester.runpytest(str(copy), "-p", "no:cacheprovider", "--eval-plan")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*eval plan (no agent started)*"])


def test_the_plan_refuses_workers_and_a_bad_effect(pytester: pytest.Pytester) -> None:
    copy = copy_example(pytester)
    result = pytester.runpytest(str(copy), "--eval-plan", "--eval-min-effect", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--eval-min-effect must be a number above 0, at most 1 (got '0')"]
    )
    workers = pytester.runpytest(str(copy), "--eval-plan", "-n", "2")
    assert workers.ret == pytest.ExitCode.USAGE_ERROR
    workers.stderr.fnmatch_lines(["*--eval-plan starts no agent and runs in one process*"])


def test_the_plan_says_what_the_design_decides_and_what_it_cannot(
    pytester: pytest.Pytester,
) -> None:
    """The operating characteristics of the session's design beside fixed 10's and auto:20's,
    and, with 3 runs per arm over the example's 8 two-arm cases, that no case can be called
    better alone (3 of 3 against 0 of 3 has p 0.0071 > 0.05 / 8) nor equivalent (35 runs)."""
    copy = copy_example(pytester)
    result = pytester.runpytest(
        str(copy), "-p", "no:cacheprovider", "--eval-plan", "--eval-runs", "3"
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.re_match_lines(
        [
            r"operating characteristics \(pass/fail runs, one case, computed exactly\): .*",
            r"DESIGN\s+TRUE Δ 0\.0\s+TRUE Δ 0\.1\s+TRUE Δ 0\.2\s+TRUE Δ 0\.4$",
            r"fixed:3\s+98\.6% \(3\.0\)\s+1\.4% \(3\.0\)\s+3\.1% \(3\.0\)\s+10\.0% \(3\.0\)$",
            r"fixed:10\s+97\.3% \(10\.0\)\s+.*45\.4% \(10\.0\)$",
            r"auto:20\s+.*",
            r"cannot decide: with 3 run\(s\) per arm and 8 cases \(more than 7\), no case can be "
            r"called better or worse alone: even its clearest result \(p 0\.0071\) is called only "
            r"with at least 2 cases as clear",
            r"cannot decide: no case can be called equivalent within ±0\.1 with fewer than 35 "
            r"runs per arm",
        ]
    )
    auto = pytester.runpytest(
        str(copy), "-p", "no:cacheprovider", "--eval-plan", "--eval-runs", "auto"
    )
    auto.stdout.re_match_lines([r"auto:20\s+97\.5% \(7\.9\)\s+.*59\.2% \(13\.0\)$"])
    assert "no case can be called better or worse alone" not in auto.stdout.str()
