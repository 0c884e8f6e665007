"""An A/B of the plugin against another version of itself: ``--eval-baseline-plugin``.

The plugin lives in a subfolder of a git repository made here with two commits; between them
its SKILL.md learned to wave. The agent reads the SKILL.md of the plugin its arm loads
(``$EVAL_PLUGIN_DIR``), so what it answers says which version it was given.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from statistics import mean
from typing import Any

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep

from tests.helpers import git, write_tree

#: Answers from the SKILL.md it is given: the skill that says "wave" is called (a Skill tool
#: call) and waves; "please" comes on run 1, and on run 2 too with that skill.
AGENT = """\
import json, os, sys
sys.stdin.read()
plugin = os.environ["EVAL_PLUGIN_DIR"]
skill = ""
if plugin:
    with open(os.path.join(plugin, "skills", "greet", "SKILL.md"), encoding="utf-8") as fh:
        skill = fh.read()
run = int(os.environ["EVAL_RUN"])
words = ["hello"]
if "wave" in skill:
    words.append("*waves*")
    with open(os.environ["EVAL_TRACE_FILE"], "a", encoding="utf-8") as fh:
        call = {"type": "tool_call", "name": "Skill", "input": {"skill": "demo:greet"}}
        fh.write(json.dumps(call) + "\\n")
if run == 1 or ("wave" in skill and run == 2):
    words.append("please")
print(" ".join(words), f"| arm={os.environ['EVAL_ARM']} dir={plugin} home={os.environ['HOME']}")
"""

OLD_SKILL = "---\nname: greet\ndescription: Greets.\n---\nSay hello.\n"
NEW_SKILL = "---\nname: greet\ndescription: Greets.\n---\nSay hello, and wave.\n"

CASE = {
    "plugin/evals/greet/prompt.md": "---\nruns: 3\n---\nGreet me.\n",
    "plugin/evals/greet/graders/waves.md": "---\ntype: regex\npattern: waves\n---\n",
    "plugin/evals/greet/graders/polite.md": "---\ntype: regex\npattern: please\n---\n",
    "plugin/evals/greet/graders/skill.md": "---\ntype: tool_used\ntool: Skill\n---\n",
}

#: Run scores (waves, polite, skill: equal weights) by the agent's rules above.
WITH_SCORES = [1.0, 1.0, 2 / 3]  # the new SKILL.md: waves and calls the skill
BASELINE_SCORES = [1 / 3, 0.0, 0.0]  # the old one: only "please" on run 1


def manifest(version: str) -> str:
    return json.dumps({"name": "demo", "version": version})


@pytest.fixture
def plugin_repo(pytester: pytest.Pytester) -> Path:
    """A repository whose plugin (in ``plugin/``) changed its SKILL.md in the last commit."""
    root = pytester.path
    git(root, "init", "-q")
    write_tree(
        root,
        {
            "README.md": "a plugin\n",
            "plugin/.claude-plugin/plugin.json": manifest("1.0.0"),
            "plugin/skills/greet/SKILL.md": OLD_SKILL,
            **CASE,
        },
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "greet")
    write_tree(
        root,
        {
            "plugin/.claude-plugin/plugin.json": manifest("1.1.0"),
            "plugin/skills/greet/SKILL.md": NEW_SKILL,
        },
    )
    git(root, "commit", "-q", "-a", "-m", "greet: wave")
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    return root


def agent_value(root: Path) -> str:
    import shlex
    import sys

    return "cmd:" + shlex.join([sys.executable, str(root / "agent.py")])


def run_ab(pytester: pytest.Pytester, root: Path, baseline: str, *args: str) -> Any:
    return pytester.runpytest(
        "plugin/evals",
        "-v",
        "--eval-agent",
        agent_value(root),
        "--eval-baseline-plugin",
        baseline,
        "--eval-threshold",
        "0.6",  # runs are measurements: the with arm's mean decides (with both arms': 0.5)
        "--eval-json",
        "out.json",
        *args,
    )


def answer_field(run: dict[str, Any], name: str) -> str:
    found = re.search(rf"{name}=(\S*)", run["answer"])
    assert found is not None, run["answer"]
    return found.group(1)


def check_ab(doc: dict[str, Any], with_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What every A/B document holds: the arms, Δ = with − baseline with its interval, and
    every grader scored in both arms. Returns the case and its baseline runs."""
    assert doc["suite"]["ablation"] == "with-baseline"
    (case,) = doc["cases"]
    assert set(case["arms"]) == {"with", "baseline"}
    with_runs, base_runs = case["arms"]["with"], case["arms"]["baseline"]
    assert [r["arm"] for r in with_runs] == ["with"] * 3
    assert [r["arm"] for r in base_runs] == ["baseline"] * 3
    assert [r["nodeid"].rsplit("::", 1)[1] for r in base_runs] == [
        f"greet[baseline-{n}]" for n in (1, 2, 3)
    ]
    # The with arm loaded the plugin under test; its answers wave.
    assert {answer_field(r, "dir") for r in with_runs} == {str(with_dir)}
    assert all("*waves*" in r["answer"] for r in with_runs)
    assert not any("*waves*" in r["answer"] for r in base_runs)
    # Every run had a home of its own, none of them yours.
    homes = [answer_field(r, "home") for r in with_runs + base_runs]
    assert len(set(homes)) == 6
    assert all(not Path(h).is_relative_to(with_dir) for h in homes)

    assert [r["score"] for r in with_runs] == pytest.approx(WITH_SCORES)
    assert [r["score"] for r in base_runs] == pytest.approx(BASELINE_SCORES)
    # Both arms load a plugin: the skill grader is scored in both (no indicator in an A/B).
    for run in with_runs + base_runs:
        (skill,) = [v for v in run["graders"] if v["name"] == "skill"]
        assert skill["scored"] is True and skill["withOnly"] is False
    agg = case["aggregates"]
    assert agg["score"] == pytest.approx(mean(WITH_SCORES))
    assert agg["scoreWithout"] == pytest.approx(mean(BASELINE_SCORES))  # the second arm's
    assert agg["delta"] == pytest.approx(mean(WITH_SCORES) - mean(BASELINE_SCORES))
    newcombe = confint_proportions_2indep(
        sum(WITH_SCORES),
        len(WITH_SCORES),
        sum(BASELINE_SCORES),
        len(BASELINE_SCORES),
        method="newcomb",
        compare="diff",
    )
    assert agg["deltaInterval"] == pytest.approx(list(newcombe))
    assert doc["aggregates"]["meanDelta"] == pytest.approx(agg["delta"])
    return case, base_runs


def check_terminal(result: Any, plugin_args: list[str], baseline_line: str) -> None:
    result.assert_outcomes(passed=6)
    out = result.stdout.str()
    for label in ("with-1", "with-3", "baseline-1", "baseline-3"):
        item = re.escape(f"plugin/evals/greet::greet[{label}]")
        assert re.search(rf"^(?:{item} PASSED|\[gw\d\] .* PASSED {item})", out, re.MULTILINE), label
    assert "without-" not in result.stdout.str()
    result.stdout.re_match_lines([r"CASE +WITH +BASE +Δ +RUNS +COST +NOTES$"])
    result.stdout.re_match_lines([r"greet +0\.89 +0\.11 +\+0\.78 "])
    result.stdout.fnmatch_lines([baseline_line])


@pytest.mark.workers
def test_ab_against_a_git_ref(
    pytester: pytest.Pytester, plugin_repo: Path, plugin_args: list[str], read_doc: Any
) -> None:
    """An A/B against ``git:HEAD~1``: its arms, Δ and verdict in the terminal, the document
    (which reads back as written) and the report; one checkout for the session, whichever
    process made it, gone at its end; the repository untouched."""
    head_before = git(plugin_repo, "rev-parse", "HEAD")
    old = git(plugin_repo, "rev-parse", "HEAD~1")
    result = run_ab(
        pytester, plugin_repo, "git:HEAD~1", "--eval-report", "report.html",
        "--eval-gate", "better", *plugin_args,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK  # the A/B's verdict is better: the gate passes
    check_terminal(result, plugin_args, f"BASE: demo 1.0.0 from git:HEAD~1 ({old[:12]})*")
    result.stdout.re_match_lines(
        [
            r"verdicts \(Δ = WITH − BASE, 95%, equivalent within ±0\.10\): suite mean Δ "
            r"better \(p 0\.\d+\)",
            r"cases: 1 better \(greet\) — false discovery rate .*",
        ]
    )
    doc = read_doc()
    assert doc["cases"][0]["aggregates"]["deltaDecision"]["verdict"] == "better"
    _, base_runs = check_ab(doc, plugin_repo / "plugin")
    assert doc["suite"]["baselinePlugin"] == {
        "spec": "git:HEAD~1",
        "name": "demo",
        "version": "1.0.0",
        "path": "plugin",  # the plugin's subfolder, taken at that commit
        "commit": old,
    }
    assert doc["suite"]["plugins"] == [
        {"name": "demo", "version": "1.1.0", "path": str(plugin_repo / "plugin")}
    ]
    # One checkout for the session, whichever process made it, and gone at its end.
    (checkout,) = {answer_field(r, "dir") for r in base_runs}
    assert not Path(checkout).is_relative_to(plugin_repo)
    assert not Path(checkout).exists()
    # The repository was not touched: no worktree, same HEAD, nothing changed.
    assert git(plugin_repo, "rev-parse", "HEAD") == head_before
    assert len(git(plugin_repo, "worktree", "list").splitlines()) == 1
    assert (
        git(plugin_repo, "status", "--porcelain", "--", "plugin/skills", "plugin/.claude-plugin")
        == ""
    )
    # The HTML report names the baseline arm.
    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert "Baseline plugin (demo v1.0.0 from git:HEAD~1 (" + old[:12] + "))" in page
    assert "Baseline (no plugin)" not in page
    # The document reads back with its baseline arm, and is written again the same.
    from pytest_plugin_evals.reporting.document import document_json, load_document

    again = load_document(doc)
    assert again.baseline and again.two_arm
    (read,) = again.cases
    assert read.second_arm == "baseline" and len(read.without_runs) == 3
    assert again.suite.baseline_plugins[0].commit == old
    written = document_json(again)
    assert written["suite"]["baselinePlugin"] == doc["suite"]["baselinePlugin"]
    assert written["cases"][0]["arms"].keys() == {"with", "baseline"}


def test_ab_against_a_folder(
    pytester: pytest.Pytester, plugin_repo: Path, plugin_args: list[str], read_doc: Any
) -> None:
    old = pytester.path / "released" / "demo"
    write_tree(
        old,
        {
            ".claude-plugin/plugin.json": manifest("0.9.0"),
            "skills/greet/SKILL.md": OLD_SKILL,
        },
    )
    result = run_ab(pytester, plugin_repo, "released/demo", *plugin_args)
    assert result.ret == pytest.ExitCode.OK
    check_terminal(result, plugin_args, f"BASE: demo 0.9.0 from {old} · Δ = WITH − BASE")
    doc = read_doc()
    _, base_runs = check_ab(doc, plugin_repo / "plugin")
    assert doc["suite"]["baselinePlugin"] == {
        "spec": str(old),
        "name": "demo",
        "version": "0.9.0",
        "path": str(old),
    }
    # The folder is loaded where it is (and left there).
    assert {answer_field(r, "dir") for r in base_runs} == {str(old)}
    assert (old / "skills/greet/SKILL.md").is_file()


def test_ini_twin_and_selecting_the_baseline_arm(
    pytester: pytest.Pytester, plugin_repo: Path, read_doc: Any
) -> None:
    pytester.makeini("[pytest]\neval_baseline_plugin = git:HEAD~1\n")
    result = pytester.runpytest(
        "plugin/evals", "-p", "no:cacheprovider", "-v", "--eval-agent", agent_value(plugin_repo),
        "--eval-json", "out.json", "-m", "evals(arm='baseline')",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=3, deselected=3)
    doc = read_doc()
    assert doc["suite"]["baselinePlugin"]["spec"] == "git:HEAD~1"
    (case,) = doc["cases"]
    assert case["arms"]["with"] == [] and len(case["arms"]["baseline"]) == 3


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("git:no-such-ref", "--eval-baseline-plugin git:no-such-ref: no commit 'no-such-ref' in "
                            "the git repository {root}"),
    ],
    ids=["unknown-ref"],  # the other lines: tests/unit/test_baseline_spec.py
)  # fmt: skip
@pytest.mark.workers
def test_a_bad_ref_is_one_usage_line(
    pytester: pytest.Pytester, plugin_args: list[str], value: str, message: str
) -> None:
    root = pytester.path
    git(root, "init", "-q")
    write_tree(root, {"README.md": "first\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    write_tree(
        root,
        {
            "plugin/.claude-plugin/plugin.json": manifest("1.0.0"),
            "plugin/skills/greet/SKILL.md": NEW_SKILL,
            **CASE,
            "agent.py": AGENT,
        },
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "plugin")
    line = message.format(root=root, short=git(root, "rev-parse", "HEAD~1")[:12])
    result = pytester.runpytest(
        "plugin/evals", *plugin_args, "--eval-agent", agent_value(root),
        "--eval-baseline-plugin", value,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.assert_outcomes()  # no item ran
    output = result.stdout.str() + result.stderr.str()
    assert output.count(line) == 1, output
    assert f"ERROR: {line}" in result.stderr.lines
    assert "Traceback" not in output


def test_a_plugin_outside_git_is_one_usage_line(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    root = pytester.path
    write_tree(root, {"plugin/.claude-plugin/plugin.json": manifest("1.0.0"), **CASE})
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    if subprocess.run(["git", "-C", str(root), "rev-parse"], capture_output=True).returncode == 0:
        pytest.skip("the temporary folder is inside a git repository")
    result = pytester.runpytest(
        "plugin/evals", *plugin_args, "--eval-agent", agent_value(root),
        "--eval-baseline-plugin", "git:HEAD",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    line = (
        f"ERROR: --eval-baseline-plugin git:HEAD: the plugin demo at {root / 'plugin'} is not "
        "in a git repository"
    )
    assert line in result.stderr.lines
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_manifest_that_is_a_link_in_the_ref_is_one_usage_line(pytester: pytest.Pytester) -> None:
    root = pytester.path
    git(root, "init", "-q")
    write_tree(
        root,
        {
            "elsewhere.json": manifest("9.9.9"),
            "plugin/skills/greet/SKILL.md": OLD_SKILL,
            **CASE,
            "agent.py": AGENT,
        },
    )
    (root / "plugin/.claude-plugin").mkdir(parents=True)
    (root / "plugin/.claude-plugin/plugin.json").symlink_to(root / "elsewhere.json")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "linked manifest")
    (root / "plugin/.claude-plugin/plugin.json").unlink()
    write_tree(root, {"plugin/.claude-plugin/plugin.json": manifest("1.1.0")})
    git(root, "commit", "-q", "-a", "-m", "a real manifest")
    short = git(root, "rev-parse", "HEAD~1")[:12]
    result = pytester.runpytest(
        "plugin/evals", "-p", "no:cacheprovider", "--eval-agent", agent_value(root),
        "--eval-baseline-plugin", "git:HEAD~1",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    line = (
        f"--eval-baseline-plugin git:HEAD~1: plugin/.claude-plugin/plugin.json in "
        f"HEAD~1 ({short}) is a symbolic link: a plugin's manifest must be a file of the commit"
    )
    assert f"ERROR: {line}" in result.stderr.lines, result.stderr.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
