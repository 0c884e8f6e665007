"""The kinds of wire record (:mod:`pytest_plugin_evals.records`) as the model's objects."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_plugin_evals.model import Arm, Case, GraderSpec, LoadError, PluginInfo, RunResult


class RecordError(ValueError):
    """A record that cannot be read: another schema version, or not a record at all."""


@dataclass(frozen=True)
class CaseInfo:
    """What the controller knows of a case: enough to report it, nothing to run it."""

    name: str
    source: str
    path: str
    dir: str
    suite_root: str
    prompt: str
    runs_per_case: int
    max_turns: int
    timeout_seconds: float
    graders: tuple[GraderSpec, ...] = ()
    description: str | None = None
    tags: tuple[str, ...] = ()
    model: str | None = None
    expected_output: str | None = None

    @classmethod
    def of(cls, case: Case, runs_per_case: int | None = None) -> CaseInfo:
        return cls(
            name=case.name,
            source=case.source,
            path=str(case.path),
            dir=str(case.dir),
            suite_root=str(case.suite_root),
            prompt=case.prompt,
            runs_per_case=runs_per_case or case.runs,
            max_turns=case.max_turns,
            timeout_seconds=case.timeout_seconds,
            graders=case.graders,
            description=case.description,
            tags=case.tags,
            model=case.model,
            expected_output=case.expected_output,
        )


@dataclass(frozen=True)
class RunRecord:
    """A run that was made: its case, its plugin, and the graded result."""

    nodeid: str
    case: CaseInfo
    plugin: PluginInfo | None
    two_arm: bool
    result: RunResult
    #: The agent's label in a session of several agents (``--eval-agents``), else None.
    agent: str | None = None

    @property
    def arm(self) -> Arm:
        return self.result.arm

    @property
    def run(self) -> int:
        return self.result.run


@dataclass(frozen=True)
class SkippedRun:
    """A run that was never started, and why (``cost_ceiling``, ``missing_secret`` …)."""

    nodeid: str
    case: CaseInfo
    plugin: PluginInfo | None
    two_arm: bool
    arm: Arm
    run: int
    reason: str
    #: The agent's label in a session of several agents (``--eval-agents``), else None.
    agent: str | None = None


@dataclass(frozen=True)
class LoadErrorRecord:
    """A case file that could not be loaded."""

    nodeid: str
    path: str
    line: int | None
    message: str
    suite_root: str

    @classmethod
    def of(cls, nodeid: str, error: LoadError, suite_root: object) -> LoadErrorRecord:
        """The record of the item ``nodeid`` showing ``error`` (a suite under ``suite_root``)."""
        return cls(nodeid, str(error.path), error.line, error.message, str(suite_root))


Record = RunRecord | SkippedRun | LoadErrorRecord
