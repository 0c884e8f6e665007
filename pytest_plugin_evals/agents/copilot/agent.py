"""``--eval-agent copilot``: GitHub Copilot CLI (``copilot``), one isolated run each.

The child gets ``--output-format json --no-auto-update --disable-client-telemetry
--no-custom-instructions --no-ask-user --disable-builtin-mcps``, the tools the case may use
(:mod:`.tools`), ``--plugin-dir`` in the with arm only, the run's MCP servers as
:mod:`pytest_plugin_evals.agents.mcp` decides (``--additional-mcp-config`` with the stand-ins
and the plugin servers it keeps, ``--disable-mcp-server`` for the plugin servers that must not
start), and the prompt on stdin. Its home is the run's own
(``COPILOT_HOME`` in the run's ``config/``); the model endpoint and key are the operator's usual
Copilot variables (``COPILOT_PROVIDER_*``, ``COPILOT_MODEL``, or ``COPILOT_GITHUB_TOKEN``),
passed through the environment allowlist. With a custom provider the run is offline
(``COPILOT_OFFLINE=true``: no GitHub sign-in, telemetry, web tools or update checks).

Trust checks as for Claude Code: the with arm must list every skill of the plugin in its
``session.skills_loaded`` event, the without arm none (Copilot loads no skill when its ``skill``
tool is not offered: a run that disallows ``Skill`` is not checked for them).
"""

from __future__ import annotations

import json
from pathlib import Path

from pytest_plugin_evals.agents import mcp
from pytest_plugin_evals.agents.base import RunRequest, infra_kind
from pytest_plugin_evals.agents.cli import check_answered, failed_outside
from pytest_plugin_evals.agents.copilot.events import CopilotSummary, parse_file
from pytest_plugin_evals.agents.copilot.tools import CopilotMcp, CopilotTools, plan_mcp, plan_tools
from pytest_plugin_evals.agents.credentials import credential_names
from pytest_plugin_evals.agents.launch import CliAgent, Launch, ended
from pytest_plugin_evals.agents.plugins import plugin_contents
from pytest_plugin_evals.agents.spec import declared
from pytest_plugin_evals.agents.workspace import copy_add_dirs
from pytest_plugin_evals.model import InfraKind, Transcript
from pytest_plugin_evals.util.process import ProcessResult

SPEC = declared("copilot")

#: Copilot's ``session.error`` types, as infrastructure error kinds.
ERROR_TYPES: dict[str, InfraKind] = {
    "authentication": "auth",
    "rate_limit": "rate_limit",
}


#: GitHub's endpoints of a run signed in to Copilot (no custom provider).
GITHUB_ENDPOINTS = (
    "https://api.githubcopilot.com",
    "https://api.individual.githubcopilot.com",
    "https://api.business.githubcopilot.com",
    "https://api.enterprise.githubcopilot.com",
    "https://api.github.com",
    "https://github.com",
)


def endpoint_variables(env: dict[str, str]) -> dict[str, str | None]:
    """The endpoints a run may reach: the custom provider's (``COPILOT_PROVIDER_BASE_URL``), or
    GitHub's (``COPILOT_GH_HOST`` for GitHub Enterprise)."""
    if env.get("COPILOT_PROVIDER_BASE_URL", "").strip():
        return {"COPILOT_PROVIDER_BASE_URL": None}
    found: dict[str, str | None] = {f"github-{n}": url for n, url in enumerate(GITHUB_ENDPOINTS)}
    host = env.get("COPILOT_GH_HOST", "").strip()
    if host:
        found["COPILOT_GH_HOST"] = None
        found["copilot-api"] = f"https://copilot-api.{host.removeprefix('https://')}"
    return found


def model_env(env: dict[str, str], home: Path) -> dict[str, str]:
    """The Copilot variables set for every run, on top of the run's environment: its own home
    (``home``), no update, and offline when a custom provider is set."""
    extra = {"COPILOT_AUTO_UPDATE": "false", "COPILOT_HOME": str(home)}
    if env.get("COPILOT_PROVIDER_BASE_URL") and "COPILOT_OFFLINE" not in env:
        extra["COPILOT_OFFLINE"] = "true"
    return extra


class TurnLimit:
    """Stops a run that starts more model turns than ``max_turns`` (Copilot has no limit of its
    own): counts ``assistant.turn_start`` events in the stream as it arrives."""

    NEEDLE = b'"type":"assistant.turn_start"'

    def __init__(self, max_turns: int) -> None:
        self.max_turns = max_turns
        self.turns = 0
        self.reached = False
        self._tail = b""

    def __call__(self, chunk: bytes) -> bool:
        data = self._tail + chunk
        self.turns += data.count(self.NEEDLE)
        self._tail = data[-(len(self.NEEDLE) - 1) :]
        self.reached = self.turns > self.max_turns
        return self.reached


class CopilotAgent(CliAgent):
    spec = SPEC

    def argv(
        self,
        request: RunRequest,
        tools: CopilotTools,
        add_dirs: list[Path],
        secrets: list[str],
        servers: CopilotMcp | None = None,
        mcp_config: Path | None = None,
    ) -> list[str]:
        """The command line; ``mcp_config``: the file holding ``servers.config``."""
        servers = servers or CopilotMcp(config={})
        argv = [
            self.binary,
            "--output-format",
            "json",
            "--no-auto-update",
            "--disable-client-telemetry",
            "--no-custom-instructions",
            "--no-ask-user",
            "--no-remote",
            "--disable-builtin-mcps",
            "--available-tools=" + ",".join((*tools.available, *servers.available)),
        ]
        argv += [f"--allow-tool={rule}" for rule in (*tools.allow, *servers.allow)]
        argv += [f"--deny-tool={rule}" for rule in (*tools.deny, *servers.deny)]
        if mcp_config is not None:
            argv += ["--additional-mcp-config", f"@{mcp_config}"]
        for name in servers.disable:
            argv += ["--disable-mcp-server", name]
        if secrets:
            argv.append("--secret-env-vars=" + ",".join(secrets))
        for folder in add_dirs:
            argv += ["--add-dir", str(folder)]
        if request.plugin_dir is not None:
            argv += ["--plugin-dir", str(request.plugin_dir.resolve())]
        if request.model:
            argv.append(f"--model={request.model}")
        return argv

    def tools(self, request: RunRequest) -> CopilotTools:
        return plan_tools(self.access(request))

    def launch(self, request: RunRequest) -> Launch | Transcript:
        box, case = request.sandbox, request.case
        refused = self._refusal(request)
        if refused is not None:
            return Transcript(error=refused[1], infra_error=refused[0], cwd=box.cwd)
        tools = self.tools(request)
        plan = mcp.plan_for(request)
        servers = plan_mcp(plan, self.access(request))
        # Copilot's own command sandbox is off by default (and needs more than bubblewrap):
        # the whole CLI runs inside the run's sandbox, which hides the operator's files.
        env = dict(request.env)
        home = box.config / "copilot"
        home.mkdir(parents=True, exist_ok=True)
        env.update(model_env(env, home))
        context = copy_add_dirs(request)
        prompt = request.prompt
        if context:
            listed = ", ".join(str(p) for p in context)
            prompt += f"\n\nReference folders you may read (read-only): {listed}"
        mcp_config: Path | None = None
        if servers.config.get("mcpServers"):
            mcp_config = box.config / "copilot-mcp.json"
            mcp_config.write_text(json.dumps(servers.config, indent=2), encoding="utf-8")
        argv = self.argv(request, tools, context, credential_names(env), servers, mcp_config)
        limit = TurnLimit(request.max_turns)
        notes = [*plan.notes]
        notes.extend(f"not supported by copilot: {t}" for t in tools.unsupported)
        if case.append_system_prompt:
            notes.append("append_system_prompt: not supported by copilot (ignored)")

        def read(trace: Path) -> tuple[Transcript, CopilotSummary]:
            return parse_file(trace, plan)

        def classify(
            transcript: Transcript, summary: CopilotSummary, result: ProcessResult
        ) -> None:
            if limit.reached:
                transcript.turns = min(transcript.turns, request.max_turns)
                transcript.error = f"reached max_turns ({request.max_turns}): the run was stopped"
                return
            self._classify(
                request, transcript, summary, result.returncode, "skill" in tools.available
            )

        return Launch(
            argv=argv,
            env=env,
            read=read,
            classify=classify,
            stdin=prompt,
            stop_on=limit,
            notes=notes,
            not_granted=(*tools.not_granted, *servers.not_granted),
            endpoints=endpoint_variables(env),
            mcp=plan,
        )

    def _refusal(self, request: RunRequest) -> tuple[InfraKind, str] | None:
        """What this adapter cannot do for the case, as a run error (kind, one line)."""
        if request.case.history_file:
            return (
                "harness",
                "history_file: the copilot agent cannot continue a Claude Code history",
            )
        return None

    def _classify(
        self,
        request: RunRequest,
        transcript: Transcript,
        summary: CopilotSummary,
        returncode: int | None,
        skills_offered: bool = True,
    ) -> None:
        if summary.error is not None:
            kind = ERROR_TYPES.get(summary.error_type or "")
            transcript.infra_error = kind or infra_kind(summary.error_status)
            transcript.error = f"{ended(returncode)}: {summary.error_text}"
            return
        if self.unfinished(transcript, returncode, summary.skills, summary.result):
            return
        if failed_outside(
            transcript, "plugin_load", self._trust_problem(request, summary, skills_offered)
        ):
            return
        if returncode not in (0, None):
            transcript.error = ended(returncode)
        check_answered(transcript)

    def _trust_problem(
        self, request: RunRequest, summary: CopilotSummary, skills_offered: bool = True
    ) -> str | None:
        """The with arm must load every skill of the plugin (when its ``skill`` tool is offered:
        Copilot loads none without it); the without arm none."""
        plugin_dir = request.plugin_dir or request.case.suite_root.parent
        name, skills, _commands = plugin_contents(plugin_dir)
        loaded = summary.plugin_skills(name)
        if request.plugin_dir is None:
            if request.arm == "without" and loaded:
                return f"plugin {name} was loaded in the without arm ({', '.join(loaded)})"
            return None
        if not skills_offered:
            return None
        missing = [f"skill {name}:{s}" for s in skills if f"{name}:{s}" not in loaded]
        if missing:
            return f"plugin {name} was loaded without its " + ", ".join(missing)
        return None


make_agent = CopilotAgent.make
