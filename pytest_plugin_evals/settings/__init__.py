"""The session's evaluation settings, read from the options declared in :mod:`.options` (the
pytest shell hands over what pytest read); each option's value parsed by :mod:`.parsers`."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.util.ages import DEFAULT_MAX_AGE

if TYPE_CHECKING:
    from pytest_plugin_evals.shards import Shard


@dataclass(frozen=True)
class EvalSettings:
    """What the session's options chose. Each field's default here is its option's default
    (the options are declared in :mod:`.options`, which names the field each fills)."""

    #: Runs per case and arm (None: each case's own); with ``runs_auto``, run in rounds and
    #: stop each case once decided, at most this many runs per arm (None: a fixed number).
    runs: int | None = None
    runs_auto: int | None = None
    ablation: str = "auto"
    threshold: float = 1.0
    threshold_given: bool = False
    #: The least F1 each skill's trigger evals must reach (None: trigger results do not gate).
    trigger_threshold: float | None = None
    output_dir: Path | None = None
    json_path: Path | None = None
    report_path: Path | None = None
    #: Where the Markdown summary goes, whether it is added to ``$GITHUB_STEP_SUMMARY``, and
    #: the address it links the HTML report at (None: a path relative to the Markdown file).
    markdown_path: Path | None = None
    step_summary: bool = False
    report_url: str | None = None
    skill_creator_workspace: Path | None = None
    agent: str = "claude"
    #: Every agent of a session that runs several, ``(label, spec)`` in order (empty: one
    #: agent, ``agent``).
    agents: tuple[tuple[str, str], ...] = ()
    case_glob: str | None = None
    tags: tuple[str, ...] = ()
    eval_paths: tuple[Path, ...] = field(default_factory=tuple)
    keep_temp: bool = False
    env_pass: tuple[str, ...] = ()
    max_cost_usd: float | None = None
    claude_bin: str | None = None
    #: The other agent CLIs' binaries given: ``(agent, path)``.
    agent_bins: tuple[tuple[str, str], ...] = ()
    model: str | None = None
    allow_tools: tuple[str, ...] = ()
    disallow_tools: tuple[str, ...] = ()
    #: Run the agents without their sandbox, on purpose.
    unconfined: bool = False
    #: Endpoints every run may reach besides its agent's own.
    allow_network: tuple[str, ...] = ()
    #: Paths every run may read besides its own, absolute.
    allow_read: tuple[Path, ...] = ()
    #: The confined runs' bounds given: ``(name, value)`` of
    #: :class:`~pytest_plugin_evals.agents.confine.bounds.Bounds`.
    bounds: tuple[tuple[str, int], ...] = ()
    scaffold: bool = False
    judge: str = "claude"
    #: Whether the judge was chosen (a default judge that cannot be built is no judge at all).
    judge_given: bool = False
    judge_model: str | None = None
    #: The second judge, ``[BACKEND:]MODEL`` (``--eval-judge-second``): recorded, never scored.
    judge_second: str | None = None
    #: Files of verdicts people gave (``--eval-labels``): JSON lines, or skill-creator's
    #: ``feedback.json``.
    labels: tuple[Path, ...] = ()
    no_judge: bool = False
    mocks: str = "on"
    allow_real_servers: bool = False
    #: Start the next item's run while this one's goes on (agents that are processes):
    #: ``on`` when the CPUs have been idle lately, ``always``, or ``off``.
    run_ahead: str = "on"
    #: Seconds each grader may spend matching patterns.
    grader_timeout: float = 10.0
    #: Seconds between the plain progress lines printed while runs go on when the output is not
    #: a terminal (a terminal shows a live line instead); None: no progress.
    progress_seconds: float | None = 30.0
    #: How many times a run the provider refused is made again, and the most runs in flight
    #: in the session (None: no cap).
    rate_limit_retries: int = 5
    max_concurrency: int | None = None
    #: The most the session waits out rate limits in all, and the most it lasts (None: no
    #: limit), in seconds.
    max_rate_limit_wait: float = 600.0
    session_timeout: float | None = None
    #: The plugin the second arm loads instead of none: ``git:REF``, or a plugin folder
    #: (absolute).
    baseline_plugin: str | None = None
    #: An A/A session: the second arm loads the plugin under test too (``--eval-aa``).
    aa: bool = False
    #: The earlier session to compare with: ``last``, or the absolute path of a results folder
    #: or of its ``aggregate-result.json``.
    compare: str | None = None
    #: A case that regressed since that session fails the session.
    fail_on_regression: bool = False
    #: How a case's runs become its verdict ...
    reducer: str = "mean"
    #: ... and ``(glob, reducer)`` for the cases that have their own.
    case_reducers: tuple[tuple[str, str], ...] = ()
    #: The part of the selected cases this session runs, if split.
    shard: Shard | None = None
    #: A results folder whose recorded run durations weigh the split.
    shard_durations: Path | None = None
    #: Differences within ±margin are "equivalent" when shown to be.
    margin: float = 0.1
    #: Fail the session on the verdicts: ``not-worse``, ``better`` or None.
    verdict_gate: str | None = None
    #: Fail the session when the suite's cost ratio with/without is above this with evidence.
    cost_regression: float | None = None
    #: Print the plan and start no agent, for a Δ of ``min_effect``.
    plan: bool = False
    min_effect: float = 0.2
    #: Reuse the without arm's and a baseline arm's runs of an earlier session: ``last``, or a
    #: results folder (absolute); None: made anew.
    reuse: str | None = None
    #: How old a run may be to be reused, in seconds.
    reuse_max_age: float = DEFAULT_MAX_AGE

    def reducer_for(self, case_name: str) -> str:
        """The reducer of the case called ``case_name`` (the first matching glob wins)."""
        for pattern, reducer in self.case_reducers:
            if fnmatch.fnmatchcase(case_name, pattern):
                return reducer
        return self.reducer

    def runs_are_measurements(self, case_name: str) -> bool:
        """Whether a case's with-arm runs are measurements (their items pass) and the case is
        decided when its last run reports: under a threshold below 1, and under a reducer for
        which one failed run does not decide the case (``any``, ``at-least:M``)."""
        return self.aa or self.threshold < 1 or self.reducer_for(case_name) not in ("mean", "all")

    def selects(self, case_name: str, tags: tuple[str, ...]) -> bool:
        """The reference's filters: the case glob on the name AND any of the tags."""
        if self.case_glob is not None and not case_glob_regex(self.case_glob).match(case_name):
            return False
        return not self.tags or any(tag in tags for tag in self.tags)


def from_the_start(settings: EvalSettings, dist: str, collectonly: bool) -> bool:
    """Whether a session is an eval session before any item is collected: an eval option was
    given, or pytest-xdist runs the tests in workers (``--dist``, not under ``--collect-only``,
    as its own ``pytest_configure`` decides): its controller collects nothing, and hands its
    workers the shared folder and the budget when it starts them."""
    return settings != EvalSettings() or (dist != "no" and not collectonly)


def case_glob_regex(glob: str) -> re.Pattern[str]:
    """``*`` and ``?`` wildcards, anchored, case-sensitive (as the reference's case filter)."""
    return re.compile(fnmatch.translate(glob).replace("(?s:", "(?:"))


def results_dir(settings: EvalSettings, suite_root: Path, stamp: str) -> Path:
    """Where a session's results go: the output folder given, else ``<evals>/results/<stamp>``."""
    if settings.output_dir is not None:
        return settings.output_dir
    return suite_root / "results" / stamp


def shared_settings(settings: EvalSettings) -> dict[str, Any]:
    """The settings every shard of a suite must run with, for the merge to compare."""
    return {
        "threshold": settings.threshold,
        "ablation": settings.ablation,
        "agent": ", ".join(f"{label}={spec}" for label, spec in settings.agents)
        if settings.agents
        else settings.agent,
        "runs": settings.runs,
        "model": settings.model,
        "judge": None if settings.no_judge else settings.judge,
        "judgeModel": settings.judge_model,
        "noJudge": settings.no_judge,
        "mocks": settings.mocks,
        "caseFilter": settings.case_glob,
        "tagFilters": list(settings.tags),
        "reducer": settings.reducer,
        "caseReducers": [list(pair) for pair in settings.case_reducers],
        "baselinePlugin": settings.baseline_plugin,
    }


def common_suite_root(roots: Iterable[Path | str]) -> Path | None:
    """The one folder a session's suites share (its results go under it): the suite root when
    there is one; a plugin's ``package.json`` suite sits beside its ``evals/`` folder, whose
    results folder they share; else the folders' common parent."""
    found = sorted({str(root) for root in roots} - {""})
    if not found:
        return None
    if len(found) == 1:
        return Path(found[0])
    common = Path(os.path.commonpath(found))
    return common / "evals" if str(common / "evals") in found else common
