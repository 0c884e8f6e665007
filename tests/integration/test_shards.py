"""``--eval-shard K/N`` and ``python -m pytest_plugin_evals merge``: a suite run as separate
shard sessions, merged, gives what one session gives."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.__main__ import main
from pytest_plugin_evals.settings.parsers import SHARD_VARIABLES
from tests.helpers import write_tree

#: A deterministic agent: its answer depends on the case, the arm and the run number only.
AGENT = """\
import hashlib, json, os, sys
sys.stdin.read()
case, arm, run = os.environ["EVAL_CASE"], os.environ["EVAL_ARM"], os.environ["EVAL_RUN"]
h = int(hashlib.sha256(f"{case}|{arm}|{run}".encode()).hexdigest(), 16)
bias = 4 if arm == "with" else 2
words = ["alpha" if h % bias else "", "beta" if (h // 7) % 3 else ""]
if case.endswith("05") and arm == "with":
    words = []  # this case never answers with the plugin: below any threshold
with open(os.environ["EVAL_TRACE_FILE"], "a", encoding="utf-8") as trace:
    usage = {"type": "usage", "input_tokens": 100, "output_tokens": 10, "cost_usd": 0.001}
    trace.write(json.dumps(usage) + "\\n")
print(" ".join(w for w in words if w) or "nothing")
"""

GRADER = "---\ntype: regex\npattern: {word}\n---\n"


def make_suite(pytester: pytest.Pytester, cases: int = 30, folders: int = 4) -> str:
    """A two-arm suite: ``folders`` directory cases and the rest in evals.json; the agent."""
    files = {
        ".claude-plugin/plugin.json": '{"name": "demo", "version": "1.0.0"}',
        "agent.py": AGENT,
    }
    listed = [
        {
            "name": f"case-{i:02d}",
            "prompt": f"Question {i}",
            "expect": {"contains": ["alpha", "beta"]},
        }
        for i in range(folders, cases)
    ]
    files["evals/evals.json"] = json.dumps({"cases": listed})
    for i in range(folders):
        files[f"evals/case-{i:02d}/prompt.md"] = f"Question {i} in its own folder\n"
        files[f"evals/case-{i:02d}/graders/alpha.md"] = GRADER.format(word="alpha")
        files[f"evals/case-{i:02d}/graders/beta.md"] = GRADER.format(word="beta")
    write_tree(pytester.path, files)
    return f"cmd:{sys.executable} agent.py"


def read(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def outcome(doc: dict[str, Any]) -> dict[str, Any]:
    """Per case: its aggregates (but timing) and each run's score and verdicts, by node id."""
    found = {}
    for case in doc["cases"]:
        aggregates = {k: v for k, v in case["aggregates"].items() if k != "latency"}
        if "efficiency" in aggregates:  # the runs' times are the clock's
            aggregates["efficiency"] = {
                k: v for k, v in aggregates["efficiency"].items() if k != "duration"
            }
        runs = {
            arm: [(r["nodeid"], r["score"], [(g["name"], g["passed"]) for g in r["graders"]])
                  for r in runs]
            for arm, runs in case["arms"].items()
        }  # fmt: skip
        found[case["name"]] = (aggregates, runs)
    return found


def merge(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """``python -m pytest_plugin_evals merge`` in a process of its own, as users run it."""
    return pytester.run(sys.executable, "-m", "pytest_plugin_evals", "merge", *args)


def merge_here(*args: str) -> tuple[int, list[str], list[str]]:
    """The same command's ``main``, called in this process: its exit status, its output lines
    and its error lines."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["merge", *args])
    return status, out.getvalue().splitlines(), err.getvalue().splitlines()


#: The cases of the sharded suite: two per shard.
CASES = 6


def test_three_shards_merged_give_the_unsharded_session(pytester: pytest.Pytester) -> None:
    """Three shard sessions (one under two xdist workers), merged: the unsharded session's
    cases, runs, verdicts and aggregates; a partial merge, a folder that is no shard, and a
    replay of the merged folder."""
    agent = make_suite(pytester, cases=CASES)
    common = ["evals", "-p", "no:cacheprovider", "--eval-agent", agent, "--eval-runs", "2",
              "--eval-threshold", "0.5"]  # fmt: skip
    whole = pytester.runpytest(*common, "-n0", "--eval-output-dir", "whole")
    # Three separate sessions and folders; with and without xdist workers.
    runs = {
        k: pytester.runpytest(
            *common, n, "--eval-shard", f"{k}/3", "--eval-output-dir", f"shard-{k}"
        )
        for k, n in ((1, "-n0"), (2, "-n2"), (3, "-n0"))
    }
    expected = read(pytester.path / "whole" / "aggregate-result.json")
    assert len(expected["cases"]) == CASES
    assert "shard" not in expected
    shard_docs = {k: read(pytester.path / f"shard-{k}" / "aggregate-result.json") for k in runs}
    # Every case ran in exactly one shard, with both arms and all its runs.
    names = [c["name"] for doc in shard_docs.values() for c in doc["cases"]]
    assert sorted(names) == sorted(c["name"] for c in expected["cases"])
    for k, doc in shard_docs.items():
        plan = doc["shard"]
        assert (plan["index"], plan["total"], plan["weights"]) == (k, 3, "runs")
        assert [c["name"] for c in plan["suiteCases"]] == [f"case-{i:02d}" for i in range(CASES)]
        assert all(c["runs"] == 4 and c["cost"] == 4000 for c in plan["suiteCases"])
        assert plan["settings"]["threshold"] == 0.5
        assert plan["version"]
        mine = [c["name"] for c in doc["shard"]["suiteCases"] if c["shard"] == k]
        assert sorted(c["name"] for c in doc["cases"]) == sorted(mine)
        assert len(mine) == CASES // 3  # balanced: cases of equal cost
        assert all(len(c["arms"]["with"]) == len(c["arms"]["without"]) == 2 for c in doc["cases"])
        line = f"shard {k}/3: {len(mine)} of the {CASES} selected case(s)"
        assert line in runs[k].stdout.str()
    scores = {c["name"]: c["aggregates"]["score"] for c in expected["cases"]}
    below = sorted(c["name"] for c in expected["cases"] if not c["aggregates"]["passed"])
    assert "case-05" in below
    for k, doc in shard_docs.items():  # a shard fails when it holds a case below the threshold
        assert runs[k].ret == (1 if {c["name"] for c in doc["cases"]} & set(below) else 0)
    deselected = (CASES - CASES // 3) * 2 * 2  # -n0: pytest counts them (two arms, two runs)
    assert runs[1].parseoutcomes().get("deselected") == deselected

    merged = merge(pytester, "shard-1", "shard-2", "shard-3", "--output-dir", "merged")
    assert merged.ret == whole.ret == 1
    doc = read(pytester.path / "merged" / "aggregate-result.json")
    assert outcome(doc) == outcome(expected)
    for key in ("casesTotal", "casesPassed", "overallScore", "overallPassRate", "meanDelta",
                "meanDeltaInterval", "overallScoreWithout", "runsTotal", "runsGraded",
                "thresholdMet", "casesUnstable"):  # fmt: skip
        assert doc["aggregates"][key] == expected["aggregates"][key], key
    assert doc["costUsd"] == pytest.approx(expected["costUsd"])
    assert [(s["index"], len(s["cases"])) for s in doc["shards"]] == [
        (k, len(shard_docs[k]["cases"])) for k in (1, 2, 3)
    ]
    assert doc["partial"] is False
    out = merged.stdout.str()
    shown = ", ".join(f"{name} ({scores[name]:.2f})" for name in below)
    assert f"{len(below)} of {CASES} case(s) below the threshold 0.50: {shown}" in out
    assert "merged 3 of 3 shard(s)" in out
    assert (pytester.path / "merged" / "report.html").is_file()
    assert f"{CASES} case(s) · mean Δ" in out

    # The merge's own threshold (the command called in this process from here on).
    assert merge_here(*(f"shard-{k}" for k in (1, 2, 3)), "--output-dir", "lenient",
                      "--threshold", "0")[0] == 0  # fmt: skip

    # A missing shard: the merge is partial and says which cases are missing.
    status, outlines, _ = merge_here("shard-1", "shard-3", "--output-dir", "partial")
    assert status == 2
    missing = sorted(c["name"] for c in shard_docs[2]["cases"])
    lines = [line for line in outlines if line.startswith("missing shard(s) 2/3")]
    assert lines == [
        f"missing shard(s) 2/3: {len(missing)} case(s) not run: {', '.join(missing)}; the result "
        "is partial and no threshold is met (exit status 2)"
    ]
    partial_doc = read(pytester.path / "partial" / "aggregate-result.json")
    assert (partial_doc["partial"], partial_doc["partialReason"]) == (True, "missing_shards")
    assert sorted(n["case"] for n in partial_doc["notStarted"]) == missing
    assert partial_doc["aggregates"]["casesTotal"] == CASES
    assert partial_doc["aggregates"]["thresholdMet"] is False

    # Not a shard: one line, exit status 4.
    status, _, errlines = merge_here("shard-1", "whole", "--output-dir", "nope")
    assert status == 4
    assert errlines == [
        "merge: whole: not the results of a shard (run each shard with --eval-shard K/N)"
    ]

    # The merged folder replays: the same verdicts, graded again from the recorded runs.
    (pytester.path / "agent.py").write_text("raise SystemExit(3)\n", encoding="utf-8")
    replay = pytester.runpytest(*common[:3], "--eval-agent", "replay:merged", *common[5:],
                                "--eval-json", "replay.json")  # fmt: skip
    assert replay.ret == 1
    assert outcome(read(pytester.path / "replay.json")) == outcome(expected)


SMALL = 5


def small_suite(pytester: pytest.Pytester) -> str:
    return make_suite(pytester, cases=SMALL, folders=1)


def session(pytester: pytest.Pytester, agent: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "evals", "--eval-agent", agent, "--eval-runs", "1", "--eval-threshold", "0",
        "--eval-json", "out.json", *args,
    )  # fmt: skip


def test_auto_from_the_ini_file_splits_what_k_selected_and_an_empty_shard_passes(
    pytester: pytest.Pytester, plugin_args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``eval_shard = auto`` in the ini file reaches the session (GitLab's variables name
    shard 3/3); the split is of the cases ``-k`` selected; a shard no case fell to passes and
    still records the split and says its line. (What ``auto`` reads of each CI, and the bad
    values' lines: tests/unit/test_shard_options.py.)"""
    for index, total, _ in SHARD_VARIABLES:
        monkeypatch.delenv(index, raising=False)
        monkeypatch.delenv(total, raising=False)
    monkeypatch.setenv("CI_NODE_INDEX", "3")
    monkeypatch.setenv("CI_NODE_TOTAL", "3")
    agent = small_suite(pytester)
    pytester.makeini("[pytest]\neval_shard = auto\n")
    result = session(pytester, agent, *plugin_args, "-k", "case-01 or case-02")
    assert result.ret == 0
    doc = read(pytester.path / "out.json")
    assert (doc["shard"]["index"], doc["shard"]["total"]) == (3, 3)
    assert sorted(c["name"] for c in doc["shard"]["suiteCases"]) == ["case-01", "case-02"]
    assert sorted(c["shard"] for c in doc["shard"]["suiteCases"]) == [1, 2]
    assert doc["cases"] == []
    assert doc["suite"]["root"] == str(pytester.path / "evals")
    result.stdout.fnmatch_lines(["shard 3/3: 0 of the 2 selected case(s)*"])
