"""``--eval-agent opencode``: the real ``opencode run --format json``, one isolated run each.

The child gets ``run --format json --title <case>`` (naming the session itself, opencode makes
no title-generation request to the model), the prompt on stdin, and an environment in the
run's sandbox: HOME and the XDG folders there, ``OPENCODE_DISABLE_AUTOUPDATE``,
``…_MODELS_FETCH``, ``…_DEFAULT_PLUGINS``, ``…_LSP_DOWNLOAD``, ``…_CLAUDE_CODE`` (and its
``_SKILLS``, ``_PROMPT``), ``…_EXTERNAL_SKILLS`` and ``…_PROJECT_CONFIG`` on,
and its whole configuration in ``OPENCODE_CONFIG_CONTENT`` (:mod:`.config`), the run's MCP
servers included (stand-ins and, in the with arm, the plugin's own, as
:mod:`pytest_plugin_evals.agents.mcp` decides). The with arm loads the plugin from
``OPENCODE_CONFIG_DIR``, a folder in the run's sandbox holding copies of the plugin's
``skills/`` and ``commands/`` and its agents translated (:mod:`.plugin`); the without arm has
no such folder. Before the run, ``opencode debug skill`` (the same environment, without the
MCP servers) lists the skills opencode sees: the with arm must see every skill of the plugin,
the without arm none of them (listed once per process for the same translated skills).

opencode has no command sandbox: the whole CLI runs inside bubblewrap
(:mod:`pytest_plugin_evals.agents.confine`), unless ``--eval-unconfined-shell``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable
from pathlib import Path

from pytest_plugin_evals.agents import mcp
from pytest_plugin_evals.agents.base import RunRequest, infra_kind
from pytest_plugin_evals.agents.cli import (
    check_answered,
    did_not_start,
    run_step,
    with_stderr,
)
from pytest_plugin_evals.agents.launch import CliAgent, Launch, ended, exited
from pytest_plugin_evals.agents.opencode.config import (
    mcp_block,
    mcp_tool_name,
    model_id,
    permission_rules,
    run_config,
)
from pytest_plugin_evals.agents.opencode.events import StreamSummary, parse_file
from pytest_plugin_evals.agents.opencode.plugin import PluginFolder, plugin_config_dir
from pytest_plugin_evals.agents.permissions import ToolAccess, plan_confined_tools
from pytest_plugin_evals.agents.plugins import plugin_contents
from pytest_plugin_evals.agents.spec import declared
from pytest_plugin_evals.agents.workspace import copy_add_dirs
from pytest_plugin_evals.model import STOPPED, Transcript
from pytest_plugin_evals.util.environment import Passed
from pytest_plugin_evals.util.process import ProcessResult

SPEC = declared("opencode")

#: Each provider's variables (of those its declaration lists: its key, its endpoint) by their
#: prefix: a run sees and reaches only those of the provider its model names.
PROVIDER_PREFIXES = {
    "anthropic": "ANTHROPIC_",
    "openai": "OPENAI_",
    "google": "GOOGLE_GENERATIVE_AI_",
    "openrouter": "OPENROUTER_",
}

#: What the run's environment sets, whatever the operator's says.
FIXED_ENV = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE_SKILLS": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE_PROMPT": "1",
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
    "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
    "OPENCODE_DISABLE_SHARE": "1",
}

#: The tools a run may always use (Claude Code's names; where it can, opencode reads only in
#: the run's folder and the ones ``external_directory`` opens).
READERS = ("Read", "Glob", "Grep", "LS")

#: Seconds ``opencode debug skill`` may take.
SKILL_LIST_TIMEOUT = 60.0

#: What ``opencode debug skill`` listed, by :func:`listing_key`: every run of an arm gets the
#: same translated skills, so the listing (about a second of CPU) is made once per process and arm.
_LISTED: dict[str, list[str]] = {}
#: A run made ahead of its item waits for the listing the current run is making.
_LISTING = threading.Lock()


def listing_key(binary: str, config_dir: Path | None) -> str:
    """What decides the skills opencode lists: its binary, and the ``SKILL.md`` files of the
    run's configuration folder (none in the without arm)."""
    digest = hashlib.sha256(binary.encode())
    if config_dir is not None:
        for path in sorted(config_dir.glob("skills/**/SKILL.md")):
            digest.update(str(path.relative_to(config_dir)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def provider_of(model: str | None) -> str:
    """The provider of a run's model (``anthropic`` for ``anthropic/claude-…``)."""
    return model_id(model).partition("/")[0]


def _own(names: Iterable[str], model: str | None) -> list[str]:
    """Those of the variables ``names`` that are the provider's the model names."""
    prefix = PROVIDER_PREFIXES.get(provider_of(model))
    return [n for n in names if prefix is not None and n.startswith(prefix)]


def endpoint_variables(model: str, env: dict[str, str]) -> dict[str, str | None]:
    """The endpoints of the run's provider (the one its model names)."""
    return {name: SPEC.endpoints[name] for name in _own(SPEC.endpoints, model)}


class OpencodeAgent(CliAgent):
    spec = SPEC

    def passed_for(self, model: str | None) -> Passed:
        """The variables of the one provider the run's model names (its key, its endpoint)."""
        return Passed(names=frozenset(_own(SPEC.passed.names, model)))

    def launch(self, request: RunRequest) -> Launch | Transcript:
        box, case = request.sandbox, request.case
        context = copy_add_dirs(request)
        plan = plan_confined_tools(
            request, grants=self.grants, disallow=self.disallow, write_root=None, skill=True
        )
        allowed = tuple(dict.fromkeys(plan.allowed))
        # opencode has no command sandbox: the whole CLI runs inside the run's sandbox, which
        # hides the operator's files from its tools.
        env = dict(request.env)
        env.update(FIXED_ENV)
        env.pop("OPENCODE_CONFIG", None)
        env.pop("OPENCODE_CONFIG_DIR", None)
        servers = mcp.plan_for(request)
        disallowed = (*case.disallowed_tools, *self.disallow)
        block, mcp_rules, notes = mcp_block(servers, ToolAccess(allowed, self.grants, disallowed))
        notes[:0] = servers.notes
        external = list(context)
        qualify: dict[str, str] = {}
        folder: PluginFolder | None = None
        if request.plugin_dir is not None:
            external.append(box.config / "opencode-plugin" / "skills")
            plugin, skills, _ = plugin_contents(request.plugin_dir)
            qualify = {s: f"{plugin}:{s}" for s in skills}
        # MCP entries are the mcp block's; one of a server the run has not is no tool.
        known = tuple(servers.prefixes.values())
        own = [a for a in allowed if not a.startswith(known)]
        # Reads are always allowed (scoped by external_directory), as for Claude Code.
        readers = [t for t in READERS if t not in plan.disallowed]
        permission, unmapped = permission_rules([*readers, *own], external_allowed=external)
        permission.update(mcp_rules)
        if request.plugin_dir is not None:
            folder = plugin_config_dir(
                request.plugin_dir.resolve(),
                box.config / "opencode-plugin",
                run_permission=permission,
                run_model=model_id(request.model),
                plan=servers,
            )
            env["OPENCODE_CONFIG_DIR"] = str(folder.folder)
            notes.extend(folder.notes)
        config = run_config(
            model=request.model,
            permission=permission,
            env=env,
            max_turns=request.max_turns,
            mcp=block,
        )
        env["OPENCODE_CONFIG_CONTENT"] = json.dumps(config)
        # The skill listing starts no MCP server (nor should it ever).
        listing_env = dict(env)
        listing_env["OPENCODE_CONFIG_CONTENT"] = json.dumps(
            {k: v for k, v in config.items() if k != "mcp"}
        )
        trust = self._trust_problem(request, listing_env, folder.folder if folder else None)
        if trust is not None:
            return trust
        argv = [self.binary, "run", "--format", "json", "--title", f"eval {case.name}"]
        stand_ins = tuple(s.prefix for s in servers.servers if s.stand_in)
        notes.extend(f"opencode has no such tool: {t}" for t in unmapped)
        notes.extend(
            f"{key} is not supported by opencode (ignored)"
            for key, value in (
                ("append_system_prompt", case.append_system_prompt),
                ("history_file", case.history_file),
            )
            if value
        )

        def read(trace: Path) -> tuple[Transcript, StreamSummary]:
            return parse_file(
                trace, qualify_skill=qualify, mcp_name=lambda name: mcp_tool_name(servers, name)
            )

        def classify(transcript: Transcript, summary: StreamSummary, result: ProcessResult) -> None:
            if summary.priced_tokens and summary.cost == 0:
                transcript.cost_known = False
                transcript.notes.append(
                    f"cost unknown: opencode has no price for {config['model']}"
                )
            self._classify(transcript, summary, result.returncode)

        return Launch(
            argv=argv,
            env=env,
            read=read,
            classify=classify,
            notes=notes,
            not_granted=[t for t in plan.not_granted if not t.startswith(stand_ins)],
            endpoints=endpoint_variables(config["model"], env),
            mcp=servers,
        )

    def _classify(
        self,
        transcript: Transcript,
        summary: StreamSummary,
        returncode: int | None,
    ) -> None:
        if summary.error_name is not None:
            message = summary.error_message or summary.error_name
            if summary.error_status is not None or summary.error_name == "APIError":
                transcript.infra_error = infra_kind(summary.error_status)
                transcript.retry_after = summary.retry_after
            elif summary.error_name == "ProviderAuthError":
                transcript.infra_error = "auth"
            transcript.error = f"{ended(returncode)}: {message}"
            return
        if summary.events == 0:
            ended_early = exited("opencode", returncode)
            did_not_start(transcript, f"{ended_early} without starting the session")
            return
        if returncode not in (0, None):
            transcript.error = with_stderr(ended(returncode), transcript)
        if not transcript.error:
            check_answered(transcript)

    def _trust_problem(
        self, request: RunRequest, env: dict[str, str], config_dir: Path | None
    ) -> Transcript | None:
        """The with arm must see every skill of the plugin, the without arm none of them (what
        ``opencode debug skill`` lists in the run's own environment, once per process for the
        same translated skills: :func:`listing_key`)."""
        plugin_dir = request.plugin_dir or request.case.suite_root.parent
        name, skills, _ = plugin_contents(plugin_dir)
        if not skills or (request.plugin_dir is None and request.arm != "without"):
            return None
        key = listing_key(self.binary, config_dir)
        with _LISTING:
            return self._check_listing(request, env, key, name, skills)

    def _check_listing(
        self, request: RunRequest, env: dict[str, str], key: str, name: str, skills: list[str]
    ) -> Transcript | None:
        box = request.sandbox
        seen = _LISTED.get(key)
        if seen is None:
            listing = box.root / "skills-listed"
            listing.mkdir(exist_ok=True)
            result = run_step(
                request,
                [self.binary, "debug", "skill"],
                env=env,
                out_dir=listing,
                timeout=SKILL_LIST_TIMEOUT,
            )
            if result.stopped:
                return Transcript(error=STOPPED, infra_error="interrupted", cwd=box.cwd)
            if result.start_error is not None:
                return Transcript(error=result.start_error, infra_error="agent_start", cwd=box.cwd)
            seen = _listed_skills(result.stdout)
            if seen is None:
                tail = " ".join(result.stderr_tail().splitlines()[-3:])
                problem = f"opencode could not list its skills (exit {result.returncode}) {tail}"
                return Transcript(error=problem.strip(), infra_error="agent_start", cwd=box.cwd)
            _LISTED[key] = seen
        if request.plugin_dir is None:
            leaked = sorted(set(skills) & set(seen))
            if leaked:
                found = ", ".join(leaked)
                problem = f"plugin {name} was loaded in the without arm: skill {found}"
                return Transcript(error=problem, infra_error="plugin_load", cwd=box.cwd)
            return None
        missing = [s for s in skills if s not in seen]
        if missing:
            problem = f"plugin {name} was loaded without its " + ", ".join(
                f"skill {name}:{s}" for s in missing
            )
            return Transcript(error=problem, infra_error="plugin_load", cwd=box.cwd)
        return None


def _listed_skills(stdout: str) -> list[str] | None:
    """The skill names ``opencode debug skill`` printed (a JSON array), None when unreadable."""
    start = stdout.find("[")
    if start < 0:
        return None
    try:
        data = json.loads(stdout[start:])
    except ValueError:
        return None
    if not isinstance(data, list):
        return None
    return [str(item.get("name")) for item in data if isinstance(item, dict) and item.get("name")]


make_agent = OpencodeAgent.make
