"""``--eval-plan``: print how many runs and cases a decision needs, and start no agent.

Once collection is done, the eval items are deselected (no run is made) and the plan is made
from the selected cases and the newest earlier session under ``<evals folder>/results/``: each
case's run-score variance, cost and latency where that session ran it, stated defaults where
not (:mod:`pytest_plugin_evals.stats.planning`). The summary prints it, and a session that only
planned exits 0.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin_evals.plugin.keys import stamp_key
from pytest_plugin_evals.plugin.session import settle
from pytest_plugin_evals.settings import EvalSettings, common_suite_root, results_dir

if TYPE_CHECKING:
    from pytest_plugin_evals.reporting.result import SessionResult
    from pytest_plugin_evals.stats import CaseHistory


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return (
        f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
    )


def _histories(before: SessionResult) -> dict[tuple[str, str], CaseHistory]:
    from pytest_plugin_evals.stats import CaseHistory

    out = {}
    for case in before.cases:
        graded = [r.result for r in case.runs if r.result.graded]
        out[(case.name, case.dir)] = CaseHistory(
            with_scores=tuple(r.result.score for r in case.with_runs if r.result.graded),
            without_scores=tuple(r.result.score for r in case.without_runs if r.result.graded),
            costs=tuple(r.cost_usd for r in graded if r.cost_known),
            seconds=tuple(r.duration_seconds for r in graded if r.duration_seconds is not None),
        )
    return out


class PlanHooks:
    """Deselects the eval items and says the plan."""

    def __init__(self, config: pytest.Config, settings: EvalSettings) -> None:
        self.config = config
        self.settings = settings
        self.lines: list[str] = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        module = sys.modules.get("pytest_plugin_evals.plugin.items")
        if module is None:
            return
        evals = [i for i in items if isinstance(i, module.EvalItem)]
        if not evals:
            return
        self.lines = self.plan(evals)
        self.config.hook.pytest_deselected(items=evals)
        items[:] = [i for i in items if not isinstance(i, module.EvalItem)]

    def plan(self, evals: list[Any]) -> list[str]:
        from pytest_plugin_evals.reporting.earlier import Wanted, case_key, pick
        from pytest_plugin_evals.reporting.result import relative
        from pytest_plugin_evals.stats import plan_case, plan_suite

        root = common_suite_root(i.case.suite_root for i in evals)
        histories: dict[tuple[str, str], CaseHistory] = {}
        deltas: list[float | None] = []
        source = "no earlier session"
        if root is not None:
            own = results_dir(self.settings, root, self.config.stash[stamp_key])
            wanted = Wanted(
                cases=frozenset(
                    case_key(i.case.name, relative(i.case.dir, i.case.suite_root), i.agent_label)
                    for i in evals
                ),
                replays=True,
            )
            before = pick(root / "results", own, wanted).result
            if before is not None:
                histories = _histories(before)
                source = f"the session of {before.started_at}"
                deltas = [c.aggregates.delta for c in before.cases]
        cases: dict[tuple[str, str, str], tuple[int, bool]] = {}
        for item in evals:
            key = (item.case.name, relative(str(item.case.dir), str(item.case.suite_root)), "")
            runs, two = cases.get(key, (0, False))
            cases[key] = (max(runs, item.run), two or item.two_arm)
        effect = self.settings.min_effect
        plans = [
            plan_case(name, runs, two, histories.get((name, folder)), effect)
            for (name, folder, _), (runs, two) in cases.items()
        ]
        earlier = [d for d in deltas if d is not None]
        suite = plan_suite(plans, earlier, effect)
        return self._lines(plans, suite, source, effect) + self._design_lines(plans)

    def _design_lines(self, plans: list[Any]) -> list[str]:
        """What the session's design can decide at all, and its operating characteristics."""
        from pytest_plugin_evals.stats import decisions, planning

        two_arm = [p for p in plans if p.arms == 2]
        if not two_arm:
            return []
        auto = self.settings.runs_auto
        runs = auto if auto is not None else min(p.runs_now for p in two_arm)
        design = f"{'auto' if auto is not None else 'fixed'}:{runs}"
        lines = [
            "operating characteristics (pass/fail runs, one case, computed exactly): the "
            "chance of the correct verdict and the expected runs per arm"
        ]
        lines += planning.operating_lines(design)
        if design not in planning.OPERATING:
            lines.append(
                f"({design}, the fewest runs of a case, is not in the table: "
                "bench/bench_operating_characteristics.py computes any design)"
            )
        smallest = planning.clearest_p(runs, auto=auto is not None)
        why = planning.cannot_decide(runs, len(two_arm), smallest, decisions.FDR)
        if why is not None:
            lines.append(f"cannot decide: {why}")
        margin = self.settings.margin
        fewest = planning.equivalent_from(margin)
        if fewest is None or runs < fewest:
            lines.append(
                f"cannot decide: no case can be called equivalent within ±{margin:g} with fewer "
                f"than {fewest or decisions.MOST_RUNS} runs per arm"
            )
        return lines

    def _lines(self, plans: list[Any], suite: Any, source: str, effect: float) -> list[str]:
        from pytest_plugin_evals.stats import DEFAULT_COST_USD, DEFAULT_SECONDS, WORST_VARIANCE

        assumed = sum(1 for p in plans if not p.measured)
        lines = [
            f"eval plan (no agent started): runs per arm to detect a Δ of {effect:.2f} at 80% "
            f"power (95%, two-sided), from {source}"
            + (
                f"; {assumed} case(s) assume the worst-case variance {WORST_VARIANCE}"
                if assumed
                else ""
            )
        ]
        width = max(len("CASE"), *(len(p.name) for p in plans))
        lines.append(
            f"{'CASE'.ljust(width)}  VAR WITH  VAR W/OUT  RUNS NOW  RUNS NEEDED  COST      TIME"
        )
        for p in plans:
            lines.append(
                f"{p.name.ljust(width)}  {p.var_with:<8.3f}  {p.var_without:<9.3f}  "
                f"{p.runs_now:<8}  {p.runs_needed:<11}  ${p.cost:<8.2f}  {_duration(p.seconds)}"
            )
        total_cost = sum(p.cost for p in plans)
        total_time = sum(p.seconds for p in plans)
        lines.append(
            f"every case at its runs needed: {sum(p.runs_needed * p.arms for p in plans)} run(s), "
            f"${total_cost:.2f}, {_duration(total_time)} in one process (divide by -n)"
        )
        tau = "between-case spread τ² " + (
            f"{suite.tau2:.3f} (measured)" if suite.tau_measured else "0 (assumed: no earlier Δ)"
        )
        needed = ", ".join(
            f"{'never' if c is None else c} case(s) at {r} runs/arm" for r, c in suite.cases_needed
        )
        lines.append(
            f"suite: {suite.cases} case(s) at {suite.runs_now} run(s)/arm detect a mean Δ of "
            f"{suite.detectable_now:.2f}; to detect {effect:.2f}: {needed} ({tau})"
        )
        if any(not p.measured for p in plans) and source == "no earlier session":
            lines.append(
                f"assumed per run (no earlier session): ${DEFAULT_COST_USD:.2f}, "
                f"{DEFAULT_SECONDS:.0f}s"
            )
        return lines

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """A session that only planned succeeded: exit 0, not pytest's "no tests ran" (5), so a
        CI step that plans passes. Anything else (a load error, a failed test) keeps its status."""
        from pytest_plugin_evals.engine.gates import plan_gate

        settle(session, [plan_gate(bool(self.lines))])

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.lines:
            return
        terminalreporter.section("plugin evals plan")
        for line in self.lines:
            terminalreporter.write_line(line)


def register_plan(config: pytest.Config, settings: EvalSettings) -> None:
    """Register the plan's hooks under ``--eval-plan`` (in one process only)."""
    if not settings.plan:
        return
    workers = getattr(config.option, "numprocesses", None)
    if workers not in (None, 0, "0"):
        raise pytest.UsageError("--eval-plan starts no agent and runs in one process: leave out -n")
    config.pluginmanager.register(PlanHooks(config, settings), "plugin-evals-plan")
