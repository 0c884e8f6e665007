"""The session's evaluation settings, read from options and ini keys (see ``options``)."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

ABLATIONS = ("auto", "none", "with-without")


@dataclass(frozen=True)
class EvalSettings:
    runs: int | None = None
    ablation: str = "auto"
    threshold: float = 1.0
    threshold_given: bool = False
    output_dir: Path | None = None
    json_path: Path | None = None
    report_path: Path | None = None
    agent: str = "claude"
    case_glob: str | None = None
    tags: tuple[str, ...] = ()
    eval_paths: tuple[Path, ...] = field(default_factory=tuple)
    keep_temp: bool = False
    env_pass: tuple[str, ...] = ()
    max_cost_usd: float | None = None
    claude_bin: str | None = None
    model: str | None = None
    allow_tools: tuple[str, ...] = ()
    disallow_tools: tuple[str, ...] = ()
    #: Run a granted shell without Claude Code's sandbox (``--eval-unconfined-shell``).
    unconfined_shell: bool = False
    scaffold: bool = False
    judge: str = "claude"
    #: Whether the judge was chosen (a default judge that cannot be built is no judge at all).
    judge_given: bool = False
    judge_model: str | None = None
    no_judge: bool = False
    mocks: str = "on"
    allow_real_servers: bool = False
    #: Start the next item's run while this one's goes on (agents that are processes):
    #: ``on`` when the CPUs have been idle lately, ``always``, or ``off``.
    run_ahead: str = "on"
    #: Seconds each grader may spend matching patterns (``--eval-grader-timeout``).
    grader_timeout: float = 10.0

    def selects(self, case_name: str, tags: tuple[str, ...]) -> bool:
        """The reference's filters: ``--eval-case`` glob on the name AND any ``--eval-tag``."""
        if self.case_glob is not None and not case_glob_regex(self.case_glob).match(case_name):
            return False
        return not self.tags or any(tag in tags for tag in self.tags)


def case_glob_regex(glob: str) -> re.Pattern[str]:
    """``*`` and ``?`` wildcards, anchored, case-sensitive (as the reference's ``--case``)."""
    return re.compile(fnmatch.translate(glob).replace("(?s:", "(?:"))


def results_dir(settings: EvalSettings, suite_root: Path, stamp: str) -> Path:
    """Where a session's results go: ``--eval-output-dir``, else ``<evals>/results/<stamp>``."""
    if settings.output_dir is not None:
        return settings.output_dir
    return suite_root / "results" / stamp


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
