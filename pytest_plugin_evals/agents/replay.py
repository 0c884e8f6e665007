"""``--eval-agent "replay:<results folder>"``: regrade recorded runs, start no agent.

Every run's trace, created files and metadata are kept under ``<results>/runs/``; replaying
them grades the same runs with the current graders — the way to iterate on graders for free.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..model import Transcript
from ..recording import META, run_folder, transcript_from_meta
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
            if (labelled / META).exists() or not (source / META).exists():
                source = labelled
        meta_path = source / META
        if not meta_path.exists():
            return Transcript(
                error=f"no recorded run for {request.case.name} [{request.arm}-{request.run}] "
                f"in {self.folder}",
                infra_error="harness",
            )
        try:
            meta: Any = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            meta = f"{type(exc).__name__}: {exc}"
        if not isinstance(meta, dict):
            return Transcript(
                error=f"the recorded run {meta_path} cannot be read: "
                + (meta if isinstance(meta, str) else "not a JSON object"),
                infra_error="harness",
            )
        box = request.sandbox
        files = source / "files"
        if files.is_dir():
            shutil.copytree(files, box.cwd, dirs_exist_ok=True)
        trace = source / "trace.jsonl"
        if trace.exists():
            shutil.copyfile(trace, box.trace_file)
        return transcript_from_meta(meta, box.cwd, box.trace_file if trace.exists() else None)
