"""A case's ``add_dirs`` are readable where they are (as in the reference) as well as in the
run's copy, and nothing else of the case or the evals folder is: which originals open, and
the rules and the shell sandbox the claude agent writes for them. (The real binary obeys
them: tests/e2e/test_add_dirs_access.py.)"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.agents.base import RunRequest
from pytest_plugin_evals.agents.claude.agent import ClaudeAgent
from pytest_plugin_evals.agents.permissions import entry_rules, path_rule
from pytest_plugin_evals.agents.workspace import original_add_dirs
from pytest_plugin_evals.model import Case
from pytest_plugin_evals.sandbox import Sandbox
from tests.helpers import write_tree

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links, a POSIX stand-in")

#: A stand-in for claude: records its settings and command line, prints nothing.
FAKE = f"""#!{sys.executable}
import json, os, sys
settings = json.load(open(os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "settings.json")))
json.dump({{"argv": sys.argv[1:], "settings": settings}}, open(os.environ["FAKE_LOG"], "w"))
"""


def request_for(
    tmp_path: Path,
    add_dirs: tuple[str, ...],
    *,
    case_name: str = "next",
    unconfined: bool = True,
    **fields: Any,
) -> RunRequest:
    evals = tmp_path / "plugin" / "evals"
    case_dir = evals / case_name
    write_tree(
        evals,
        {
            f"{case_name}/prompt.md": "Go.",
            f"{case_name}/graders/x.md": "---\ntype: regex\npattern: x\n---\n",
            f"{case_name}/fixtures/data.txt": "42",
            "other/prompt.md": "Other.",
        },
    )
    case = Case(
        case_name, "Go.", "prose", case_dir / "prompt.md", case_dir, evals,
        add_dirs=add_dirs, **fields,
    )  # fmt: skip
    box = Sandbox.create(tmp_path / "run")
    return RunRequest(
        case=case,
        arm="single",
        run=1,
        prompt=case.prompt,
        sandbox=box,
        plugin_dir=None,
        model=None,
        max_turns=5,
        timeout_seconds=30,
        allowed_tools=case.allowed_tools,
        env=box.environment({"PATH": os.environ.get("PATH", "")}),
        unconfined=unconfined,
    )


def test_an_add_dir_inside_the_case_folder_opens_where_it_is(tmp_path: Path) -> None:
    request = request_for(tmp_path, ("fixtures", "nope", "."))
    # "." would open the case's graders and prompt; a missing folder opens nothing.
    assert original_add_dirs(request) == [request.case.dir.resolve() / "fixtures"]


def test_an_add_dir_reached_through_a_link_opens_in_both_forms(tmp_path: Path) -> None:
    request = request_for(tmp_path, ("fx",))
    (request.case.dir / "fx").symlink_to("fixtures")
    given = Path(os.path.abspath(request.case.dir / "fx"))
    assert original_add_dirs(request) == [given, given.resolve()]


def test_a_path_a_rule_would_read_as_a_pattern_opens_nothing(tmp_path: Path) -> None:
    # Claude Code reads "*" in a rule as a wildcard (a backslash does not escape it): the
    # rule would open other cases' folders too. The copy is still given.
    request = request_for(tmp_path, ("fixtures",), case_name="case*")
    assert original_add_dirs(request) == []


def run_agent(request: RunRequest, tmp_path: Path, **agent: Any) -> dict[str, Any]:
    binary = tmp_path / "fake-claude"
    binary.write_text(FAKE, encoding="utf-8")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    # The stand-in logs what it was given in the run's home (a confined run writes nowhere
    # else).
    log = request.sandbox.home / "log.json"
    request.env["FAKE_LOG"] = str(log)
    ClaudeAgent(str(binary), **agent).run(request)
    doc: dict[str, Any] = json.loads(log.read_text(encoding="utf-8"))
    return doc


def test_the_agent_opens_the_original_and_hides_the_rest_of_the_evals_folder(
    tmp_path: Path,
) -> None:
    request = request_for(tmp_path, ("fixtures",))
    log = run_agent(request, tmp_path)
    evals, case_dir = request.case.suite_root.resolve(), request.case.dir.resolve()
    fixtures = case_dir / "fixtures"
    deny = log["settings"]["permissions"]["deny"]
    allowed = next(a for a in log["argv"] if a.startswith("--allowed-tools=")).split(",")
    assert path_rule("Read", fixtures) in allowed
    assert path_rule("Read", request.sandbox.root / "context" / "fixtures") in allowed
    assert path_rule("Read", evals) not in deny  # it would win over the allow rule
    for entry in (evals / "other", evals / "results", case_dir / "graders", case_dir / "prompt.md"):
        assert set(entry_rules("Read", entry)) <= set(deny), entry
    assert {path_rule("Edit", fixtures), path_rule("Write", fixtures)} <= set(deny)
    assert {path_rule("Edit", case_dir), path_rule("Write", case_dir)} <= set(deny)
    # The note still announces the copy only.
    note = next(a for a in log["argv"] if a.startswith("--append-system-prompt="))
    assert str(fixtures) not in note


def test_a_case_without_add_dirs_keeps_the_whole_evals_folder_denied(tmp_path: Path) -> None:
    request = request_for(tmp_path, ())
    log = run_agent(request, tmp_path)
    deny = log["settings"]["permissions"]["deny"]
    assert path_rule("Read", request.case.suite_root.resolve()) in deny


def test_a_confined_shell_may_read_the_original(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("pytest_plugin_evals.agents.claude.agent.missing_backend", lambda _: None)
    request = request_for(tmp_path, ("fixtures",), allowed_tools=("Bash",), unconfined=False)
    log = run_agent(request, tmp_path, grants=("Bash",))
    filesystem = log["settings"]["sandbox"]["filesystem"]
    fixtures = request.case.dir.resolve() / "fixtures"
    # The evals folder and the case stay hidden; allowRead opens the add_dir inside them.
    assert str(request.case.suite_root) in filesystem["denyRead"]
    assert str(request.case.dir) in filesystem["denyRead"]
    assert str(fixtures) in filesystem["allowRead"]
    assert str(fixtures) not in filesystem["allowWrite"]
