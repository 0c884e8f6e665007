"""``--eval-agent qwen``: Qwen Code (``qwen -p``), one isolated run each.

The child gets ``-p "" --output-format stream-json --auth-type openai --approval-mode yolo
--max-session-turns N --chat-recording false``, ``--model`` when the run names one,
``--append-system-prompt`` (the case's, and the ``add_dirs`` copies announced),
``--include-directories`` for each copy, ``-e <plugin>`` in the with arm, and the prompt on
stdin. Its home is the run's own (``HOME``): its ``~/.qwen/settings.json`` turns usage
statistics, telemetry, auto-update and checkpoints off, offers only the tools the run may use
(``tools.core``, in Qwen Code's names, from the canonical plan of
:mod:`pytest_plugin_evals.agents.permissions`) and gives the run's MCP servers
(``mcpServers``: its stand-ins and, in the with arm, the plugin's own, as
:mod:`pytest_plugin_evals.agents.mcp` decides). The endpoint, key and model are the operator's
``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``OPENAI_MODEL`` (an OpenAI-compatible API).

The with arm installs the plugin into the run's home the way Qwen Code installs one
(``qwen extensions install <plugin> --consent``: it reads Claude Code's plugin layout and
copies it); the MCP servers of the copy (its ``.mcp.json``, its manifests' ``mcpServers``)
are taken out: the run's settings give them. The
trust check reads the init event's ``slash_commands``: the with arm must list every skill of
the plugin (``<plugin>:<skill>``) and its commands, the without arm none of its skills.

Qwen Code's own sandbox needs a container runtime or a setting it is not given: the whole CLI
runs inside the run's sandbox, which hides the operator's files from its tools.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pytest_plugin_evals.agents import mcp
from pytest_plugin_evals.agents.base import RunRequest
from pytest_plugin_evals.agents.cli import run_step
from pytest_plugin_evals.agents.credentials import without_openai_key
from pytest_plugin_evals.agents.launch import CliAgent, Launch
from pytest_plugin_evals.agents.mcp_settings import mcp_servers, settings_form
from pytest_plugin_evals.agents.permissions import base_tool, plan_confined_tools
from pytest_plugin_evals.agents.plugins import plugin_contents
from pytest_plugin_evals.agents.qwen.stream import StreamSummary, parse_file
from pytest_plugin_evals.agents.spec import declared
from pytest_plugin_evals.agents.workspace import copy_add_dirs
from pytest_plugin_evals.model import Transcript
from pytest_plugin_evals.util.manifest import plugin_name

SPEC = declared("qwen")

#: Canonical tools a run may always use: they only read (Qwen Code confines them to its
#: workspace), and ``Skill`` as Claude Code offers it whatever a case lists.
READERS = ("Read", "Glob", "Grep", "LS", "Skill")

#: Seconds the plugin's install may take.
INSTALL_TIMEOUT = 120.0

#: Qwen Code's tools that have no canonical name: never offered (``tools.exclude``; its
#: ``tools.core`` alone keeps some of them).
OTHER_TOOLS = (
    "tool_call", "tool_search", "get_goal", "update_goal", "list_agents", "send_message",
    "report_findings", "enter_worktree", "exit_worktree", "record_artifact", "task_stop",
    "cron_create", "cron_list", "cron_delete", "loop_wakeup", "monitor", "zoom_image",
    "read_mcp_resource", "save_memory", "ask_user_question", "exit_plan_mode", "lsp",
)  # fmt: skip

#: What the run's environment sets, whatever the operator's says.
FIXED_ENV = {"QWEN_CODE_SUPPRESS_YOLO_WARNING": "1", "NO_BROWSER": "1"}


def own_tools(canonical: Iterable[str]) -> tuple[list[str], list[str]]:
    """Qwen Code's built-in tools for the canonical ones, and the canonical ones it has not."""
    names: list[str] = []
    missing: list[str] = []
    for tool in canonical:
        found = [own for own, canon in SPEC.tools.items() if canon == tool]
        if found:
            names.extend(found)
        else:
            missing.append(tool)
    return list(dict.fromkeys(names)), missing


def settings_for(
    core: Iterable[str], *, servers: dict[str, Any], exclude: Iterable[str] = ()
) -> dict[str, Any]:
    """The run's ``~/.qwen/settings.json``."""
    core = list(core)
    known = [*SPEC.tools, *OTHER_TOOLS]
    settings = settings_form(
        "openai",
        core,
        exclude=[*exclude, *(t for t in known if t not in core)],
        servers=servers,
        general={"disableAutoUpdate": True, "disableUpdateNag": True},
    )
    # No memory written or read beside the run (its extraction subagent has a shell).
    settings["memory"] = {
        "enableManagedAutoMemory": False,
        "enableManagedAutoDream": False,
        "enableAutoSkill": False,
    }
    return settings


class QwenAgent(CliAgent):
    spec = SPEC

    def argv(self, request: RunRequest, context: list[Path], extension: str | None) -> list[str]:
        argv = [
            self.binary,
            "-p",
            "",
            "--output-format",
            "stream-json",
            "--auth-type",
            "openai",
            "--approval-mode",
            "yolo",
            "--max-session-turns",
            str(request.max_turns),
            "--chat-recording=false",
        ]
        if request.model:
            argv += ["--model", request.model]
        note = None
        if context:
            note = "Reference folders you may read (read-only): " + ", ".join(map(str, context))
        appended = "\n\n".join(p for p in (request.case.append_system_prompt, note) if p)
        if appended:
            argv.append(f"--append-system-prompt={appended}")
        for folder in context:
            argv += ["--include-directories", str(folder)]
        if extension is not None:
            argv += ["--extensions", extension]
        return argv

    def launch(self, request: RunRequest) -> Launch | Transcript:
        box, case = request.sandbox, request.case
        env = dict(request.env)
        env.update(FIXED_ENV)
        keyless = without_openai_key("qwen", env, box.cwd)
        if keyless is not None:
            return keyless
        plan = plan_confined_tools(
            request, grants=self.grants, disallow=self.disallow, write_root=box.cwd, skill=True
        )
        granted = {base_tool(a) for a in plan.allowed if not a.startswith("mcp__")}
        readers = [t for t in READERS if t not in {base_tool(d) for d in plan.disallowed}]
        core, unmapped = own_tools(dict.fromkeys([*readers, *sorted(granted - set(readers))]))
        excluded, _ = own_tools(base_tool(d) for d in plan.disallowed)
        servers_plan = mcp.plan_for(request)
        servers, server_notes = mcp_servers(servers_plan, self.access(request))
        qwen_dir = box.home / ".qwen"
        qwen_dir.mkdir(exist_ok=True)
        settings = settings_for(core, servers=servers, exclude=excluded)
        (qwen_dir / "settings.json").write_text(json.dumps(settings, indent=2), "utf-8")
        extension = None
        if request.plugin_dir is not None:
            problem = self._install(request, env)
            if problem is not None:
                return Transcript(error=problem, infra_error="plugin_load", cwd=box.cwd)
            extension = plugin_name(request.plugin_dir)
        context = copy_add_dirs(request)
        argv = self.argv(request, context, extension)
        notes = [*servers_plan.notes, *server_notes]
        notes.extend(f"qwen has no such tool: {t}" for t in unmapped)
        if case.history_file:
            notes.append("history_file is not supported by qwen (ignored)")

        def read(trace: Path) -> tuple[Transcript, StreamSummary]:
            return parse_file(trace, servers_plan)

        return Launch(
            argv=argv,
            env=env,
            read=read,
            notes=notes,
            not_granted=[t for t in plan.not_granted if not t.startswith("mcp__")],
            endpoints=SPEC.endpoints,
            mcp=servers_plan,
        )

    def _install(self, request: RunRequest, env: dict[str, str]) -> str | None:
        """Install the plugin into the run's home; the problem in one line, or None."""
        assert request.plugin_dir is not None
        box = request.sandbox
        logs = box.config / "qwen-install"
        logs.mkdir(exist_ok=True)
        argv = [self.binary, "extensions", "install", str(request.plugin_dir), "--consent"]
        done = run_step(
            request,
            argv,
            env=env,
            out_dir=logs,
            timeout=min(INSTALL_TIMEOUT, request.timeout_seconds),
        )
        if done.start_error is not None:
            return done.start_error
        name = plugin_name(request.plugin_dir)
        manifest = box.home / ".qwen" / "extensions" / name / "qwen-extension.json"
        if done.timed_out or done.returncode != 0 or not manifest.is_file():
            said = (done.stdout + done.stderr_tail()).strip().splitlines()[-1:]
            return f"qwen extensions install failed (exit {done.returncode})" + (
                f": {said[0][:300]}" if said else ""
            )
        # The run's settings give its MCP servers (stand-ins, or the plugin's own): the copy
        # starts none of its own.
        folder = manifest.parent
        try:
            (folder / ".mcp.json").unlink(missing_ok=True)
            for path in (manifest, folder / ".claude-plugin" / "plugin.json"):
                if not path.is_file():
                    continue
                doc = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(doc, dict) and doc.pop("mcpServers", None) is not None:
                    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
        except (OSError, ValueError) as exc:
            return f"the installed extension {name} could not be read: {exc}"
        return None

    def trust_problem(self, request: RunRequest, summary: StreamSummary) -> str | None:
        """The with arm must list every skill and command of the plugin, the without arm
        none of its skills (the init event's ``slash_commands``)."""
        plugin_dir = request.plugin_dir or request.case.suite_root.parent
        name, skills, commands = plugin_contents(plugin_dir)
        listed = set(summary.slash_commands)
        if request.plugin_dir is None:
            leaked = [s for s in skills if f"{name}:{s}" in listed]
            if request.arm == "without" and leaked:
                shown = ", ".join(f"skill {name}:{s}" for s in leaked)
                return f"plugin {name} was loaded in the without arm: {shown}"
            return None
        missing = [f"skill {name}:{s}" for s in skills if f"{name}:{s}" not in listed]
        missing += [
            f"command {name}:{c}"
            for c in commands
            if c not in listed and f"{name}:{c}" not in listed
        ]
        if missing:
            return f"plugin {name} was loaded without its " + ", ".join(missing)
        return None


make_agent = QwenAgent.make
