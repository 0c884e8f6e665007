"""``--eval-agent "replay:<results folder>"``: regrade recorded runs, start no agent.

Every run's trace, created files and metadata are kept under ``<results>/runs/``; replaying
them grades the same runs with the current graders — the way to iterate on graders for free.
A results folder is read only as a session writes it: a recorded run that holds a symbolic
link, a hard-linked file or anything but plain folders and regular files is refused (an
infrastructure error of its run, one line naming it), and nothing is followed through a link.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from ..model import Transcript
from ..recording import (
    META,
    MetaError,
    RecordedRunRefused,
    read_recorded_run,
    restore_recorded_run,
    run_folder,
    transcript_from_meta,
)
from .base import AgentError, Capabilities, RunRequest


@dataclass(frozen=True)
class ReplayAgent:
    folder: Path
    name: str = "replay"
    capabilities: ClassVar[Capabilities] = Capabilities(
        separate_process=False, uses_mocks=False, spends=False, git_workspace=False
    )

    @classmethod
    def parse(cls, value: str) -> ReplayAgent:
        folder = Path(value).expanduser().resolve()
        if not (folder / "runs").is_dir():
            raise AgentError(
                f"--eval-agent replay:{value}: no recorded runs there (expected a results folder "
                "holding runs/)"
            )
        return cls(folder)

    def run(self, request: RunRequest) -> Transcript:
        runs = self.folder / "runs"
        source = run_folder(runs, request.case, request.arm, request.run)
        if request.agent_label is not None:
            # A session of several agents: that agent's recorded run, else one recorded by a
            # session of one agent.
            labelled = run_folder(runs, request.case, request.arm, request.run, request.agent_label)
            if os.path.lexists(labelled / META) or not os.path.lexists(source / META):
                source = labelled
        try:
            recorded = read_recorded_run(self.folder, source)
        except RecordedRunRefused as exc:
            return Transcript(error=str(exc), infra_error="harness")
        if recorded is None:
            return Transcript(
                error=f"no recorded run for {request.case.name} [{request.arm}-{request.run}] "
                f"in {self.folder}",
                infra_error="harness",
            )
        if isinstance(recorded.meta, str):
            return Transcript(
                error=f"the recorded run {source / META} cannot be read: {recorded.meta}",
                infra_error="harness",
            )
        box = request.sandbox
        try:
            traced = restore_recorded_run(recorded, box.cwd, box.trace_file)
        except RecordedRunRefused as exc:
            return Transcript(error=str(exc), infra_error="harness")
        try:
            return transcript_from_meta(recorded.meta, box.cwd, box.trace_file if traced else None)
        except MetaError as exc:
            return Transcript(
                error=f"the recorded run {source / META} cannot be read: {exc}",
                infra_error="harness",
            )
