"""``--eval-judge claude`` (the default): the ``claude`` CLI as a judge, one isolated call each.

Each call runs ``claude -p`` in a fresh temporary home (HOME, CLAUDE_CONFIG_DIR, TMPDIR and the
XDG folders point there) with the same environment allowlist as the runs, so whoever can run
the agent has a judge. The flags make it a bare model call::

    claude -p --input-format stream-json --output-format stream-json --verbose
           --max-turns 1 --tools "" --system-prompt <judge system prompt>
           --setting-sources "" --strict-mcp-config --disable-slash-commands
           --no-session-persistence --model <model>

``--tools ""`` offers the model no tool at all. The prompt goes on stdin as one stream-json user
message, so images reach the model as image content blocks beside the text. The reply, the
cost (``total_cost_usd``) and the tokens come from the ``result`` event.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..util.claude import ClaudeNotFound, find_claude
from ..util.environment import allowed_environment, isolated_environment, operator_environment
from ..util.process import run_process
from .base import (
    DEFAULT_TIMEOUT,
    SYSTEM_PROMPT,
    JudgeError,
    JudgeImage,
    JudgeReply,
    JudgeSetupError,
    round_cost,
    timeout_message,
)

DEFAULT_MODEL = "haiku"


def user_message(prompt: str, images: Sequence[JudgeImage]) -> str:
    """The stream-json input line: one user message, the prompt text then the images."""
    content: str | list[dict[str, Any]] = prompt
    if images:
        content = [{"type": "text", "text": prompt}, *(i.anthropic_block() for i in images)]
    doc = {"type": "user", "message": {"role": "user", "content": content}}
    return json.dumps(doc, ensure_ascii=False) + "\n"


def parse_result(stdout: str) -> dict[str, Any] | None:
    """The last ``result`` event of a stream-json output, if any."""
    found = None
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("type") == "result":
            found = event
    return found


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class ClaudeJudge:
    """A judge that asks the ``claude`` CLI, one process per call."""

    kind = "claude"

    def __init__(
        self,
        binary: str,
        model: str = DEFAULT_MODEL,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.binary = binary
        self.model = model
        self.timeout = timeout
        self._environ = operator_environment() if environ is None else dict(environ)

    @classmethod
    def from_settings(
        cls,
        model: str | None,
        *,
        binary: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        environ: Mapping[str, str] | None = None,
    ) -> ClaudeJudge:
        try:
            found = find_claude(binary)
        except ClaudeNotFound as exc:
            raise JudgeSetupError(
                f"--eval-judge claude: {exc}, or choose --eval-judge anthropic or openai"
            ) from None
        return cls(found, model or DEFAULT_MODEL, timeout=timeout, environ=environ)

    def argv(self, system: str | None = None) -> list[str]:
        return [
            self.binary,
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--max-turns",
            "1",
            "--tools",
            "",
            "--system-prompt",
            SYSTEM_PROMPT if system is None else system,
            "--setting-sources",
            "",
            "--strict-mcp-config",
            "--disable-slash-commands",
            "--no-session-persistence",
            "--model",
            self.model,
        ]

    def call(
        self, prompt: str, images: Sequence[JudgeImage] = (), *, system: str | None = None
    ) -> JudgeReply:
        with tempfile.TemporaryDirectory(prefix="eval-judge-") as folder:
            root = Path(folder)
            home, tmp, config = root / "home", root / "tmp", root / "config"
            for made in (home, tmp, config):
                made.mkdir()
            env = isolated_environment(
                allowed_environment(self._environ), home=home, tmp=tmp, config=config
            )
            result = run_process(
                self.argv(system),
                stdin_text=user_message(prompt, images),
                cwd=home,
                env=env,
                timeout=self.timeout,
                out_dir=root,
                json_lines=True,
            )
            if result.start_error is not None:
                raise JudgeError(result.start_error)
            if result.timed_out:
                raise JudgeError(timeout_message(self.timeout))
            return self._reply(result.stdout, result.returncode, result.stderr_tail())

    def _reply(self, stdout: str, returncode: int | None, stderr: str) -> JudgeReply:
        event = parse_result(stdout)
        if event is None:
            tail = " ".join(stderr.splitlines()[-3:])
            raise JudgeError(
                f"claude exited {returncode} without a result" + (f": {tail}" if tail else "")
            )
        if event.get("is_error"):
            errors = event.get("errors")
            message = event.get("result") or (errors[0] if isinstance(errors, list) else None)
            raise JudgeError(str(message or f"claude exited {returncode} with an error"))
        found = event.get("usage")
        usage: dict[str, Any] = found if isinstance(found, dict) else {}
        cost = event.get("total_cost_usd")
        return JudgeReply(
            text=str(event.get("result") or ""),
            cost_usd=round_cost(float(cost)) if isinstance(cost, (int, float)) else 0.0,
            input_tokens=_int(usage.get("input_tokens")),
            output_tokens=_int(usage.get("output_tokens")),
        )
