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

from ..model import MockCall, ToolCall, Transcript
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


def _number(value: Any, default: float = 0.0) -> float:
    return float(value) if isinstance(value, (int, float)) else default


def transcript_from_meta(meta: dict[str, Any], cwd: Path, trace: Path | None) -> Transcript:
    """The transcript a recorded ``meta.json`` describes."""
    calls = [
        ToolCall(
            c["name"], c.get("input") or {}, c.get("output"), bool(c.get("isError")), c.get("id")
        )
        for c in meta.get("toolCalls") or []
    ]
    mocks = meta.get("mockCalls")
    return Transcript(
        final_message=meta.get("finalMessage") or "",
        tool_calls=calls,
        turns=int(_number(meta.get("turns"))),
        input_tokens=meta.get("inputTokens"),
        output_tokens=meta.get("outputTokens"),
        cost_usd=_number(meta.get("costUsd")),
        duration_seconds=_number(meta.get("durationSeconds")),
        error=meta.get("error"),
        infra_error=meta.get("infraError"),
        trace_path=trace,
        files_created=list(meta.get("filesCreated") or []),
        cwd=cwd,
        mock_calls=None
        if mocks is None
        else [
            MockCall(m["server"], m["tool"], m.get("input") or {}, m.get("output") or "",
                     bool(m.get("isError")))
            for m in mocks
        ],
        delivered=meta.get("delivered"),
        latency_ms=meta.get("latencyMs"),
        skip_grading=bool(meta.get("skipGrading")),
        notes=list(meta.get("notes") or []),
        aborted=meta.get("aborted") if isinstance(meta.get("aborted"), dict) else None,
    )  # fmt: skip
