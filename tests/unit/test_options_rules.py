"""The options read into settings by the core, called directly (``settings.options``): where a
value was given (command line over ini file), the checks of one value, and the rules between
options, each a line naming the options as they were given. That such a line is pytest's usage
error, without a traceback: ``tests/unit/test_options_declared.py``."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.settings import EvalSettings, from_the_start
from pytest_plugin_evals.settings.options import OPTIONS, given_of, settings_from
from pytest_plugin_evals.settings.parsers import Given, Whole

BY_FLAG = {o.flag: o for o in OPTIONS}


def read(folder: Path, *flags: tuple[str, Any], ini: tuple[str, Any] | None = None) -> EvalSettings:
    """The settings of these options given on the command line (and one in the ini file)."""
    given: dict[Any, Given] = {}
    for flag, raw in flags:
        given[BY_FLAG[flag].key] = Given(raw, flag, True, folder, folder)
    if ini is not None:
        option = BY_FLAG[ini[0]]
        given[option.key] = Given(ini[1], f"ini {option.ini}", False, folder, folder)
    return settings_from(given)


def plugin_folder(root: Path) -> Path:
    (root / "plugin" / ".claude-plugin").mkdir(parents=True)
    (root / "plugin" / ".claude-plugin" / "plugin.json").write_text('{"name": "p"}\n', "utf-8")
    (root / "plugin" / "skills").mkdir()
    return root / "plugin"


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        ([("--eval-baseline-plugin", "plugin")],
         "--eval-aa and --eval-baseline-plugin cannot be given together: an A/A session's second "
         "arm loads the plugin under test, an A/B's another plugin"),
        ([("--eval-ablation", "none")],
         "--eval-aa needs two arms, but the ablation is none (one arm, nothing to compare)"),
        ([("--eval-reuse", "last")],
         "--eval-aa and --eval-reuse cannot be given together: both arms of an A/A load the "
         "plugin under test, whose runs are never reused"),
        ([("--eval-agent", "replay:last")],
         "--eval-aa needs runs made now: a replay has no second arm's runs of the plugin under "
         "test to replay"),
    ],
)  # fmt: skip
def test_what_an_aa_session_cannot_combine_with_is_one_line(
    tmp_path: Path, flags: list[tuple[str, str]], line: str
) -> None:
    plugin_folder(tmp_path)
    assert read(tmp_path, ("--eval-aa", True)).aa
    with pytest.raises(Whole) as raised:
        read(tmp_path, ("--eval-aa", True), *flags)
    assert str(raised.value) == line


@pytest.mark.parametrize(
    ("value", "line"),
    [
        ("nowhere", "--eval-baseline-plugin must be a plugin folder or git:REF (got 'nowhere': "
         "no such folder)"),
        ("plugin/skills", "--eval-baseline-plugin must be a plugin folder or git:REF (got "
         "'plugin/skills': no .claude-plugin/plugin.json in that folder)"),
        ("git:", '--eval-baseline-plugin git: needs a commit, branch or tag, e.g. "git:HEAD~1" '
         "(got 'git:')"),
        ("git:--output=x", '--eval-baseline-plugin git: needs a commit, branch or tag, e.g. '
         "\"git:HEAD~1\" (got 'git:--output=x')"),
    ],
    ids=["missing-folder", "not-a-plugin", "empty-ref", "option-as-ref"],
)  # fmt: skip
def test_a_bad_baseline_plugin_is_one_line(tmp_path: Path, value: str, line: str) -> None:
    plugin_folder(tmp_path)
    with pytest.raises(Whole) as raised:
        read(tmp_path, ("--eval-baseline-plugin", value))
    assert str(raised.value) == line


def test_a_baseline_plugin_is_its_folder_or_a_ref(tmp_path: Path) -> None:
    folder = plugin_folder(tmp_path)
    assert read(tmp_path, ("--eval-baseline-plugin", " plugin ")).baseline_plugin == str(folder)
    assert read(tmp_path, ("--eval-baseline-plugin", "git: v1 ")).baseline_plugin == "git:v1"
    with pytest.raises(Whole, match=r"^--eval-baseline-plugin needs two arms, but the ablation"):
        read(tmp_path, ("--eval-baseline-plugin", "plugin"), ("--eval-ablation", "none"))


def test_the_rules_between_options_name_them_as_given(tmp_path: Path) -> None:
    with pytest.raises(Whole, match=r"^--eval-fail-on-regression needs --eval-compare \(the"):
        read(tmp_path, ("--eval-fail-on-regression", True))
    assert read(tmp_path, ("--eval-fail-on-regression", True), ("--eval-compare", "last")).compare
    (tmp_path / "out" / "runs").mkdir(parents=True)
    with pytest.raises(Whole, match=r"^ini eval_reuse: .* is this session's own results folder"):
        read(tmp_path, ("--eval-output-dir", "out"), ini=("--eval-reuse", "out"))
    with pytest.raises(Whole, match=r"^--eval-agent and --eval-agents cannot be given together"):
        read(tmp_path, ("--eval-agent", "claude"), ("--eval-agents", ["claude,codex"]))


def test_one_agent_on_the_command_line_wins_over_several_in_the_ini_file(tmp_path: Path) -> None:
    found = read(tmp_path, ("--eval-agent", "codex"), ini=("--eval-agents", ["claude,codex"]))
    assert (found.agent, found.agents) == ("codex", ())


def test_chosen_or_defaulted_is_told_apart(tmp_path: Path) -> None:
    assert (read(tmp_path).threshold_given, read(tmp_path).judge_given) == (False, False)
    chosen = read(tmp_path, ("--eval-threshold", "1"), ("--eval-judge", "claude"))
    assert (chosen.threshold_given, chosen.judge_given) == (True, True)


def test_a_value_is_given_on_the_command_line_else_in_the_ini_file(tmp_path: Path) -> None:
    option, ini_folder = BY_FLAG["--eval-threshold"], tmp_path / "ini"
    from_cli = given_of(option, "0.5", "0.7", tmp_path, ini_folder)
    assert from_cli == Given("0.5", "--eval-threshold", True, tmp_path, tmp_path)
    from_ini = given_of(option, None, "0.7", tmp_path, ini_folder)
    assert from_ini == Given("0.7", "ini eval_threshold", False, tmp_path, ini_folder)
    assert given_of(option, "", "0.7", tmp_path, ini_folder) is None  # given empty: not read
    assert given_of(option, None, "", tmp_path, None) is None
    assert given_of(option, None, "0.7", tmp_path, None) == Given(
        "0.7", "ini eval_threshold", False, tmp_path, tmp_path
    )


def test_an_eval_session_from_the_start() -> None:
    """An eval option given, or pytest-xdist's workers to start (its controller collects
    nothing): the controller's hooks are registered before any item; else at the first eval
    item (``--collect-only`` under ``-n`` starts no worker)."""
    plain, given = EvalSettings(), EvalSettings(runs=3)
    assert from_the_start(given, "no", False)
    assert from_the_start(plain, "load", False)
    assert not from_the_start(plain, "no", False)
    assert not from_the_start(plain, "load", True)


#: What --eval-runs accepts, as its error says.
RUNS_ACCEPTS = "a whole number from 1 to 50, auto or auto:MAX (MAX from 2 to 50)"


@pytest.mark.parametrize(
    ("flag", "raw", "from_ini", "line"),
    [
        ("--eval-threshold", "2", False,
         "--eval-threshold must be a number between 0 and 1 (got '2')"),
        ("--eval-runs", "0", False, f"--eval-runs must be {RUNS_ACCEPTS} (got '0')"),
        ("--eval-runs", "1.5", False, f"--eval-runs must be {RUNS_ACCEPTS} (got '1.5')"),
        ("--eval-runs", "auto:1", False, f"--eval-runs must be {RUNS_ACCEPTS} (got 'auto:1')"),
        ("--eval-ablation", "both", False, '--eval-ablation must be "none" or "with-without"*'),
        ("--eval-json", "out.txt", False, "--eval-json must name a .json file (got 'out.txt')"),
        ("--eval-margin", "2", False,
         "--eval-margin must be a number between 0 and 1 (got '2')"),
        ("--eval-gate", "maybe", False,
         "--eval-gate must be not-worse or better (got 'maybe')"),
        ("--eval-gate", "sometimes", True,
         "ini eval_gate must be not-worse or better (got 'sometimes')"),
        ("--eval-margin", "wide", True,
         "ini eval_margin must be a number between 0 and 1 (got 'wide')"),
        ("--eval-trigger-threshold", "2", False,
         "--eval-trigger-threshold must be a number between 0 and 1 (got '2')"),
        ("--eval-agent", "bogus", False,
         '--eval-agent must be one of "claude", "copilot", "codex", "opencode", "gemini", '
         '"qwen", "cmd:<command line>"*'),
        ("--eval-agent", "cmd:", False,
         '--eval-agent cmd: needs a command line, e.g. "cmd:./my-agent --fast"'),
        ("--eval-agent", 'cmd:"unclosed', False,
         "--eval-agent cmd: cannot split the command line: No closing quotation"),
        ("--eval-agent", "py:justamodule", False,
         '--eval-agent py: needs "py:<module>:<function>" (got "py:justamodule")'),
        ("--eval-min-effect", "0", False,
         "--eval-min-effect must be a number above 0, at most 1 (got '0')"),
        ("--eval-report-url", "javascript:alert(1)", False,
         "--eval-report-url must be an http:// or https:// address (got 'javascript:alert(1)')"),
    ],
)  # fmt: skip
def test_a_bad_value_is_one_line_naming_the_option_as_given(
    tmp_path: Path, flag: str, raw: str, from_ini: bool, line: str
) -> None:
    """(That such a line is pytest's usage error: tests/unit/test_options_declared.py.)"""
    with pytest.raises(Whole) as raised:
        read(tmp_path, ini=(flag, raw)) if from_ini else read(tmp_path, (flag, raw))
    assert fnmatch.fnmatchcase(str(raised.value), line), str(raised.value)
    assert "\n" not in str(raised.value)
