"""The MCP servers a run of an agent CLI gets (``agents/mcp.py``): decided once, as Claude Code's
runs get them, from the real ``prepare_mocks``."""

from __future__ import annotations

import fnmatch
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_plugin_evals.agents import confine
from pytest_plugin_evals.agents.base import RunRequest
from pytest_plugin_evals.agents.codex.servers import codex_servers
from pytest_plugin_evals.agents.copilot.tools import plan_mcp
from pytest_plugin_evals.agents.mcp import (
    McpPlan,
    McpServer,
    plan_for,
    plugin_prefix,
    substitute_root,
)
from pytest_plugin_evals.agents.mcp_settings import mcp_servers
from pytest_plugin_evals.agents.opencode.config import mcp_block
from pytest_plugin_evals.agents.permissions import ToolAccess
from pytest_plugin_evals.mocks import MockOptions, prepare_mocks
from pytest_plugin_evals.model import Arm, Case
from pytest_plugin_evals.sandbox import Sandbox
from tests.helpers import write_tree
from tests.unit.test_mocks_server import talk_over_stdio

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX stand-ins")

CREATE = "mcp__plugin_tracker-kit_tracker__create_issue"


def make_plugin(root: Path, *, mocks: bool = True) -> Path:
    """tracker-kit: ``.mcp.json``'s ``tracker`` and the manifest's ``people``; a mock for
    ``tracker`` (a shadow) and ``kb`` (standalone)."""
    real = {
        "command": "${CLAUDE_PLUGIN_ROOT}/bin/serve",
        "args": ["--root", "${CLAUDE_PLUGIN_ROOT}"],
    }
    files = {
        ".claude-plugin/plugin.json": json.dumps(
            {"name": "tracker-kit", "mcpServers": {"people": {"url": "https://people.test/mcp"}}}
        ),
        ".mcp.json": json.dumps({"mcpServers": {"tracker": real}}),
        "evals/files-bug/prompt.md": "File a bug.",
    }
    if mocks:
        files["evals/mocks/tracker/create_issue.md"] = "Created #1"
        files["evals/mocks/kb/search.md"] = "found"
    return write_tree(root / "tracker-kit", files)


def request_for(
    tmp_path: Path, plugin: Path, arm: Arm, *, mode: str = "on", real: bool = False
) -> RunRequest:
    case_dir = plugin / "evals" / "files-bug"
    case = Case("files-bug", "File a bug.", "case_yaml", case_dir / "prompt.md", case_dir,
                case_dir.parent)  # fmt: skip
    box = Sandbox.create(tmp_path / f"run-{arm}")
    loads = arm != "without"
    mocks = prepare_mocks(
        case, plugin, loads, box.out / "mocks",
        MockOptions(mode, allow_real_servers=real, shared_host=True),  # type: ignore[arg-type]
    )  # fmt: skip
    return RunRequest(
        case=case, arm=arm, run=1, prompt=case.prompt, sandbox=box,
        plugin_dir=plugin if loads else None, model=None, max_turns=5, timeout_seconds=60,
        allowed_tools=(), mocks=mocks,
    )  # fmt: skip


def names(plan: McpPlan) -> dict[str, bool]:
    return {s.name: s.stand_in for s in plan.servers}


def test_with_arm_strict_gets_the_stand_ins_and_withholds_the_real_servers(
    tmp_path: Path,
) -> None:
    request = request_for(tmp_path, make_plugin(tmp_path), "with")
    plan = plan_for(request)
    # The shadow takes the plugin server's own name; people has no mock and is withheld.
    assert names(plan) == {"tracker": True, "kb": True}
    assert set(plan.suppressed) == {"tracker", "people"}
    assert plan.canonical("tracker", "create_issue") == CREATE
    assert plan.canonical("people", "lookup") == "mcp__plugin_tracker-kit_people__lookup"
    assert plan.canonical("kb", "search") == "mcp__kb__search"
    tracker = next(s for s in plan.servers if s.name == "tracker")
    assert tracker.command == sys.executable  # the stub, run by the harness's Python
    assert ToolAccess(["Bash"]).granted(tracker) == ("*",)  # a stand-in's tools are all allowed
    # A confined CLI must be shown the Python, the stub and the run's own socket, and not the
    # mock host's folder around it (other runs' sockets).
    assert Path(sys.prefix) in plan.readable
    assert any(p.name == "stub.py" for p in plan.readable)
    socket = request.mocks.socket if request.mocks is not None else None
    assert socket is not None and socket.is_socket() and len(str(socket)) < 100
    assert plan.writable == (socket,) and plan.hidden == (socket.parent,)
    other = plan_for(request_for(tmp_path / "other", make_plugin(tmp_path / "other"), "with"))
    assert other.writable != plan.writable and other.hidden == plan.hidden  # a socket per run


def test_without_arm_gets_only_the_standalone_stand_in(tmp_path: Path) -> None:
    plan = plan_for(request_for(tmp_path, make_plugin(tmp_path), "without"))
    assert names(plan) == {"kb": True}
    assert plan.suppressed == ()
    assert plan.canonical("kb", "search") == "mcp__kb__search"


def test_real_servers_allowed_start_beside_the_stand_ins(tmp_path: Path) -> None:
    plugin = make_plugin(tmp_path)
    plan = plan_for(request_for(tmp_path, plugin, "with", real=True))
    assert names(plan) == {"tracker": True, "kb": True, "people": False}
    assert plan.suppressed == ("tracker",)  # the shadowed one only
    people = next(s for s in plan.servers if s.name == "people")
    assert people.url == "https://people.test/mcp" and people.command is None
    lookup = "mcp__plugin_tracker-kit_people__lookup"
    # A real server's tool needs the case to list it and the operator to grant it.
    assert ToolAccess([lookup]).granted(people) == ()
    assert ToolAccess([lookup], [lookup]).granted(people) == ("lookup",)
    assert ToolAccess([lookup, "Bash"], ["mcp__*"]).granted(people) == ("lookup",)
    star = "mcp__plugin_tracker-kit_people__*"
    assert ToolAccess([star], [star]).granted(people) == ("*",)


def test_mocks_off_gives_the_plugins_own_servers_with_its_root(tmp_path: Path) -> None:
    plugin = make_plugin(tmp_path)
    plan = plan_for(request_for(tmp_path, plugin, "with", mode="off"))
    assert names(plan) == {"tracker": False, "people": False}
    tracker = next(s for s in plan.servers if s.name == "tracker")
    assert tracker.command == f"{plugin}/bin/serve"
    assert tracker.args == ["--root", str(plugin)]
    assert plan.readable == () and plan.writable == () and plan.hidden == ()
    assert plan_for(request_for(tmp_path, plugin, "without", mode="off")).servers == ()


def test_a_plugin_without_mocks_is_strict_by_default(tmp_path: Path) -> None:
    """As ``--strict-mcp-config`` for Claude Code: no mock, no real server either."""
    plan = plan_for(request_for(tmp_path, make_plugin(tmp_path, mocks=False), "with"))
    assert plan.servers == ()
    assert set(plan.suppressed) == {"tracker", "people"}


def test_a_server_without_command_or_url_is_left_out_with_a_note(tmp_path: Path) -> None:
    plugin = make_plugin(tmp_path, mocks=False)
    (plugin / ".mcp.json").write_text(json.dumps({"mcpServers": {"odd": {"type": "stdio"}}}))
    plan = plan_for(request_for(tmp_path, plugin, "with", mode="off"))
    assert "odd" not in names(plan)
    assert plan.notes == ("MCP server odd: no command or url, left out",)


def test_split_reads_flat_tool_names_of_known_servers(tmp_path: Path) -> None:
    plan = plan_for(request_for(tmp_path, make_plugin(tmp_path), "with"))
    assert plan.split("tracker_create_issue", ("_",)) == ("tracker", "create_issue")
    assert plan.split("mcp_tracker_create_issue", ("_",)) == ("tracker", "create_issue")
    assert plan.split("mcp__kb__search") == ("kb", "search")
    assert plan.split("bash") is None and plan.split("tracker_", ("_",)) is None


def test_substitute_root_replaces_both_spellings_all_the_way_down() -> None:
    value = {"a": ["${CLAUDE_PLUGIN_ROOT}/x", "$CLAUDE_PLUGIN_ROOT/y"], "n": 3}
    assert substitute_root(value, "/p") == {"a": ["/p/x", "/p/y"], "n": 3}
    assert plugin_prefix("tracker-kit", "tracker") == "mcp__plugin_tracker-kit_tracker__"


KB = McpServer("kb", {"command": "/py", "args": ["stub.py"]}, "mcp__kb__", stand_in=True)
PEOPLE = McpServer("people", {"command": "node"}, plugin_prefix("kit", "people"), stand_in=False)
TOOLS = {"lookup", "search", "delete"}


def offered_gemini_qwen(plan: McpPlan, access: ToolAccess) -> dict[str, set[str]]:
    servers, _ = mcp_servers(plan, access)
    return {
        name: set(given.get("includeTools", TOOLS)) - set(given.get("excludeTools", ()))
        for name, given in servers.items()
    }


def offered_codex(plan: McpPlan, access: ToolAccess) -> dict[str, set[str]]:
    table = codex_servers(plan, access).table
    return {
        s.name: set(table[s.name].get("enabled_tools", TOOLS))
        - set(table[s.name].get("disabled_tools", ()))
        for s in plan.servers
    }


def offered_copilot(plan: McpPlan, access: ToolAccess) -> dict[str, set[str]]:
    given = plan_mcp(plan, access)
    return {
        s: {
            t
            for t in TOOLS
            if s in given.available
            and (s in given.allow or f"{s}({t})" in given.allow)
            and f"{s}({t})" not in given.deny
        }
        for s in given.config["mcpServers"]
    }


def offered_opencode(plan: McpPlan, access: ToolAccess) -> dict[str, set[str]]:
    _, rules, _ = mcp_block(plan, access)

    def allowed(key: str) -> bool:  # the run's own rules deny all else; the last match wins
        verdicts = [v for pattern, v in rules.items() if fnmatch.fnmatchcase(key, pattern)]
        return verdicts[-1:] == ["allow"]

    return {s.name: {t for t in TOOLS if allowed(f"{s.name}_{t}")} for s in plan.servers}


@pytest.mark.parametrize(
    ("disallowed", "kb", "people"),
    [
        ((), TOOLS, {"lookup", "search"}),
        (("mcp__kb__delete",), {"lookup", "search"}, {"lookup", "search"}),
        ((" mcp__kb__search ", "Bash"), {"lookup", "delete"}, {"lookup", "search"}),
        (("mcp__kb",), set(), {"lookup", "search"}),
        (("mcp__kb__",), set(), {"lookup", "search"}),
        (("mcp__kb__*",), set(), {"lookup", "search"}),
        (("mcp__plugin_kit_people",), TOOLS, set()),
        (("mcp__plugin_kit_people__search",), TOOLS, {"lookup"}),
        (("mcp__plugin_*",), TOOLS, set()),
        (("mcp__*",), set(), set()),
    ],
)
def test_every_agent_reads_a_disallowed_mcp_entry_the_same_way(
    disallowed: tuple[str, ...], kb: set[str], people: set[str]
) -> None:
    """Claude Code's names in ``disallowed_tools`` / ``--eval-disallow-tools`` take the same
    tools away whatever the agent: one tool, a whole server (its bare name, its prefix, its
    wildcard), a wildcard over servers; a stand-in's tools too."""
    plan = McpPlan(servers=(KB, PEOPLE))
    listed = [PEOPLE.prefix + "lookup", PEOPLE.prefix + "search"]
    access = ToolAccess(listed, ["mcp__*"], disallowed)
    assert access.denied(KB) == (("*",) if not kb else tuple(sorted(TOOLS - kb)))
    expected = {"kb": kb, "people": people}
    for offered in (offered_gemini_qwen, offered_codex, offered_copilot, offered_opencode):
        assert offered(plan, access) == expected, offered.__name__


def confined(request: RunRequest, argv: list[str], *, with_mcp: bool = True) -> confine.Confined:
    """``argv`` ready to run in ``request``'s sandbox, shown what the run's MCP plan needs
    (``with_mcp``) or not."""
    from pytest_plugin_evals.agents.cli import confinement_for, reach_of

    env = {"PATH": "/usr/bin:/bin"}
    plan = plan_for(request) if with_mcp else None
    reach = reach_of(request, sys.executable, env=env, mcp=plan)
    return confine.prepare(confinement_for(request, reach), argv, env)


def run_confined(
    request: RunRequest, argv: list[str], **kw: bool
) -> subprocess.CompletedProcess[str]:
    ready = confined(request, argv, **kw)
    try:
        return subprocess.run(
            ready.argv, env=ready.env, capture_output=True, text=True, timeout=60, check=False
        )
    finally:
        ready.close()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_confined_cli_can_start_the_stand_ins_python_kept_in_the_hidden_home(
    tmp_path: Path,
) -> None:
    """pyenv, uv and conda keep Python in the operator's home, which a confined CLI does not
    see: what the plan opens must be enough for the stand-ins' launcher to run."""
    request = request_for(tmp_path, make_plugin(tmp_path), "with")
    server = next(s for s in plan_for(request).servers if s.stand_in)
    probe = [server.command or "", "-I", "-S", "-c", "import json, socket; print('started')"]
    done = run_confined(request, probe)
    assert (done.returncode, done.stdout.strip()) == (0, "started"), done.stderr
    if not Path(sys.base_prefix).is_relative_to("/usr"):  # a Python outside the system's
        assert run_confined(request, probe, with_mcp=False).returncode != 0


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_confined_cli_reaches_its_own_runs_socket_and_no_other(tmp_path: Path) -> None:
    """bubblewrap shows the run's socket, bound as it is: the stand-in starts through it;
    the mock host's folder and another run's socket are not there."""
    request = request_for(tmp_path, make_plugin(tmp_path), "without")
    other = request_for(tmp_path / "other", make_plugin(tmp_path / "other"), "without")
    assert request.mocks is not None and other.mocks is not None
    mine, theirs = request.mocks.socket, other.mocks.socket
    assert mine is not None and theirs is not None and mine.parent == theirs.parent
    look = "import os, sys; print(sorted(os.listdir(sys.argv[1])), os.path.exists(sys.argv[2]))"
    probe = [sys.executable, "-I", "-S", "-c", look, str(mine.parent), str(theirs)]
    done = run_confined(request, probe)
    assert done.stdout.split() == [f"['{mine.name}']", "False"], done.stderr
    (server,) = plan_for(request).servers
    ready = confined(request, [server.command or "", *server.args])
    try:
        started = talk_over_stdio(ready.argv, env=ready.env)
    finally:
        ready.close()
    assert started == (["search"], "found")
    request.mocks.close()
    other.mocks.close()
    assert not mine.exists() and not theirs.exists()
