"""``--eval-agent "replay:<results folder>"``: regrade recorded runs, start no agent.

Every run's trace, created files and metadata are kept under ``<results>/runs/``; replaying
them grades the same runs with the current graders — the way to iterate on graders for free.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import ToolCall, Transcript
from ..recording import META, run_folder
from .base import AgentError, RunRequest


@dataclass(frozen=True)
class ReplayAgent:
    folder: Path
    name: str = "replay"

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
        source = run_folder(self.folder / "runs", request.case, request.arm, request.run)
        meta_path = source / META
        if not meta_path.exists():
            return Transcript(
                error=f"no recorded run for {request.case.name} [{request.arm}-{request.run}] "
                f"in {self.folder}",
                infra_error="harness",
            )
        meta: dict[str, Any] = json.loads(meta_path.read_text(encoding="utf-8"))
        box = request.sandbox
        files = source / "files"
        if files.is_dir():
            shutil.copytree(files, box.cwd, dirs_exist_ok=True)
        trace = source / "trace.jsonl"
        if trace.exists():
            shutil.copyfile(trace, box.trace_file)
        return transcript_from_meta(meta, box.cwd, box.trace_file if trace.exists() else None)


def transcript_from_meta(meta: dict[str, Any], cwd: Path, trace: Path | None) -> Transcript:
    calls = [
        ToolCall(
            c["name"], c.get("input") or {}, c.get("output"), bool(c.get("isError")), c.get("id")
        )
        for c in meta.get("toolCalls", [])
    ]
    return Transcript(
        final_message=meta.get("finalMessage", ""),
        tool_calls=calls,
        turns=int(meta.get("turns", 0)),
        input_tokens=meta.get("inputTokens"),
        output_tokens=meta.get("outputTokens"),
        cost_usd=float(meta.get("costUsd", 0.0)),
        duration_seconds=float(meta.get("durationSeconds", 0.0)),
        error=meta.get("error"),
        infra_error=meta.get("infraError"),
        trace_path=trace,
        files_created=list(meta.get("filesCreated", [])),
        cwd=cwd,
        delivered=meta.get("delivered"),
        latency_ms=meta.get("latencyMs"),
        notes=list(meta.get("notes", [])),
    )
