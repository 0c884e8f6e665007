"""``--eval-agent gemini``: Gemini CLI (``gemini -p``), one isolated run each.

The child gets ``--prompt=<prompt> -o stream-json -m <model> --skip-trust --approval-mode
yolo``, and ``-e <extension>`` in the with arm (the plugin translated into a Gemini CLI
extension, linked into the run's home with ``gemini extensions link <dir> --consent``) or
``-e none`` in the without arm. Its home (``HOME``, ``GEMINI_CLI_HOME``) is the run's own; its
``settings.json`` pins API-key auth, turns usage statistics, telemetry and auto-update off,
offers only the tools the run may use (``tools.core``, see :mod:`.tools`), gives the run's MCP
servers (``mcpServers``: its stand-ins and, in the with arm, the plugin's own, as
:mod:`pytest_plugin_evals.agents.mcp` decides) and stops at the case's ``max_turns``
(``model.maxSessionTurns``). The model endpoint and key come from the operator's
``GOOGLE_GEMINI_BASE_URL`` and ``GEMINI_API_KEY`` (or ``GOOGLE_API_KEY``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_plugin_evals.agents import mcp
from pytest_plugin_evals.agents.base import RunRequest
from pytest_plugin_evals.agents.cli import run_step
from pytest_plugin_evals.agents.gemini.extension import Extension, translate
from pytest_plugin_evals.agents.gemini.stream_json import StreamSummary, parse_file
from pytest_plugin_evals.agents.gemini.tools import GeminiTools, plan_tools
from pytest_plugin_evals.agents.launch import CliAgent, Launch
from pytest_plugin_evals.agents.mcp_settings import mcp_servers, settings_form
from pytest_plugin_evals.agents.spec import declared
from pytest_plugin_evals.agents.workspace import copy_add_dirs
from pytest_plugin_evals.model import Transcript
from pytest_plugin_evals.util.process import ProcessResult

SPEC = declared("gemini")

#: The model when neither the case, ``--eval-model`` nor ``$GEMINI_MODEL`` names a Gemini one.
DEFAULT_MODEL = "gemini-2.5-flash"

#: Exit code of a run stopped at ``model.maxSessionTurns``.
TURN_LIMIT_EXIT = 53


def pick_model(requested: str | None, env: Mapping[str, str]) -> tuple[str, str | None]:
    """The model to pin, and a note when the requested one is not a Gemini model."""
    fallback = env.get("GEMINI_MODEL") or DEFAULT_MODEL
    if not requested:
        return fallback, None
    if requested.startswith(("gemini", "gemma", "models/")) or "/" in requested:
        return requested, None
    return fallback, f"model {requested} is not a Gemini model: {fallback} is used"


def settings_for(
    tools: GeminiTools,
    *,
    max_turns: int,
    max_attempts: int | None,
    mcp_servers: Mapping[str, Any] | None,
    extension_servers: Iterable[str] = (),
) -> dict[str, Any]:
    """The run's ``~/.gemini/settings.json``. ``tools.core`` denies every tool it does not
    name, MCP ones too: each MCP server's tools (``mcp_<server>_*``; its ``includeTools``
    says which) are added, those of ``mcp_servers`` and of the extension's ``extension_servers``.
    """
    core = [*tools.core, *(f"mcp_{name}_*" for name in (*(mcp_servers or {}), *extension_servers))]
    general: dict[str, Any] = {"enableAutoUpdateNotification": False}
    if max_attempts is not None:
        general["maxAttempts"] = max_attempts
    settings = settings_form(
        "gemini-api-key", core, exclude=tools.exclude, servers=mcp_servers, general=general
    )
    settings["model"] = {"maxSessionTurns": max_turns}
    return settings


class GeminiAgent(CliAgent):
    spec = SPEC

    def environment(self, request: RunRequest) -> dict[str, str]:
        env = dict(request.env)
        box = request.sandbox
        env.update(
            {
                "GEMINI_CLI_HOME": str(box.home),
                "GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(box.config / "gemini-system.json"),
                "GEMINI_CLI_SYSTEM_DEFAULTS_PATH": str(box.config / "gemini-defaults.json"),
                "GEMINI_TELEMETRY_ENABLED": "false",
                "NO_BROWSER": "1",
                # One process per run: Gemini CLI otherwise starts a second Node process of
                # itself only to give it a larger heap.
                "GEMINI_CLI_NO_RELAUNCH": "true",
            }
        )
        return env

    def argv(self, request: RunRequest, model: str, extension: str | None) -> list[str]:
        argv = [
            self.binary,
            f"--prompt={request.prompt}",
            "--output-format",
            "stream-json",
            "--model",
            model,
            "--skip-trust",
            "--approval-mode",
            "yolo",
            "--extensions",
            extension or "none",
        ]
        for folder in copy_add_dirs(request):
            argv += ["--include-directories", str(folder)]
        return argv

    def _link(self, request: RunRequest, env: dict[str, str], extension: Extension) -> str | None:
        """Link the extension into the run's home; the problem in one line, or None."""
        out = request.sandbox.out / "gemini-link"
        out.mkdir(exist_ok=True)
        result = run_step(
            request,
            [self.binary, "extensions", "link", str(extension.folder), "--consent"],
            env=env,
            out_dir=out,
            timeout=min(120.0, request.timeout_seconds),
        )
        if result.start_error is not None:
            return result.start_error
        said = result.stdout + result.stderr_tail()
        if result.returncode != 0 or "linked successfully" not in said:
            tail = " ".join(result.stderr_tail().splitlines()[-3:]).strip()
            return f"gemini extensions link exited {result.returncode}" + (
                f": {tail}" if tail else ""
            )
        drop_stale_lock(request.sandbox.home / ".gemini")
        return None

    def launch(self, request: RunRequest) -> Launch | Transcript:
        box = request.sandbox
        env = self.environment(request)
        access = self.access(request)
        tools = plan_tools(access)
        # Gemini's own sandbox needs a container runtime: the whole CLI runs inside the run's
        # sandbox instead, which hides the operator's files from its tools.
        model, model_note = pick_model(request.model, env)
        plan = mcp.plan_for(request)
        servers, server_notes = mcp_servers(plan, access)
        extension: Extension | None = None
        notes: list[str] = [*plan.notes, *server_notes]
        if request.plugin_dir is not None:
            strict = request.mocks is not None and request.mocks.strict
            try:
                extension = translate(
                    request.plugin_dir,
                    box.config / "gemini-extension",
                    own_mcp=not strict,
                    drop_mcp={*(s.name for s in plan.servers), *plan.suppressed},
                )
            except (OSError, ValueError) as exc:
                return Transcript(
                    error=f"the plugin could not be made a Gemini extension: {exc}",
                    infra_error="plugin_load",
                    cwd=box.cwd,
                )
            notes.extend(extension.notes)
        gemini_dir = box.home / ".gemini"
        gemini_dir.mkdir(exist_ok=True)
        settings = settings_for(
            tools,
            max_turns=request.max_turns,
            max_attempts=1 if request.rate_limit_retries > 0 else None,
            mcp_servers=servers,
            extension_servers=extension.mcp_servers if extension else (),
        )
        (gemini_dir / "settings.json").write_text(json.dumps(settings, indent=2), "utf-8")
        if extension is not None:
            problem = self._link(request, env, extension)
            if problem is not None:
                return Transcript(
                    error=f"extension {extension.name} was not loaded: {problem}",
                    infra_error="plugin_load",
                    cwd=box.cwd,
                )
        argv = self.argv(request, model, extension.name if extension else None)
        notes.extend(tools.notes)
        if model_note:
            notes.append(model_note)

        def read(trace: Path) -> tuple[Transcript, StreamSummary]:
            transcript, summary = parse_file(
                trace, plan, extension.mcp_servers if extension else ()
            )
            if extension is not None:
                # Claude Code's form, ``{"skill": "<plugin>:<skill>"}``, so one suite's
                # ``input_match`` means the same for every agent.
                for call in transcript.tool_calls:
                    skill = call.input.get("name")
                    if call.name == "Skill" and skill in extension.skills:
                        call.input.setdefault("skill", f"{extension.name}:{skill}")
            return transcript, summary

        return Launch(
            argv=argv,
            env=env,
            read=read,
            stdin="",
            notes=notes,
            not_granted=tools.not_granted,
            endpoints=SPEC.endpoints,
            mcp=plan,
        )

    def classify(
        self,
        request: RunRequest,
        transcript: Transcript,
        summary: StreamSummary,
        result: ProcessResult,
    ) -> None:
        """A run stopped at ``model.maxSessionTurns``, else as every init/result stream
        (:meth:`CliAgent.classify`)."""
        if result.returncode == TURN_LIMIT_EXIT or summary.error_type == "FatalTurnLimitedError":
            transcript.error = f"max turns ({request.max_turns}) reached"
            return
        super().classify(request, transcript, summary, result)


def drop_stale_lock(gemini_dir: Path) -> None:
    """Remove the project registry's lock that ``gemini extensions link`` can leave behind.

    The link command exits while its own registration of the project (``projects.json``) may
    still hold the lock (a folder); the run's CLI would then wait for it to go stale (10 s)
    before it starts. The home is the run's own and the link process has ended, so nothing
    else holds it."""
    lock = gemini_dir / "projects.json.lock"
    if gemini_dir.is_symlink() or lock.is_symlink():
        return  # not the folders Gemini CLI makes: left as they are
    if lock.is_dir():
        with contextlib.suppress(OSError):
            lock.rmdir()


make_agent = GeminiAgent.make
