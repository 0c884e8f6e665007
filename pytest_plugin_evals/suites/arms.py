"""Which arms a case runs, and how many runs each: decided from the case, the plugin under test
and the session's ablation settings, before any item is made (``plugin/collect.py`` turns the
plan into items)."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_plugin_evals.model import Arm, Case, LoadError


@dataclass(frozen=True)
class ArmPlan:
    """A case's arms: two (with, and without or a baseline) or one, and its runs per arm."""

    two_arm: bool
    trigger: bool
    runs: int

    def arms(self, *, baseline: bool) -> tuple[Arm, ...]:
        """The arms in the order they run (``baseline``: the second arm loads a baseline)."""
        second: Arm = "baseline" if baseline else "without"
        return ("with", second) if self.two_arm else ("single",)


@dataclass(frozen=True)
class NoArms:
    """A case that cannot run as asked: its load error, said once per ``once`` key (``None``:
    every time)."""

    error: LoadError
    once: str | None = None


def plan_arms(
    case: Case,
    *,
    has_plugin: bool,
    ablation: str,
    aa: bool,
    ab: bool,
    runs: int | None,
    runs_auto: int | None,
) -> ArmPlan | NoArms:
    """The case's arms under ``--eval-ablation`` (``ablation``), ``--eval-aa`` (``aa``),
    ``--eval-baseline-plugin`` (``ab``), ``--eval-runs`` (``runs``) and ``--eval-runs auto``
    (``runs_auto``: the most runs a case gets in rounds)."""
    two_arm = ablation == "with-without" or (
        ablation == "auto" and has_plugin and not case.history_file
    )
    trigger = case.source == "trigger_eval"
    if aa and (trigger or not two_arm or not has_plugin):
        return _not_aa(case, trigger)
    if trigger:  # does the skill fire? asked of the with arm (and of the baseline, in an A/B)
        if not has_plugin:
            why = "a trigger case needs the plugin under test, and none was found"
            return NoArms(LoadError(case.path, why))
        two_arm = ab and ablation != "none"
    if two_arm and not has_plugin:
        why = (
            "--eval-ablation with-without needs a plugin, but no .claude-plugin/plugin.json was "
            "found at or above the evals folder and the case names no plugins:"
        )
        return NoArms(LoadError(case.path, why, case.line))
    count = runs or case.runs
    if two_arm and not trigger and runs_auto is not None:  # rounds until decided
        count = runs_auto
    return ArmPlan(two_arm=two_arm, trigger=trigger, runs=count)


def _not_aa(case: Case, trigger: bool) -> NoArms:
    """Under ``--eval-aa``, a case that cannot run two arms of the plugin under test: one load
    error (once per trigger file, whose queries are asked of one arm)."""
    why = (
        "a trigger query is asked of the with arm only"
        if trigger
        else "it runs one arm (no plugin under test resolves, or its ablation is none)"
    )
    problem = LoadError(case.path, f"--eval-aa needs two arms of the plugin: {why}", case.line)
    return NoArms(problem, once=f"{case.path}" if trigger else f"{case.path}:{case.name}")
