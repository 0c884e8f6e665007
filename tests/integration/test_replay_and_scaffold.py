"""Regrading recorded runs (``--eval-agent replay:<results folder>``) and scaffold scripts."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

PLUGIN_JSON = '{"name": "release-helper", "version": "1.2.0"}'

PROMPT = "---\nruns: 1\n---\nWe fixed two bugs since v1.4.0. What is the next version?\n"

ANSWER = "---\ntype: regex\npattern: '1\\.4\\.1'\n---\n"
MAJOR = "---\ntype: regex\npattern: '2\\.0\\.0'\n---\n"
NOTES = "---\ntype: file_exists\npath: 'notes/*.md'\n---\n"
NOTES_TEXT = (
    "---\ntype: regex\npattern: patch release\n"
    "target: {source: file, path: notes/RELEASE.md}\n---\n"
)
SKILL = "---\ntype: tool_used\ntool: Skill\n---\n"

RULES: list[dict[str, Any]] = [
    {
        "match": "next version",
        "arm": "with",
        "reply": "Ship 1.4.1 next.",
        "tool_calls": [{"name": "Skill", "input": {"skill": "release-helper:next-version"}}],
        "files": {"notes/RELEASE.md": "# 1.4.1\n\nA patch release.\n"},
        "usage": {"input_tokens": 1200, "output_tokens": 40, "cost_usd": 0.0056},
    },
    {"match": "next version", "arm": "without", "reply": "Ship 2.0.0 next."},
]


def make_plugin(pytester: pytest.Pytester, **graders: str) -> None:
    pytester.makefile(".json", **{".claude-plugin/plugin": PLUGIN_JSON})
    pytester.makefile(".md", **{"evals/next/prompt": PROMPT})
    for name, body in graders.items():
        pytester.makefile(".md", **{f"evals/next/graders/{name}": body})


def runs_by_arm(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    (case,) = doc["cases"]
    return {arm: runs[0] for arm, runs in case["arms"].items() if runs}


def verdicts(run: dict[str, Any]) -> dict[str, bool]:
    return {g["name"]: g["passed"] for g in run["graders"]}


@pytest.fixture
def recorded(
    pytester: pytest.Pytester,
    plugin_args: list[str],
    scripted_agent: Callable[[list[dict[str, Any]]], str],
    read_doc: Callable[..., dict[str, Any]],
) -> dict[str, Any]:
    """A session recorded into ``rec/`` with the scripted agent; its JSON document."""
    make_plugin(pytester, answer=ANSWER)
    agent = scripted_agent(RULES)
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent,
        "--eval-output-dir", "rec", "--eval-json", "first.json",
    )  # fmt: skip
    result.assert_outcomes(passed=2)
    return read_doc("first.json")


def test_replay_regrades_the_recorded_runs_with_the_current_graders(
    pytester: pytest.Pytester,
    plugin_args: list[str],
    read_doc: Callable[..., dict[str, Any]],
    recorded: dict[str, Any],
) -> None:
    """A session's kept runs replayed under changed graders: graded anew, with the recorded
    answers, files (none named outside the run), tokens and cost (nothing spent); a run never
    recorded is an error."""
    first = runs_by_arm(recorded)
    assert verdicts(first["with"]) == {"answer": True}
    assert verdicts(first["without"]) == {"answer": False}
    # Every run is kept: trace, created files, metadata.
    (runs,) = (p for p in (pytester.path / "rec" / "runs").iterdir() if p.is_dir())
    assert runs.name.startswith("next-")  # the case's folder: its name and a short hash
    assert sorted(p.name for p in runs.iterdir()) == ["with-1", "without-1"]
    kept = runs / "with-1"
    meta = json.loads((kept / "meta.json").read_text(encoding="utf-8"))
    assert (meta["agent"], meta["finalMessage"]) == ("cmd", "Ship 1.4.1 next.")
    assert (kept / "files" / "notes" / "RELEASE.md").read_text(encoding="utf-8").startswith("# 1")
    trace = (kept / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(trace[0])["name"] == "Skill"
    assert Path(first["with"]["tracePath"]) == kept / "trace.jsonl"
    # Change the graders; remove the agent's rules: an agent started now could not answer.
    graders = pytester.path / "evals" / "next" / "graders"
    (graders / "answer.md").write_text(MAJOR, encoding="utf-8")
    for name, body in (("notes", NOTES), ("notes-text", NOTES_TEXT), ("skill", SKILL)):
        (graders / f"{name}.md").write_text(body, encoding="utf-8")
    (pytester.path / "agent-rules.json").unlink()
    # Names of files outside the run among those it created: never kept, never touched.
    victim = pytester.path / "victim.txt"
    victim.write_text("left alone\n", encoding="utf-8")
    climb = "../" * (len(pytester.path.parts) + 8)
    meta["filesCreated"] = [*meta["filesCreated"], str(victim), f"{climb}{str(victim)[1:]}"]
    (kept / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    # A replay spends nothing: a cost ceiling below the recorded cost stops no run. A second
    # run of each arm was never recorded: an error each.
    rec = (pytester.path / "rec").resolve()
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", f"replay:{rec}", "--eval-json", "second.json",
        "--eval-max-cost-usd", "0.001", "--eval-runs", "2",
    )  # fmt: skip
    # The with arm no longer passes: its recorded answer says 1.4.1, not 2.0.0.
    result.assert_outcomes(failed=1, passed=1, errors=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    second_doc = read_doc("second.json")
    second = runs_by_arm(second_doc)
    assert verdicts(second["with"]) == {
        "answer": False,
        "notes": True,
        "notes-text": True,
        "skill": True,
    }
    # (tool_used on Skill is a with-arm indicator: the without arm has no such verdict.)
    assert verdicts(second["without"]) == {"answer": True, "notes": False, "notes-text": False}
    for arm in ("with", "without"):
        for key in ("answer", "costUsd", "turns", "inputTokens", "outputTokens", "filesCreated"):
            assert second[arm][key] == first[arm][key], (arm, key)
        assert second[arm]["error"] is None
    assert second["with"]["filesCreated"] == ["notes/RELEASE.md"]  # the names outside dropped
    (again,) = (pytester.path / "evals" / "results").iterdir()
    files = again / "runs" / runs.name / "with-1" / "files"
    assert sorted(str(p.relative_to(files)) for p in files.rglob("*") if p.is_file()) == [
        "notes/RELEASE.md"
    ]
    assert victim.read_text(encoding="utf-8") == "left alone\n"
    assert second["with"]["costUsd"] == pytest.approx(0.0056)
    # The footer says the agent's cost was recorded, and that nothing was spent now.
    result.stdout.fnmatch_lines(["1 case(s) · * · $0.01 recorded · $0.00 spent"])
    # The runs that were not recorded: one line each, the session partial, and the RUNS column
    # says the runs that were made, of those selected.
    for arm in ("with", "without"):
        line = f"harness: no recorded run for next [{arm}-2] in {rec}"
        assert line in result.stdout.lines
    assert second_doc["partial"] is True
    assert second_doc["errors"] == {"harness": 2}
    assert "Traceback" not in result.stdout.str()
    result.stdout.fnmatch_lines(["CASE *RUNS*", "next * 2 of 4 made *"])
    assert second_doc["cases"][0]["aggregates"]["runsNotMade"] == 2


def test_replay_of_a_folder_without_recordings_is_one_line(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    make_plugin(pytester, answer=ANSWER)
    (pytester.path / "empty").mkdir()
    for folder in ("/nonexistent", "empty"):
        result = pytester.runpytest("evals", *plugin_args, "--eval-agent", f"replay:{folder}")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert [line for line in result.stderr.lines if line] == [
            f"ERROR: --eval-agent replay:{folder}: no recorded runs there "
            "(expected a results folder holding runs/)"
        ]
        assert "Traceback" not in result.stdout.str()


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


TAMPERINGS = ["files-link", "trace-link", "meta-link", "run-link", "case-link", "hard-link",
              "fifo"]  # fmt: skip


def tamper_with(run: Path, tamper: str, outside: Path) -> tuple[str, bool]:
    """Tamper with a recorded run as ``tamper`` says, with a link to (or a name of) something
    in ``outside``: the line its replay refuses it with, and whether both arms are refused."""
    secret = outside / "secret.txt"
    secret.write_text("1.4.1 is not the agent's answer\n", encoding="utf-8")
    case = run.parent
    name = f"runs/{case.name}/with-1"
    if tamper == "files-link":
        notes = run / "files" / "notes"
        shutil.rmtree(notes)
        notes.symlink_to(outside)
        return f"the recorded run {name} holds a symbolic link (files/notes → {outside})", False
    if tamper in ("trace-link", "meta-link"):
        kept = run / ("trace.jsonl" if tamper == "trace-link" else "meta.json")
        shutil.copyfile(kept, secret)
        kept.unlink()
        kept.symlink_to(secret)
        return f"the recorded run {name} holds a symbolic link ({kept.name} → {secret})", False
    if tamper == "run-link":
        moved = outside / "with-1"
        run.rename(moved)
        run.symlink_to(moved)
        return f"the recorded run {name} is a symbolic link (→ {moved})", False
    if tamper == "case-link":
        moved = outside / case.name
        case.rename(moved)
        case.symlink_to(moved)
        return (
            f"the recorded run {name} lies in a symbolic link (runs/{case.name} → {moved})",
            True,
        )
    if tamper == "hard-link":
        kept = run / "files" / "notes" / "RELEASE.md"
        kept.unlink()
        os.link(secret, kept)
        line = f"the recorded run {name} holds a hard-linked file (files/notes/RELEASE.md, 2 names)"
        return line, False
    os.mkfifo(run / "files" / "pipe")
    return f"the recorded run {name} holds files/pipe, which is not a regular file (a FIFO)", False


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX links and FIFOs")
def test_replay_refuses_a_recorded_run_that_holds_a_link(
    pytester: pytest.Pytester,
    plugin_args: list[str],
    scripted_agent: Callable[[list[dict[str, Any]]], str],
    read_doc: Callable[..., dict[str, Any]],
) -> None:
    """A case per way of tampering with its recorded with-arm run, all replayed in one
    session: each tampered run is refused with its line and graded on nothing, nothing outside
    is touched, and the runs left alone replay as recorded."""
    pytester.makefile(".json", **{".claude-plugin/plugin": PLUGIN_JSON})
    for tamper in TAMPERINGS:
        pytester.makefile(".md", **{f"evals/{tamper}/prompt": PROMPT})
        pytester.makefile(".md", **{f"evals/{tamper}/graders/answer": ANSWER})
    first = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", scripted_agent(RULES), "--eval-output-dir", "rec"
    )
    first.assert_outcomes(passed=2 * len(TAMPERINGS))
    cases = {p.name.rpartition("-")[0]: p for p in (pytester.path / "rec" / "runs").iterdir()}
    lines, refused_both = {}, set()
    for tamper in TAMPERINGS:
        outside = pytester.path / "outside" / tamper
        outside.mkdir(parents=True)
        lines[tamper], both = tamper_with(cases[tamper] / "with-1", tamper, outside)
        if both:
            refused_both.add(tamper)
        pytester.makefile(".md", **{f"evals/{tamper}/graders/notes": NOTES})
    before = snapshot(pytester.path / "outside")
    # Replayed into its own folder: what the session writes there never goes through a link.
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", "replay:rec", "--eval-output-dir", "rec",
        "--eval-json", "again.json",
    )  # fmt: skip
    for tamper, line in lines.items():
        assert f"harness: {line}: refused" in result.stdout.lines, (tamper, result.stdout.str())
    assert snapshot(pytester.path / "outside") == before
    refused = len(TAMPERINGS) + len(refused_both)
    result.assert_outcomes(errors=refused, passed=2 * len(TAMPERINGS) - refused)
    doc = read_doc("again.json")
    assert doc["errors"] == {"harness": refused}
    for again in doc["cases"]:
        (run,) = again["arms"]["with"]
        assert run["infraError"] == "harness", again["name"]
        assert run["graders"] == [], again["name"]  # nothing graded from what a link led to
        (other,) = again["arms"]["without"]
        assert other["infraError"] == ("harness" if again["name"] in refused_both else None)
    assert "Traceback" not in result.stdout.str()


# -- scaffold ---------------------------------------------------------------------------------

CASE_YAML = """schema_version: "1.1"
name: edit-seed
runs: 2
context:
  scaffold_script: setup.sh
execution:
  prompt: Bump the version in the seeded project.
graders:
  - name: seed-not-created
    type: file_exists
    path: seed.txt
  - name: made
    type: file_exists
    path: made.txt
  - name: saw-seed
    type: regex
    pattern: "seed says: v1\\\\.4\\\\.0"
"""

SETUP = 'echo "v1.4.0" > seed.txt\nmkdir -p src\necho "print(1)" > src/app.py\n'

#: Reads the seeded file, writes its own, lists the cwd.
SEED_AGENT = """\
import os, pathlib
seed = pathlib.Path("seed.txt")
text = seed.read_text().strip() if seed.exists() else "<missing>"
pathlib.Path("made.txt").write_text("made")
print(f"seed says: {text}; files: {sorted(os.listdir('.'))}")
"""


FAILING_SETUP = "echo starting\necho boom >&2\nexit 3\n"


def make_scaffold_case(pytester: pytest.Pytester, name: str, setup: str) -> None:
    pytester.makefile(".yaml", **{f"evals/{name}/case": CASE_YAML.replace("edit-seed", name)})
    (pytester.path / "evals" / name / "setup.sh").write_text(setup, encoding="utf-8")


def test_scaffold_runs_in_the_cwd_before_the_agent_only_when_asked(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Callable[..., dict[str, Any]]
) -> None:
    """Without --eval-scaffold a case with a scaffold_script is skipped; with it the script
    seeds each run's cwd before the agent starts, and a script that fails is the run's error,
    graded on nothing, and stays so when the run is replayed."""
    make_scaffold_case(pytester, "edit-seed", SETUP)
    make_scaffold_case(pytester, "bad-seed", FAILING_SETUP)
    script = pytester.path / "seed_agent.py"
    script.write_text(SEED_AGENT, encoding="utf-8")
    agent = "cmd:" + shlex.join([sys.executable, str(script)])
    skipped = pytester.runpytest("evals", *plugin_args, "-rs", "--eval-agent", agent)
    skipped.assert_outcomes(skipped=4)
    skipped.stdout.fnmatch_lines(
        ["SKIPPED * its scaffold_script is not run without --eval-scaffold (it runs as you*"]
    )
    assert not (pytester.path / "seed.txt").exists()

    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-scaffold",
        "--eval-json", "o.json", "--eval-output-dir", "rec",
    )  # fmt: skip
    # seed-not-created fails: the scaffold's files are not created during the run.
    result.assert_outcomes(failed=4)
    cases = {c["name"]: c for c in read_doc("o.json")["cases"]}
    for run in cases["edit-seed"]["arms"]["with"]:
        assert run["error"] is None
        assert "seed says: v1.4.0" in run["answer"]  # the agent saw the scaffold's files
        assert "'src'" in run["answer"]
        assert run["filesCreated"] == ["made.txt"]
        assert verdicts(run) == {"seed-not-created": False, "made": True, "saw-seed": True}
    assert not (pytester.path / "seed.txt").exists()  # it ran in the run's own cwd
    result.stdout.fnmatch_lines(["*run error: scaffold failed (exit 3): boom*"])
    for run in cases["bad-seed"]["arms"]["with"]:
        assert run["error"] == "scaffold failed (exit 3): boom"
        assert run["graders"] == []
        assert run["score"] == 0.0 and run["passed"] is False
        assert run["infraError"] is None
        assert "seed says" not in run["answer"]  # the agent never ran
    assert cases["bad-seed"]["aggregates"]["score"] == 0.0

    # Replayed, the run stays what it was: a scaffold failure, not graded.
    (pytester.path / "evals" / "bad-seed" / "setup.sh").write_text("exit 0\n", encoding="utf-8")
    again = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", f"replay:{pytester.path / 'rec'}",
        "--eval-scaffold", "--eval-json", "again.json",
    )  # fmt: skip
    again.assert_outcomes(failed=4)
    cases = {c["name"]: c for c in read_doc("again.json")["cases"]}
    for run in cases["bad-seed"]["arms"]["with"]:
        assert run["error"] == "scaffold failed (exit 3): boom"
        assert run["graders"] == []


FOUR_FORMATS = {
    ".claude-plugin/plugin.json": '{"name": "kit"}',
    "evals/dir case/prompt.md": "---\nruns: 1\n---\nFormat dir: say done.\n",
    "evals/dir case/graders/done.md": "---\ntype: regex\npattern: done\n---\n",
    "evals/evals.json": json.dumps(
        {"cases": [{"name": "json case", "prompt": "Format json: say done.", "expect": {
            "contains": ["done"]}}]}
    ),
    "evals/golden/smoke.yaml": (
        "name: smoke\ncases:\n  - name: sy case\n    input: 'Format sy: say done.'\n"
        "    expected_contains: [done]\n"
    ),
    "package.json": json.dumps(
        {"name": "kit", "ai": {"evals": [{"input": "Format pkg: say done.",
                                          "expected": [{"includes": "done"}]}]}}
    ),
}  # fmt: skip


def test_every_format_records_in_the_session_folder_and_replays_from_it(
    pytester: pytest.Pytester,
    plugin_args: list[str],
    scripted_agent: Callable[[list[dict[str, Any]]], str],
    read_doc: Callable[..., dict[str, Any]],
) -> None:
    for name, text in FOUR_FORMATS.items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    agent = scripted_agent([{"match": "Format", "reply": "done"}])
    args = ["evals", "package.json", *plugin_args, "--eval-ablation", "none"]
    first = pytester.runpytest(*args, "--eval-agent", agent, "--eval-json", "first.json")
    first.assert_outcomes(passed=4)
    doc = read_doc("first.json")
    traces = [Path(r["tracePath"]) for c in doc["cases"] for r in c["arms"]["with"]]
    folders = {trace.parents[3] for trace in traces}
    assert len(traces) == 4 and len(folders) == 1  # one results folder for every format
    (folder,) = folders
    assert (folder / "aggregate-result.json").is_file()
    assert folder.parent == pytester.path / "evals" / "results"
    (pytester.path / "agent-rules.json").unlink()  # an agent started now could not answer
    again = pytester.runpytest(*args, f"--eval-agent=replay:{folder}", "--eval-json", "second.json")
    again.assert_outcomes(passed=4)
    assert read_doc("second.json")["errors"] == {}


def test_a_shared_output_folder_never_mixes_two_sessions(
    pytester: pytest.Pytester,
    plugin_args: list[str],
    scripted_agent: Callable[[list[dict[str, Any]]], str],
) -> None:
    for name in ("alpha", "beta"):
        folder = pytester.path / "evals" / name
        (folder / "graders").mkdir(parents=True)
        (folder / "prompt.md").write_text(f"---\nruns: 1\n---\nSay {name}.\n", "utf-8")
        (folder / "graders" / "ok.md").write_text(f"---\ntype: regex\npattern: {name}\n---\n")
    agent = scripted_agent([{"match": "Say", "reply": "alpha beta"}])
    args = ["evals", *plugin_args, "--eval-agent", agent, "--eval-output-dir", "out"]
    pytester.runpytest(*args).assert_outcomes(passed=2)
    pytester.runpytest(*args, "-k", "alpha").assert_outcomes(passed=1)
    kept = sorted(p.name.rpartition("-")[0] for p in (pytester.path / "out" / "runs").iterdir()
                  if p.is_dir())  # fmt: skip
    assert kept == ["alpha"]  # the first session's beta run is gone with its session
