"""``--eval-agent claude`` (the default): the real ``claude -p`` binary, one isolated run each.

The child gets ``-p --output-format stream-json --verbose --max-turns N --permission-mode
dontAsk --setting-sources user``, ``--plugin-dir`` in the with arm only, the tools the case may
use (see :mod:`pytest_plugin_evals.permissions`) and the prompt on stdin. Its stream is the
run's trace. Checks no other tool makes: the plugin (and its skills and commands) must be
loaded in the with arm and absent in the without arm, and a run in which the model never
answered is an error, not a score.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_plugin_evals.agents import mcp
from pytest_plugin_evals.agents.base import AgentError, RunRequest, infra_kind
from pytest_plugin_evals.agents.claude.shell import (
    UNAVAILABLE,
    ShellRefused,
    missing_backend,
    sandbox_settings,
    shell_tools,
)
from pytest_plugin_evals.agents.claude.stream_json import StreamSummary, parse_file, run_error
from pytest_plugin_evals.agents.cli import check_answered, failed_outside
from pytest_plugin_evals.agents.confine import INSIDE_TMPDIR
from pytest_plugin_evals.agents.launch import CliAgent, Launch, ended
from pytest_plugin_evals.agents.permissions import plan_tools
from pytest_plugin_evals.agents.plugins import has_hooks, plugin_contents
from pytest_plugin_evals.agents.spec import declared
from pytest_plugin_evals.agents.workspace import copy_add_dirs, original_add_dirs
from pytest_plugin_evals.model import Transcript
from pytest_plugin_evals.util.claude import ClaudeNotFound, find_claude
from pytest_plugin_evals.util.manifest import is_plugin, skill_root
from pytest_plugin_evals.util.process import ProcessResult

SPEC = declared("claude")

#: The endpoints of the cloud providers Claude Code can use instead (when selected).
BEDROCK_ENDPOINTS: dict[str, str | None] = {"ANTHROPIC_BEDROCK_BASE_URL": None}
VERTEX_ENDPOINTS: dict[str, str | None] = {
    "ANTHROPIC_VERTEX_BASE_URL": None,
    "GOOGLE_OAUTH_URL": "https://oauth2.googleapis.com",
}


def endpoint_variables(env: dict[str, str]) -> dict[str, str | None]:
    """The variables naming the endpoints of Claude Code's provider in ``env``: Anthropic's,
    or Bedrock's (its region's runtime) or Vertex AI's when one is selected."""
    found = dict(SPEC.endpoints)
    if env.get("CLAUDE_CODE_USE_BEDROCK", "") not in ("", "0", "false"):
        region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"
        found.update(BEDROCK_ENDPOINTS)
        found["ANTHROPIC_BEDROCK_BASE_URL"] = f"https://bedrock-runtime.{region}.amazonaws.com"
    if env.get("CLAUDE_CODE_USE_VERTEX", "") not in ("", "0", "false"):
        region = env.get("CLOUD_ML_REGION") or "us-east5"
        found.update(VERTEX_ENDPOINTS)
        found["ANTHROPIC_VERTEX_BASE_URL"] = f"https://{region}-aiplatform.googleapis.com"
    return found


@dataclass(frozen=True)
class ClaudeAgent(CliAgent):
    model: str | None = None
    spec = SPEC

    @classmethod
    def find_binary(cls, configured: str | None) -> str:
        """``--eval-claude-bin``, else ``claude`` on PATH — or one clear line (AgentError)."""
        try:
            return find_claude(configured)
        except ClaudeNotFound as exc:
            raise AgentError(str(exc)) from None

    def argv(
        self,
        request: RunRequest,
        allowed: tuple[str, ...],
        disallowed: tuple[str, ...],
        system_note: str | None,
        history: Path | None,
    ) -> list[str]:
        argv = [
            self.binary,
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--max-turns",
            str(request.max_turns),
            "--permission-mode",
            "dontAsk",
            "--setting-sources",
            "user",
        ]
        if request.plugin_dir is not None:
            argv += ["--plugin-dir", str(request.plugin_dir.resolve())]
        model = self.model or request.model
        if model:
            argv.append(f"--model={model}")
        argv.append("--allowed-tools=" + ",".join(allowed))
        if disallowed:
            argv.append("--disallowed-tools=" + ",".join(disallowed))
        appended = "\n\n".join(p for p in (request.case.append_system_prompt, system_note) if p)
        if appended:
            argv.append(f"--append-system-prompt={appended}")
        if history is not None:
            argv += ["--resume", str(history)]
        return argv

    def launch(self, request: RunRequest) -> Launch | Transcript:
        box, case = request.sandbox, request.case
        env = dict(request.env)
        if request.rate_limit_retries > 0:
            # The session waits out a refused run, together with its other runs: Claude Code
            # ends the run at the first 429 or 529 instead of retrying alone (unless the
            # operator set how often it retries).
            env.setdefault("CLAUDE_CODE_MAX_RETRIES", "0")
        history = None
        if case.history_file:
            source = case.dir / case.history_file
            if not source.is_file():
                return Transcript(
                    error=f"history_file {case.history_file} is not a file in {case.dir}",
                    infra_error="harness",
                    cwd=box.cwd,
                )
            history = box.config / "history.jsonl"
            shutil.copyfile(source, history)
        context = copy_add_dirs(request)
        # Readable where they are too (as in the reference), and nothing else of the case.
        originals = original_add_dirs(request)
        # Inside the run's sandbox its temporary folder is /tmp, TMPDIR a folder in it.
        tmp = box.tmp if request.unconfined else INSIDE_TMPDIR
        read_roots = [box.home, tmp, *context]
        if request.plugin_dir is not None:
            read_roots.append(skill_root(request.plugin_dir.resolve()))
        protected = [case.suite_root.resolve(), case.dir.resolve()]
        # The plugin's tree is protected in both arms: the without arm does not load it, but a
        # granted Write could still reach it.
        plugin_tree = request.plugin_dir or case.suite_root.parent
        if request.plugin_dir or is_plugin(plugin_tree):
            protected.insert(0, plugin_tree.resolve())
        # A folder holding the run's own root would deny every edit of the run: left out.
        root = box.root.resolve()
        protected = [p for p in protected if not root.is_relative_to(p)]
        plan = plan_tools(
            self.access(request),
            read_roots=read_roots,
            write_roots=[box.home, tmp],
            deny_read=[case.suite_root.resolve(), box.config, box.out],
            deny_edit=protected,
            readonly_roots=context,
            read_openings=originals,
        )
        settings: dict[str, Any] = {"permissions": {"deny": list(plan.deny)}}
        shells = shell_tools(plan.allowed)
        if shells and not request.unconfined:
            why = missing_backend(env.get("PATH"))
            if why is not None:
                problem = UNAVAILABLE.format(tools=", ".join(shells), why=why)
                return Transcript(error=problem, infra_error="sandbox", cwd=box.cwd)
            hidden = [Path.home(), Path.cwd(), case.suite_root, case.dir]
            if request.mocks is not None and request.mocks.socket is not None:
                hidden.append(request.mocks.socket.parent)  # the mock host's: runs' sockets
            if request.plugin_dir or is_plugin(plugin_tree):
                hidden.append(plugin_tree)
            skills = [skill_root(request.plugin_dir.resolve())] if request.plugin_dir else []
            try:
                settings["sandbox"] = sandbox_settings(
                    home=box.home,
                    tmp=tmp,
                    config=box.config,
                    out=box.out,
                    cwd=box.cwd,
                    read_also=[*skills, *context, *originals, *request.allow_read],
                    hidden=hidden,
                    env=env,
                    nested=True,
                )
            except ShellRefused as exc:
                problem = UNAVAILABLE.format(tools=", ".join(shells), why=str(exc))
                return Transcript(error=problem, infra_error="sandbox", cwd=box.cwd)
        (box.config / "settings.json").write_text(json.dumps(settings, indent=2), "utf-8")
        note = None
        if context:
            listed = ", ".join(str(p) for p in context)
            note = f"Reference folders you may read (read-only): {listed}"
        allowed = plan.allowed
        if request.mocks is not None:
            allowed = (*allowed, *request.mocks.allowed_tools)
        argv = self.argv(request, allowed, plan.disallowed, note, history)
        also_read: list[Path] = []
        if request.mocks is not None:
            argv += request.mocks.claude_args()
            if request.mocks.mcp_config is not None:
                also_read.append(request.mocks.mcp_config)
        servers = mcp.plan_for(request)
        reads_only = (
            not shells
            and not any(not s.stand_in for s in servers.servers)
            and not (request.plugin_dir is not None and has_hooks(request.plugin_dir))
        )
        missing = [
            f"add_dirs: {rel} is not a folder in the case directory (not given to the agent)"
            for rel in case.add_dirs
            if not (case.dir / rel).is_dir()
        ]

        def classify(transcript: Transcript, summary: StreamSummary, result: ProcessResult) -> None:
            transcript.notes.extend(missing)
            self._classify(request, transcript, summary, result.returncode)

        return Launch(
            argv=argv,
            env=env,
            read=parse_file,
            classify=classify,
            not_granted=plan.not_granted,
            endpoints=endpoint_variables(env),
            mcp=servers,
            nests=bool(shells),
            also_read=also_read,
            reads_only=reads_only,
        )

    def _classify(
        self,
        request: RunRequest,
        transcript: Transcript,
        summary: StreamSummary,
        returncode: int | None,
    ) -> None:
        if summary.api_error_status is not None or (
            summary.result is not None and summary.result.get("terminal_reason") == "api_error"
        ):
            transcript.infra_error = infra_kind(summary.api_error_status, summary.api_error_code)
            transcript.error = f"{ended(returncode)}: {summary.api_error_text or 'API error'}"
            return
        failure = (summary.result or {}).get("startup_failure_reason")
        if failure == "sandbox_required_unavailable":
            errors = (summary.result or {}).get("errors") or ["the sandbox is unavailable"]
            shells = ", ".join(shell_tools(request.allowed_tools)) or "Bash"
            why = re.sub(r"\s*Set sandbox\.failIfUnavailable=false[^.]*\.?", "", str(errors[0]))
            transcript.infra_error = "sandbox"
            transcript.error = UNAVAILABLE.format(tools=shells, why=why.strip())
            return
        if self.unfinished(transcript, returncode, summary.init, summary.result):
            return
        if failed_outside(transcript, "plugin_load", self._trust_problem(request, summary)):
            return
        problem = run_error(summary)
        if problem is not None:
            transcript.error = f"{ended(returncode)}: {problem}"
        if not problem:
            check_answered(transcript)

    def _trust_problem(self, request: RunRequest, summary: StreamSummary) -> str | None:
        """The with arm must load the plugin (skills and commands too); the without arm must not."""
        plugin_dir = request.plugin_dir or (request.case.suite_root.parent)
        name, skills, commands = plugin_contents(plugin_dir)
        loaded = [p for p in summary.plugins if p.get("name") == name]
        if request.plugin_dir is None:
            if request.arm == "without" and loaded:
                return f"plugin {name} was loaded in the without arm"
            return None
        if not loaded:
            return f"plugin {name} was not loaded"
        missing = [f"skill {name}:{s}" for s in skills if f"{name}:{s}" not in summary.skills]
        missing += [
            f"command {name}:{c}" for c in commands if f"{name}:{c}" not in summary.slash_commands
        ]
        if missing:
            return f"plugin {name} was loaded without its " + ", ".join(missing)
        return None


make_agent = ClaudeAgent.make
