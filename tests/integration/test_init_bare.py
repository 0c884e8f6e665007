"""``python -m pytest_plugin_evals init --bare NAME``: the reference's blank case, byte for
byte, its messages, and what ``init`` refuses in one line (no model needed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import run_command

#: What ``claude plugin eval init --bare mycase`` (Claude Code 2.1.328) writes, observed.
REFERENCE_PROMPT = (
    "---\nmax_turns: 10\nallowed_tools: [Read, Glob, Grep, Skill]\n---\n\n"
    "TODO: describe what the agent should do\n"
)
REFERENCE_CRITERIA = (
    "---\ntype: llm\nweight: 1\n---\n\nTODO: describe what a successful response looks like\n"
)
MANIFEST = '{"name": "plug"}'


def init(root: Path, *args: str) -> pytest.RunResult:
    """``python -m pytest_plugin_evals init ARGS`` from ``root``, run in this process (the
    terminal test below starts the command as a process of its own)."""
    return run_command(root, "init", *args)


@pytest.fixture
def plug(pytester: pytest.Pytester) -> Path:
    pytester.makefile(".json", **{".claude-plugin/plugin": MANIFEST})
    return pytester.path


def test_bare_writes_the_reference_template_and_pytest_says_it_is_blank(
    pytester: pytest.Pytester, plug: Path
) -> None:
    done = init(plug, "--bare", "mycase")
    assert done.ret == 0, done.stderr.str()
    assert done.outlines == [
        "Created evals/mycase/prompt.md and evals/mycase/graders/criteria.md",
        "Next: write the prompt in prompt.md and what a good answer does in "
        "graders/criteria.md, then run: pytest evals/",
    ]
    case = plug / "evals" / "mycase"
    assert case.joinpath("prompt.md").read_bytes() == REFERENCE_PROMPT.encode()
    assert case.joinpath("graders", "criteria.md").read_bytes() == REFERENCE_CRITERIA.encode()
    assert sorted(p.relative_to(case).as_posix() for p in case.rglob("*")) == [
        "graders", "graders/criteria.md", "prompt.md",
    ]  # fmt: skip
    # The blank case is a load error until its TODO is replaced, as with the reference.
    result = pytester.runpytest("evals", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*the prompt is still the blank `init` template*"])


def test_bare_never_replaces_a_case(plug: Path) -> None:
    assert init(plug, "--bare", "mycase").ret == 0
    prompt = plug / "evals" / "mycase" / "prompt.md"
    prompt.write_text("mine\n")
    done = init(plug, "--bare", "mycase")
    assert done.ret == 1
    assert done.errlines == [
        "init: evals/mycase already exists: nothing written (init never replaces a case)"
    ]
    assert prompt.read_text() == "mine\n"
    assert sorted(p.name for p in (plug / "evals").iterdir()) == ["mycase"]


@pytest.mark.parametrize(
    ("layout", "where"),
    [("SKILL", "SKILL.md"), ("skills", "skills/a/SKILL.md"), (None, "tests/ev")],
)
def test_bare_in_a_skill_folder_and_with_eval_dir(
    pytester: pytest.Pytester, layout: str | None, where: str
) -> None:
    args = ["--bare", "c1"]
    if layout is None:  # not a plugin: --eval-dir scaffolds there on purpose
        args += ["--eval-dir", where]
        folder = where
    else:
        pytester.makefile(".md", **{where[:-3]: "---\nname: a\ndescription: d\n---\nbody\n"})
        folder = "evals"
    done = init(pytester.path, *args)
    assert done.ret == 0, done.stderr.str()
    assert done.outlines[0] == (
        f"Created {folder}/c1/prompt.md and {folder}/c1/graders/criteria.md"
    )
    if layout is None:  # a folder not named evals: the next command says how pytest finds it
        assert done.outlines[1].endswith(
            "then run: pytest tests/ev/ -o eval_paths=tests/ev (pytest collects cases from "
            "folders named evals and those eval_paths lists: add eval_paths = tests/ev to "
            "your pytest configuration to drop the -o)"
        )
        (pytester.path / folder / "c1" / "prompt.md").write_text("---\nruns: 1\n---\nhi\n")
        shown = pytester.runpytest("tests/ev/", "-o", "eval_paths=tests/ev", "--collect-only")
        shown.stdout.fnmatch_lines(["*c1*"])


@pytest.mark.parametrize(
    ("args", "said", "status"),
    [
        (["--bare", "../x"], 'init: case name "../x" won\'t work — use letters, digits', 4),
        (["--bare", ".hidden"], 'init: case name ".hidden" won\'t work', 4),
        (["--bare", "a/b"], 'init: case name "a/b" won\'t work', 4),
        (["--bare", "x" * 201], "at most 200 characters", 4),
        (["--bare"], "init: a case name is required for --bare (init --bare NAME)", 4),
        (["mycase"], "init: a case name goes with --bare (init --bare NAME)", 4),
        (
            ["--bare", "--eval-dir", "/tmp/x", "c"],
            "init: --eval-dir must be a relative path inside the plugin (e.g. quality/evals), "
            "not absolute",
            4,
        ),
        (["--bare", "--eval-dir", "../out", "c"], "which leads out of it", 4),
        (["--eval-judge", "gpt"], "init: --eval-judge must be one of claude, anthropic, openai", 4),
        (["--per-skill", "0"], "argument --per-skill: must be a whole number from 1 to 10", 4),
    ],
)
def test_what_init_refuses_is_one_line(plug: Path, args: list[str], said: str, status: int) -> None:
    done = init(plug, *args)
    assert done.ret == status
    assert "Traceback" not in done.stderr.str()
    lines = done.errlines
    if status == 4 and lines[0].startswith("usage:"):  # argparse: its usage, then one line
        lines = lines[-1:]
    assert len(lines) == 1, done.stderr.str()
    assert said in lines[0]
    assert not (plug / "evals").exists()
    assert not (plug.parent / "x").exists() and not (plug.parent / "out").exists()


def test_outside_a_plugin_init_says_why(pytester: pytest.Pytester) -> None:
    done = init(pytester.path, "--bare", "c")
    assert done.ret == 1
    assert done.errlines == [
        f"init: {pytester.path} is not a plugin or skill folder — run "
        "`python -m pytest_plugin_evals init` from the plugin's root folder, or pass "
        "--eval-dir to scaffold here on purpose."
    ]


def test_a_plugin_without_skills_has_nothing_to_draft(plug: Path) -> None:
    (plug / "commands").mkdir()
    (plug / "commands" / "ship.md").write_text("---\ndescription: Ship it.\n---\nShip.\n")
    done = init(plug, "--no-pilot")
    assert done.ret == 1
    assert done.outlines == [
        "init: read plug: no skills, 1 command (ship), no agents, no MCP servers"
    ]
    assert done.errlines == [
        "init: the plugin has no skill (SKILL.md) to draft cases for — write one by hand with: "
        "python -m pytest_plugin_evals init --bare NAME"
    ]


def test_the_judge_comes_from_the_plugins_pytest_ini(plug: Path) -> None:
    (plug / "pytest.ini").write_text("[pytest]\neval_judge = openai\n")
    (plug / "skills" / "a").mkdir(parents=True)
    (plug / "skills" / "a" / "SKILL.md").write_text("---\nname: a\ndescription: d\n---\n")
    done = init(plug, "--no-pilot")
    assert done.ret == 1
    assert "init: drafting with the openai judge (from pytest.ini)" in done.stdout.str()
    assert done.errlines == [
        "init: cannot draft: --eval-judge openai needs a model: pass --eval-judge-model NAME "
        "(the model name your OpenAI-compatible server serves)"
    ]


def test_on_a_terminal_init_says_the_same_and_asks_nothing(plug: Path) -> None:
    import pty

    main, sub = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest_plugin_evals", "init", "--bare", "tty-case"],
            cwd=plug,
            stdin=sub,
            stdout=sub,
            stderr=sub,
            timeout=120,
        )
        os.close(sub)
        sub = -1
        shown = b""
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(main)
        if sub >= 0:
            os.close(sub)
    assert proc.returncode == 0
    assert shown.decode().splitlines()[0] == (
        "Created evals/tty-case/prompt.md and evals/tty-case/graders/criteria.md"
    )
    assert "\x1b[" not in shown.decode()
    assert (plug / "evals" / "tty-case" / "prompt.md").read_text() == REFERENCE_PROMPT


def test_a_folder_init_cannot_write_in_is_one_line(plug: Path) -> None:
    (plug / "evals").write_text("a file where the folder would be\n")
    done = init(plug, "--bare", "c")
    assert done.ret == 1
    (line,) = done.errlines
    assert line.startswith("init: cannot write the case: ")
    assert "evals" in line
    assert (plug / "evals").read_text() == "a file where the folder would be\n"


def test_a_broken_manifest_is_one_line(plug: Path) -> None:
    (plug / ".claude-plugin" / "plugin.json").write_text("{nope\n")
    done = init(plug, "--no-pilot")
    assert done.ret == 1
    assert done.errlines == [
        "init: .claude-plugin/plugin.json:1: invalid plugin manifest: invalid JSON: Expecting "
        "property name enclosed in double quotes"
    ]
