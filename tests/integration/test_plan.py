"""``--eval-plan`` on the project's example plugin: it starts no agent, and says the runs per
arm and the cases a decision needs, from the worst case, then from an earlier session. (The
plan's lines from plain data, the design's limits among them: tests/unit/test_plan_lines.py.)"""

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
        str(copy), "-p", "no:cacheprovider", "--eval-plan", "--eval-min-effect", "0.3",
        "--eval-runs", "auto",
    )  # fmt: skip
    result.stdout.re_match_lines(
        [
            r"eval plan \(no agent started\): runs per arm to detect a Δ of 0\.30 .*, from the "
            r"session of \d{4}-\d\d-\d\dT.*",
            r"suite: .* to detect 0\.30: .*\(between-case spread τ² \d\.\d{3} \(measured\)\)",
            r"auto:20\s+97\.5% \(7\.9\)\s+.*59\.2% \(13\.0\)$",  # the session's design
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


def test_the_plan_refuses_workers(pytester: pytest.Pytester) -> None:
    """(A bad --eval-min-effect's line: tests/unit/test_options_rules.py.)"""
    copy = copy_example(pytester)
    workers = pytester.runpytest(str(copy), "--eval-plan", "-n", "2")
    assert workers.ret == pytest.ExitCode.USAGE_ERROR
    workers.stderr.fnmatch_lines(["*--eval-plan starts no agent and runs in one process*"])
