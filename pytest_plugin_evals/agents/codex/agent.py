"""``--eval-agent codex``: the real ``codex exec --json``, one isolated run each.

The child gets ``exec --json --skip-git-repo-check --ephemeral -s <sandbox mode>``, its model
provider as ``-c`` overrides (a custom provider ``eval`` with ``wire_api = "responses"``, its
``base_url`` the operator's ``OPENAI_BASE_URL`` or OpenAI's, its key read from
``OPENAI_API_KEY``), the prompt on stdin (``-`` as the prompt argument), and an environment in
the run's sandbox: HOME, TMPDIR and ``CODEX_HOME`` (the run's ``config/codex``, made before the
run) there. Analytics are off, no session is written (``--ephemeral``), the shell's environment
is Codex's ``core`` set (no credential reaches a command), web search is off unless granted.

The with arm installs the plugin into the run's ``CODEX_HOME`` the way Codex installs plugins:
a marketplace folder in the run's ``config/`` (``.claude-plugin/marketplace.json`` naming the
plugin, which Codex reads in Claude's plugin layout), ``codex plugin marketplace add`` and
``codex plugin add <plugin>@eval``. Codex copies the plugin into ``CODEX_HOME/plugins/cache``
and lists its skills to the model; the with arm must have every skill there, the without arm
no plugin at all. ``--ignore-user-config`` is not given: the only config file read is the one
those two commands wrote in the run's own ``CODEX_HOME``.

The run's MCP servers (:func:`pytest_plugin_evals.agents.mcp.plan_for`: the stand-ins, the
plugin's own servers in the with arm) are one ``-c mcp_servers={…}`` override
(:mod:`.servers`), which also turns off the plugin's servers Codex would start itself and the
run must not have.

Codex's own sandbox (``-s``) confines every shell command and patch: ``read-only`` by default,
``workspace-write`` (writes in the working directory and the run's TMPDIR, ``/tmp`` excluded,
``.git`` read-only) when the case may write. Neither confines reads: a granted ``Bash`` runs
only with ``--eval-unconfined-shell``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from pytest_plugin_evals.agents import mcp
from pytest_plugin_evals.agents.base import RunRequest, infra_kind
from pytest_plugin_evals.agents.cli import (
    check_answered,
    did_not_start,
    run_step,
    with_stderr,
)
from pytest_plugin_evals.agents.codex.events import StreamSummary, parse_file
from pytest_plugin_evals.agents.codex.servers import codex_servers, failed_servers
from pytest_plugin_evals.agents.credentials import without_openai_key
from pytest_plugin_evals.agents.launch import CliAgent, Launch, ended, exited
from pytest_plugin_evals.agents.permissions import base_tool, plan_confined_tools
from pytest_plugin_evals.agents.spec import declared
from pytest_plugin_evals.agents.workspace import copy_add_dirs
from pytest_plugin_evals.model import Transcript
from pytest_plugin_evals.util.manifest import plugin_name
from pytest_plugin_evals.util.process import ProcessResult

SPEC = declared("codex")
#: The variable naming Codex's endpoint, and OpenAI's (when the operator sets none).
ENDPOINTS = SPEC.endpoints
OPENAI_URL = ENDPOINTS["OPENAI_BASE_URL"] or ""

#: The one line of a run refused because Codex's sandbox does not confine a shell's reads.
#: The name of the run's model provider and of the plugin's marketplace.
PROVIDER = "eval"
MARKETPLACE = "eval"

#: Canonical tools that write: in the case and granted, the sandbox becomes workspace-write.
WRITERS = frozenset({"Bash", "Write", "Edit", "MultiEdit", "NotebookEdit"})

#: Seconds each plugin install step may take.
INSTALL_TIMEOUT = 120.0

#: Warnings Codex gives for every custom model name; not worth a note.
_NOISE = re.compile(r"^Model metadata for `.*` not found")


def _toml(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(value, ensure_ascii=False)


def provider_config(base_url: str, *, retries: bool) -> str:
    """The ``model_providers.eval`` override: the endpoint, the Responses API, the key's
    variable; no retries of its own when the session retries refused runs."""
    fields = [
        f"name={_toml(PROVIDER)}",
        f"base_url={_toml(base_url)}",
        'wire_api="responses"',
        'env_key="OPENAI_API_KEY"',
    ]
    if not retries:
        fields += ["request_max_retries=0", "stream_max_retries=0"]
    return f"model_providers.{PROVIDER}={{{','.join(fields)}}}"


def write_marketplace(plugin_dir: Path, folder: Path) -> str:
    """A one-plugin marketplace in ``folder`` (its entry a link to the plugin); the plugin's
    name."""
    name = plugin_name(plugin_dir)
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / "plugin").symlink_to(plugin_dir.resolve(), target_is_directory=True)
    doc = {
        "name": MARKETPLACE,
        "owner": {"name": "pytest-plugin-evals"},
        "plugins": [{"name": name, "source": "./plugin"}],
    }
    (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(doc), "utf-8")
    return name


def skill_folders(plugin_dir: Path) -> list[str]:
    """The plugin's skills, by folder (as Codex's cache lays them out)."""
    return sorted(p.parent.name for p in plugin_dir.glob("skills/*/SKILL.md"))


class CodexAgent(CliAgent):
    spec = SPEC

    def argv(
        self,
        request: RunRequest,
        base_url: str,
        sandbox: str,
        web: bool,
        note: str | None = None,
        servers: Sequence[str] = (),
    ) -> list[str]:
        argv = [
            self.binary,
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--ephemeral",
            "-s",
            sandbox,
            "-c",
            f"model_provider={PROVIDER}",
            "-c",
            provider_config(base_url, retries=request.rate_limit_retries <= 0),
            "-c",
            "analytics.enabled=false",
            "-c",
            'shell_environment_policy.inherit="core"',
            "-c",
            "sandbox_workspace_write.exclude_slash_tmp=true",
            "-c",
            f"web_search={_toml('live' if web else 'disabled')}",
        ]
        if request.model:
            argv += ["-c", f"model={_toml(request.model)}"]
        appended = "\n\n".join(p for p in (request.case.append_system_prompt, note) if p)
        if appended:
            argv += ["-c", f"developer_instructions={_toml(appended)}"]
        argv += servers  # -c mcp_servers={…}: the run's MCP servers (servers.py)
        argv.append("-")
        return argv

    def launch(self, request: RunRequest) -> Launch | Transcript:
        box = request.sandbox
        context = copy_add_dirs(request)
        note = None
        if context:
            listed = ", ".join(str(p) for p in context)
            note = f"Reference folders you may read (read-only): {listed}"
        # A bare Write/Edit grant becomes path rules under the run's folder: without one, it
        # would be dropped and the sandbox stay read-only.
        plan = plan_confined_tools(
            request, grants=self.grants, disallow=self.disallow, write_root=box.cwd
        )
        allowed = {base_tool(a) for a in plan.allowed}
        # Codex's own sandbox confines writes and network, not reads; every run (its shell is
        # always there) runs inside the run's sandbox, which hides the operator's files.
        env = dict(request.env)
        for key in [k for k in env if k.startswith("CODEX_")]:
            del env[key]
        keyless = without_openai_key("codex", env, box.cwd)
        if keyless is not None:
            return keyless
        base_url = env.get("OPENAI_BASE_URL", "").strip() or OPENAI_URL
        codex_home = box.config / "codex"
        codex_home.mkdir(exist_ok=True)
        env["CODEX_HOME"] = str(codex_home)
        refused = self._install(request, env, codex_home)
        if refused is not None:
            return Transcript(error=refused, infra_error="plugin_load", cwd=box.cwd)
        sandbox = "workspace-write" if allowed & WRITERS else "read-only"
        # The run's MCP servers: stand-ins, the plugin's own (Codex's start is overridden).
        mcp_plan = mcp.plan_for(request)
        servers = codex_servers(mcp_plan, self.access(request))
        web = "WebSearch" in allowed
        argv = self.argv(request, base_url, sandbox, web, note, servers=servers.args())
        plugin = plugin_name(request.plugin_dir) if request.plugin_dir is not None else None
        where = "unconfined" if request.unconfined else "inside the run's sandbox"

        def read(trace: Path) -> tuple[Transcript, StreamSummary]:
            return parse_file(
                trace, plugin=plugin, mcp=lambda s, t: servers.canonical(mcp_plan, s, t)
            )

        def classify(transcript: Transcript, summary: StreamSummary, result: ProcessResult) -> None:
            transcript.notes.extend(f"codex: {w}" for w in summary.warnings if not _NOISE.match(w))
            failed_mcp, harness = failed_servers(mcp_plan, servers, transcript.stderr_tail)
            self._classify(
                transcript, summary, result.returncode,
                plugin_servers_failed=() if harness else tuple(failed_mcp),
            )  # fmt: skip

        return Launch(
            argv=argv,
            env=env,
            read=read,
            classify=classify,
            notes=[*mcp_plan.notes, *servers.notes, f"codex sandbox: {sandbox}, {where}"],
            not_granted=plan.not_granted,
            endpoints=ENDPOINTS,
            mcp=mcp_plan,
            nests=True,
        )

    def _install(self, request: RunRequest, env: dict[str, str], home: Path) -> str | None:
        """Install the plugin into the run's CODEX_HOME (with arm) and check what Codex holds:
        every skill of the plugin in the with arm, no plugin in the without arm."""
        cache = home / "plugins" / "cache"
        if request.plugin_dir is None:
            if cache.exists() and any(cache.iterdir()):
                return "a plugin was installed in the without arm"
            return None
        box = request.sandbox
        folder = box.config / "marketplace"
        try:
            name = write_marketplace(request.plugin_dir, folder)
        except OSError as exc:
            return f"could not make the plugin's marketplace: {exc}"
        logs = box.config / "install"
        logs.mkdir(exist_ok=True)
        steps = (
            [self.binary, "plugin", "marketplace", "add", str(folder)],
            [self.binary, "plugin", "add", f"{name}@{MARKETPLACE}", "--json"],
        )
        for argv in steps:
            done = run_step(
                request,
                argv,
                env=env,
                out_dir=logs,
                timeout=INSTALL_TIMEOUT,
            )
            if done.start_error is not None:
                return done.start_error
            if done.timed_out or done.returncode != 0:
                tail = " ".join(done.stderr_tail().splitlines()[:1]) or f"exit {done.returncode}"
                return f"codex {' '.join(argv[1:4])} failed: {tail}"
        installed = list((cache / MARKETPLACE / name).glob("*"))
        if not installed:
            return f"plugin {name} was not installed"
        missing = [
            s
            for s in skill_folders(request.plugin_dir)
            if not any((v / "skills" / s / "SKILL.md").is_file() for v in installed)
        ]
        if missing:
            listed = ", ".join(f"skill {name}:{s}" for s in missing)
            return f"plugin {name} was installed without its {listed}"
        return None

    def _classify(
        self,
        transcript: Transcript,
        summary: StreamSummary,
        returncode: int | None,
        plugin_servers_failed: tuple[str, ...] = (),
    ) -> None:
        if summary.failure is not None:
            transcript.infra_error = infra_kind(summary.status)
            transcript.error = f"{ended(returncode)}: {summary.failure}"
            return
        if plugin_servers_failed:
            # The plugin's own server did not start: the plugin failed, not the harness.
            tail = transcript.stderr_tail.splitlines()[-1:]
            names = ", ".join(plugin_servers_failed)
            transcript.error = f"the plugin's MCP server {names} did not start: " + " ".join(tail)
            return
        if not summary.thread_started:
            did_not_start(transcript, f"{exited('codex', returncode)} without starting the run")
            return
        if returncode != 0:
            transcript.error = with_stderr(ended(returncode), transcript)
        check_answered(transcript)


make_agent = CodexAgent.make
