"""Which tools a Claude Code run may use, and where: :func:`plan_tools` and its helpers."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from pytest_plugin_evals.agents.permissions import (
    BUILTIN_WRITERS,
    FILE_WRITERS,
    ToolAccess,
    ToolPlan,
    base_tool,
    entry_rules,
    grant_for,
    grants_for,
    hidden_around,
    path_rule,
    plan_tools,
)
from pytest_plugin_evals.settings.parsers import split_tools
from tests.helpers import write_tree

HOME = Path("/runs/r1/home")
TMP = Path("/runs/r1/tmp")
SKILLS = Path("/plugins/rel/skills")
EVALS = Path("/plugins/rel/evals")
CONFIG = Path("/runs/r1/config")
OUT = Path("/runs/r1/out")
PLUGIN = Path("/plugins/rel")
CASE_DIR = Path("/plugins/rel/evals/next")
CONTEXT = Path("/runs/r1/context/fixtures")


def plan(
    case_tools: Iterable[str] = (),
    grants: Iterable[str] = (),
    *,
    case_disallowed: Iterable[str] = (),
    operator_disallowed: Iterable[str] = (),
    readonly_roots: Iterable[Path] = (),
) -> ToolPlan:
    return plan_tools(
        ToolAccess(case_tools, grants, (*case_disallowed, *operator_disallowed)),
        read_roots=[HOME, TMP, SKILLS, *readonly_roots],
        write_roots=[HOME, TMP],
        deny_read=[EVALS, CONFIG, OUT],
        deny_edit=[PLUGIN, CASE_DIR],
        readonly_roots=readonly_roots,
    )


READ_RULES = ["Read(//runs/r1/home/**)", "Read(//runs/r1/tmp/**)", "Read(//plugins/rel/skills/**)"]


def test_path_rule_is_an_absolute_claude_code_path() -> None:
    assert path_rule("Read", Path("/a/b")) == "Read(//a/b/**)"
    assert path_rule("Edit", Path("/a/b/")) == "Edit(//a/b/**)"


def test_base_tool() -> None:
    assert base_tool("Bash(npm test *)") == "Bash"
    assert base_tool(" Write ") == "Write"
    assert base_tool("mcp__srv__tool") == "mcp__srv__tool"


def test_reading_is_always_granted_and_scoped_to_the_roots() -> None:
    result = plan([])
    assert list(result.allowed) == READ_RULES
    assert result.not_granted == ()


@pytest.mark.parametrize("listed", ["Read", "Glob", "Grep", "LS", "Read(/etc/**)"])
def test_a_listed_file_reader_stays_scoped(listed: str) -> None:
    # A bare Read would grant every path on the machine; the case's entry is not passed on.
    result = plan([listed, "Skill"])
    assert list(result.allowed) == [*READ_RULES, "Skill"]
    assert not any(a in ("Read", "Glob", "Grep", "LS") for a in result.allowed)
    assert result.not_granted == ()


def test_glob_and_grep_are_not_removed() -> None:
    result = plan(["Glob", "Grep"])
    assert "Glob" not in result.disallowed and "Grep" not in result.disallowed


@pytest.mark.parametrize("tool", ["Skill", "ToolSearch", "Agent", "TodoWrite"])
def test_a_read_only_case_tool_is_granted_as_listed(tool: str) -> None:
    result = plan([tool])
    assert result.allowed[-1] == tool
    assert result.not_granted == ()


@pytest.mark.parametrize("tool", ["Write", "Bash", "Edit", "WebFetch", "mcp__srv__deploy"])
def test_a_tool_that_is_not_read_only_needs_a_grant(tool: str) -> None:
    without = plan(["Skill", tool])
    assert without.not_granted == (tool,)
    assert tool not in without.allowed
    if tool in BUILTIN_WRITERS:
        assert tool in without.disallowed
    granted = plan(["Skill", tool], grants=[tool])
    assert granted.not_granted == ()
    if tool in FILE_WRITERS:  # scoped to the run's own folders
        assert f"{tool}(//runs/r1/home/**)" in granted.allowed
    else:
        assert tool in granted.allowed
    assert tool not in granted.disallowed


@pytest.mark.parametrize("tool", sorted(FILE_WRITERS))
def test_a_bare_file_writer_grant_writes_only_in_the_run(tool: str) -> None:
    granted = plan([tool], grants=[tool])
    writes = [a for a in granted.allowed if a.startswith(("Edit(", f"{tool}("))]
    # Claude Code checks every file write against Edit rules.
    assert writes == list(dict.fromkeys([
        "Edit(//runs/r1/home/**)", f"{tool}(//runs/r1/home/**)",
        "Edit(//runs/r1/tmp/**)", f"{tool}(//runs/r1/tmp/**)",
    ]))  # fmt: skip
    assert "Edit" in granted.disallowed or tool == "Edit"  # a Write grant is not an Edit one
    # A case author's own pattern stays as written.
    patterned = plan([f"{tool}(docs/**)"], grants=[tool])
    assert patterned.allowed[-1] == f"{tool}(docs/**)"


def test_a_grant_never_gives_a_tool_to_a_case_that_does_not_list_it() -> None:
    result = plan(["Skill"], grants=["Write", "Edit", "Bash(npm test *)", "mcp__*"])
    assert list(result.allowed) == [*READ_RULES, "Skill"]
    assert {"Write", "Edit", "Bash"} <= set(result.disallowed)
    assert result.not_granted == ()


def test_a_narrower_grant_narrows_a_bare_case_entry() -> None:
    result = plan(["Bash"], grants=["Bash(npm test *)"])
    assert result.allowed[-1] == "Bash(npm test *)"
    assert "Bash" not in result.allowed
    assert "Bash" not in result.disallowed  # offered, narrowed by the rule
    assert result.not_granted == ()


def test_every_narrower_grant_for_the_same_tool_is_kept() -> None:
    result = plan(["Bash"], grants=["Bash(npm test *)", "Bash(npm run lint)"])
    assert list(result.allowed[len(READ_RULES) :]) == ["Bash(npm test *)", "Bash(npm run lint)"]


def test_a_bare_grant_covers_a_case_pattern_as_written() -> None:
    result = plan(["Bash(npm test *)"], grants=["Bash"])
    assert result.allowed[-1] == "Bash(npm test *)"
    assert "Bash" not in result.allowed


def test_equal_patterns_are_granted() -> None:
    result = plan(["Bash(npm test *)"], grants=["Bash(npm test *)"])
    assert result.allowed[-1] == "Bash(npm test *)"


def test_mismatching_patterns_are_not_granted() -> None:
    result = plan(["Bash(git push *)"], grants=["Bash(npm test *)"])
    assert result.not_granted == ("Bash(git push *)",)
    assert not any(base_tool(a) == "Bash" for a in result.allowed)
    assert "Bash" in result.disallowed


def test_a_grant_for_another_tool_does_not_grant() -> None:
    result = plan(["Write"], grants=["Edit", "Writer"])
    assert result.not_granted == ("Write",)


def test_mcp_wildcard_grant() -> None:
    result = plan(["mcp__release__tag", "mcp__notes__publish", "Write"], grants=["mcp__*"])
    assert result.allowed[-2:] == ("mcp__release__tag", "mcp__notes__publish")
    assert result.not_granted == ("Write",)
    scoped = plan(["mcp__release__tag", "mcp__notes__publish"], grants=["mcp__release__*"])
    assert scoped.allowed[-1] == "mcp__release__tag"
    assert scoped.not_granted == ("mcp__notes__publish",)


def test_grant_for() -> None:
    assert grant_for("Write", ["Write"]) == "Write"
    assert grant_for("Write", []) is None
    assert grant_for("Bash", ["Bash(ls)"]) == "Bash(ls)"
    assert grant_for("Bash(ls)", ["Bash(pwd)"]) is None
    assert grants_for("Bash", ["Bash(ls)", "Write", "Bash(pwd)", "Bash(ls)"]) == (
        "Bash(ls)",
        "Bash(pwd)",
    )
    assert grants_for("Bash", ["Bash(ls)", "Bash"]) == ("Bash",)
    assert grants_for("Bash(ls)", ["Bash(pwd)", "Bash(ls)"]) == ("Bash(ls)",)


def test_malformed_entries_are_not_granted() -> None:
    result = plan(["Bash(npm test", "Write"], grants=["Bash", "Write"])
    assert result.not_granted == ("Bash(npm test",)
    assert result.allowed[-1] == "Write(//runs/r1/tmp/**)"


def test_blank_entries_are_ignored() -> None:
    result = plan(["", "  ", "Skill"], grants=[" ", ""])
    assert list(result.allowed) == [*READ_RULES, "Skill"]
    assert result.not_granted == ()


def test_every_built_in_writer_that_is_not_granted_is_removed() -> None:
    result = plan(["Skill"])
    assert list(result.disallowed) == list(BUILTIN_WRITERS)
    granted = plan(["Write", "Edit"], grants=["Write", "Edit"])
    assert [t for t in BUILTIN_WRITERS if t not in granted.disallowed] == ["Edit", "Write"]


@pytest.mark.parametrize("side", ["case", "operator"])
def test_disallowed_removes_a_tool_even_when_granted(side: str) -> None:
    removed = ["Write", "Skill", "Bash(rm *)"]
    case_side, operator_side = (removed, []) if side == "case" else ([], removed)
    result = plan(
        ["Write", "Skill", "Bash", "Edit"],
        grants=["Write", "Bash", "Edit"],
        case_disallowed=case_side,
        operator_disallowed=operator_side,
    )
    assert list(result.allowed) == [
        *READ_RULES,
        "Edit(//runs/r1/home/**)",
        "Edit(//runs/r1/tmp/**)",
    ]
    assert "Write" in result.disallowed
    for tool in ("Write", "Skill", "Bash"):
        assert result.disallowed.count(tool) == 1
    assert "Edit" not in result.disallowed


def test_disallowing_a_reader_removes_its_own_tool() -> None:
    result = plan(["Skill"], operator_disallowed=["Grep"])
    assert "Grep" in result.disallowed
    assert list(result.allowed) == [*READ_RULES, "Skill"]


def test_deny_rules_for_read_and_edit() -> None:
    result = plan(["Skill"], readonly_roots=[CONTEXT])
    assert list(result.deny) == [
        "Read(//plugins/rel/evals/**)",
        "Read(//runs/r1/config/**)",
        "Read(//runs/r1/out/**)",
        "Edit(//plugins/rel/**)",
        "Write(//plugins/rel/**)",
        "Edit(//plugins/rel/evals/next/**)",
        "Write(//plugins/rel/evals/next/**)",
        "Edit(//runs/r1/context/fixtures/**)",
        "Write(//runs/r1/context/fixtures/**)",
    ]
    # The add_dirs copy is readable.
    assert "Read(//runs/r1/context/fixtures/**)" in result.allowed


def test_entry_rules_name_a_file_or_a_folder_and_all_it_holds() -> None:
    assert entry_rules("Read", Path("/a/b/")) == ["Read(//a/b)", "Read(//a/b/**)"]


def evals_tree(tmp_path: Path) -> Path:
    """An evals folder: case ``next`` with a ``fixtures`` add_dir, another case, a suite file."""
    write_tree(
        tmp_path / "evals",
        {
            "next/fixtures/data.txt": "42",
            "next/fixtures/sub/deep.txt": "43",
            "next/graders/x.md": "---\ntype: regex\npattern: x\n---\n",
            "next/prompt.md": "Go.",
            "next/notes.txt": "private",
            "other/prompt.md": "Other.",
            "evals.json": "{}",
        },
    )
    return tmp_path / "evals"


def test_hidden_around_hides_everything_beside_the_way_to_a_shown_folder(
    tmp_path: Path,
) -> None:
    evals = evals_tree(tmp_path)
    hidden = hidden_around(evals, [evals / "next" / "fixtures"])
    assert sorted(p.relative_to(evals).as_posix() for p in hidden) == sorted([
        # what is there when the run starts ...
        "other", "evals.json", "next/graders", "next/prompt.md", "next/notes.txt",
        # ... and what may be made there later, by name
        "results", "mocks", "graders", "prompt.md", "case.yaml",
        "next/results", "next/mocks", "next/case.yaml",
    ])  # fmt: skip
    # Nothing on the way, nothing inside the shown folder.
    assert not {evals, evals / "next"} & set(hidden)
    assert not any(p.is_relative_to(evals / "next" / "fixtures") for p in hidden)


def test_hidden_around_keeps_every_shown_folder_and_the_way_to_it(tmp_path: Path) -> None:
    evals = evals_tree(tmp_path)
    write_tree(evals / "next", {"data/more/a.txt": "a", "data/secret.txt": "s"})
    shown = [evals / "next" / "fixtures", evals / "next" / "data" / "more"]
    hidden = hidden_around(evals, [*shown, evals / "next" / "fixtures" / "sub", tmp_path])
    names = {p.relative_to(evals).as_posix() for p in hidden}
    assert "next/data/secret.txt" in names and "next/data/graders" in names
    assert not {"next/fixtures", "next/data", "next/data/more", "next/fixtures/sub"} & names
    # A folder outside (or the folder itself) opens nothing: nothing to hide.
    assert hidden_around(evals, [tmp_path, evals]) == []


def test_an_add_dir_opened_in_place_splits_the_evals_deny(tmp_path: Path) -> None:
    evals = evals_tree(tmp_path)
    fixtures = evals / "next" / "fixtures"
    result = plan_tools(
        ToolAccess(["Skill"]),
        read_roots=[HOME, TMP],
        write_roots=[HOME, TMP],
        deny_read=[evals, CONFIG, OUT],
        deny_edit=[evals, evals / "next"],
        read_openings=[fixtures],
    )
    assert path_rule("Read", fixtures) in result.allowed
    # Deny rules beat allow rules: the evals folder is not denied whole ...
    assert path_rule("Read", evals) not in result.deny
    # ... but everything beside the way to the add_dir is, as a file or a folder.
    for entry in ("other", "evals.json", "results", "next/graders", "next/prompt.md"):
        assert set(entry_rules("Read", evals / entry)) <= set(result.deny), entry
    assert not any(r.startswith(f"Read(/{fixtures}") for r in result.deny)
    assert f"Read(/{evals / 'next'})" not in result.deny
    assert "Read(//runs/r1/config/**)" in result.deny and "Read(//runs/r1/out/**)" in result.deny
    # Never writable.
    assert {path_rule("Edit", fixtures), path_rule("Write", fixtures)} <= set(result.deny)
    assert {path_rule("Edit", evals), path_rule("Write", evals)} <= set(result.deny)


def test_without_an_opening_the_evals_folder_is_denied_whole(tmp_path: Path) -> None:
    evals = evals_tree(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    result = plan_tools(
        ToolAccess(),
        read_roots=[HOME],
        write_roots=[HOME],
        deny_read=[evals],
        deny_edit=[],
        read_openings=[outside],
    )
    assert list(result.deny) == [
        path_rule("Read", evals), path_rule("Edit", outside), path_rule("Write", outside)
    ]  # fmt: skip


def test_duplicates_are_dropped() -> None:
    result = plan(["Skill", "Skill", "Bash", "Bash"], grants=["Bash"])
    assert list(result.allowed) == [*READ_RULES, "Skill", "Bash"]


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["Bash(a, b),Write"], ["Bash(a, b)", "Write"]),
        (["Write", " Edit , Bash(npm test *) "], ["Write", "Edit", "Bash(npm test *)"]),
        (["Bash(x(y), z),,mcp__*"], ["Bash(x(y), z)", "mcp__*"]),
        ([], []),
        (None, []),
    ],
)
def test_split_tools(values: list[str] | None, expected: list[str]) -> None:
    assert list(split_tools(values)) == expected
