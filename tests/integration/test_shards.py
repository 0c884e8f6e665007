"""``--eval-shard K/N`` and ``python -m pytest_plugin_evals merge``: a suite run as separate
shard sessions, merged, gives what one session gives."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.settings.parsers import SHARD_VARIABLES
from tests.helpers import write_tree

# What crosses from the workers to the controller is tested: -n 0 and -n 2.
pytestmark = pytest.mark.workers

#: A deterministic agent: its answer depends on the case, the arm and the run number only.
AGENT = """\
import hashlib, json, os, sys
sys.stdin.read()
case, arm, run = os.environ["EVAL_CASE"], os.environ["EVAL_ARM"], os.environ["EVAL_RUN"]
h = int(hashlib.sha256(f"{case}|{arm}|{run}".encode()).hexdigest(), 16)
bias = 4 if arm == "with" else 2
words = ["alpha" if h % bias else "", "beta" if (h // 7) % 3 else ""]
if case.endswith("07") and arm == "with":
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
    return pytester.run(sys.executable, "-m", "pytest_plugin_evals", "merge", *args)


def test_three_shards_merged_give_the_unsharded_session(pytester: pytest.Pytester) -> None:
    agent = make_suite(pytester, cases=15)
    common = ["evals", "-p", "no:cacheprovider", "--eval-agent", agent, "--eval-runs", "2",
              "--eval-threshold", "0.5"]  # fmt: skip
    whole = pytester.runpytest_subprocess(*common, "-n2", "--eval-output-dir", "whole")
    # Three separate sessions, processes and folders; with and without xdist workers.
    runs = {
        k: pytester.runpytest_subprocess(
            *common, n, "--eval-shard", f"{k}/3", "--eval-output-dir", f"shard-{k}"
        )
        for k, n in ((1, "-n0"), (2, "-n2"), (3, "-n0"))
    }
    expected = read(pytester.path / "whole" / "aggregate-result.json")
    assert len(expected["cases"]) == 15
    assert "shard" not in expected
    shard_docs = {k: read(pytester.path / f"shard-{k}" / "aggregate-result.json") for k in runs}
    # Every case ran in exactly one shard, with both arms and all its runs.
    names = [c["name"] for doc in shard_docs.values() for c in doc["cases"]]
    assert sorted(names) == sorted(c["name"] for c in expected["cases"])
    for k, doc in shard_docs.items():
        assert (doc["shard"]["index"], doc["shard"]["total"]) == (k, 3)
        mine = [c["name"] for c in doc["shard"]["suiteCases"] if c["shard"] == k]
        assert sorted(c["name"] for c in doc["cases"]) == sorted(mine)
        assert len(mine) == 5  # balanced: 15 cases of equal cost
        assert all(len(c["arms"]["with"]) == len(c["arms"]["without"]) == 2 for c in doc["cases"])
        assert f"shard {k}/3: {len(mine)} of the 15 selected case(s)" in runs[k].stdout.str()
    scores = {c["name"]: c["aggregates"]["score"] for c in expected["cases"]}
    below = sorted(c["name"] for c in expected["cases"] if not c["aggregates"]["passed"])
    assert "case-07" in below
    for k, doc in shard_docs.items():  # a shard fails when it holds a case below the threshold
        assert runs[k].ret == (1 if {c["name"] for c in doc["cases"]} & set(below) else 0)
    assert runs[1].parseoutcomes().get("deselected") == 40  # -n0: pytest counts them

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
    assert f"{len(below)} of 15 case(s) below the threshold 0.50: {shown}" in out
    assert "merged 3 of 3 shard(s)" in out
    assert (pytester.path / "merged" / "report.html").is_file()
    assert "15 case(s) · mean Δ" in out

    # The merge's own threshold.
    assert merge(pytester, *(f"shard-{k}" for k in (1, 2, 3)), "--output-dir", "lenient",
                 "--threshold", "0").ret == 0  # fmt: skip

    # A missing shard: the merge is partial and says which cases are missing.
    partial = merge(pytester, "shard-1", "shard-3", "--output-dir", "partial")
    assert partial.ret == 2
    missing = sorted(c["name"] for c in shard_docs[2]["cases"])
    lines = [line for line in partial.outlines if line.startswith("missing shard(s) 2/3")]
    assert lines == [
        f"missing shard(s) 2/3: {len(missing)} case(s) not run: {', '.join(missing)}; the result "
        "is partial and no threshold is met (exit status 2)"
    ]
    partial_doc = read(pytester.path / "partial" / "aggregate-result.json")
    assert (partial_doc["partial"], partial_doc["partialReason"]) == (True, "missing_shards")
    assert sorted(n["case"] for n in partial_doc["notStarted"]) == missing
    assert partial_doc["aggregates"]["casesTotal"] == 15
    assert partial_doc["aggregates"]["thresholdMet"] is False

    # Not a shard: one line, exit status 4.
    refused = merge(pytester, "shard-1", "whole", "--output-dir", "nope")
    assert refused.ret == 4
    assert refused.errlines == [
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


def test_a_shard_runs_its_cases_whole_and_deselects_the_rest(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    agent = small_suite(pytester)
    result = session(pytester, agent, *plugin_args, "--eval-shard", "2/3")
    assert result.ret == 0
    doc = read(pytester.path / "out.json")
    plan = doc["shard"]
    assert (plan["index"], plan["total"], plan["weights"]) == (2, 3, "runs")
    assert [c["name"] for c in plan["suiteCases"]] == [f"case-{i:02d}" for i in range(SMALL)]
    assert all(c["runs"] == 2 and c["cost"] == 2000 for c in plan["suiteCases"])
    mine = sorted(c["name"] for c in plan["suiteCases"] if c["shard"] == 2)
    assert sorted(c["name"] for c in doc["cases"]) == mine
    assert len(mine) in (1, 2)
    assert plan["settings"]["threshold"] == 0
    assert plan["version"]
    if "-n0" in plugin_args:
        assert result.parseoutcomes()["deselected"] == 2 * (SMALL - len(mine))
    result.assert_outcomes(passed=2 * len(mine), deselected=None)


def test_a_shard_no_case_fell_to_passes_and_records_the_split(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    agent = make_suite(pytester, cases=2, folders=0)
    result = session(pytester, agent, *plugin_args, "--eval-shard", "3/3")
    assert result.ret == 0
    doc = read(pytester.path / "out.json")
    assert doc["cases"] == []
    assert [c["shard"] for c in doc["shard"]["suiteCases"]] == [1, 2] or [
        c["shard"] for c in doc["shard"]["suiteCases"]
    ] == [2, 1]
    assert doc["suite"]["root"] == str(pytester.path / "evals")
    result.stdout.fnmatch_lines(["shard 3/3: 0 of the 2 selected case(s)*"])


def test_the_split_follows_the_other_selections(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    agent = small_suite(pytester)
    session(pytester, agent, *plugin_args, "--eval-shard", "1/2", "-k", "case-01 or case-02")
    doc = read(pytester.path / "out.json")
    assert sorted(c["name"] for c in doc["shard"]["suiteCases"]) == ["case-01", "case-02"]
    assert len(doc["cases"]) == 1


@pytest.mark.parametrize(
    ("variables", "shard"),
    [
        ({"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "2"}, (2, 2)),  # GitLab counts from 1
        ({"BUILDKITE_PARALLEL_JOB": "0", "BUILDKITE_PARALLEL_JOB_COUNT": "3"}, (1, 3)),
        ({"CIRCLE_NODE_INDEX": "2", "CIRCLE_NODE_TOTAL": "3"}, (3, 3)),
        ({}, None),  # not a parallel job: the whole suite
    ],
)
def test_shard_auto_reads_the_ci_variables(
    pytester: pytest.Pytester,
    plugin_args: list[str],
    monkeypatch: pytest.MonkeyPatch,
    variables: dict[str, str],
    shard: tuple[int, int] | None,
) -> None:
    for index, total, _ in SHARD_VARIABLES:
        monkeypatch.delenv(index, raising=False)
        monkeypatch.delenv(total, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    agent = small_suite(pytester)
    pytester.makeini("[pytest]\neval_shard = auto\n")
    session(pytester, agent, *plugin_args)
    doc = read(pytester.path / "out.json")
    if shard is None:
        assert "shard" not in doc
        assert len(doc["cases"]) == SMALL
    else:
        assert (doc["shard"]["index"], doc["shard"]["total"]) == shard


@pytest.mark.parametrize(
    ("args", "ini", "line"),
    [
        (["--eval-shard", "4/3"], "",
         "ERROR: --eval-shard must be K/N with 1 <= K <= N, such as 2/3 (got '4/3') or auto"),
        ([], "eval_shard = half",
         "ERROR: ini eval_shard must be K/N with 1 <= K <= N, such as 2/3 (got 'half') or auto"),
        (["--eval-shard", "1/2", "--eval-shard-durations", "nowhere"], "",
         "ERROR: --eval-shard-durations: no recorded runs in */nowhere (expected a results "
         "folder holding runs/)"),
    ],
)  # fmt: skip
def test_a_bad_shard_option_is_one_line(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    ini: str,
    line: str,
) -> None:
    monkeypatch.delenv("CI_NODE_INDEX", raising=False)
    pytester.makeini(f"[pytest]\n{ini}\n")
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([line])
    assert "Traceback" not in result.stderr.str()


def test_shard_auto_with_variables_that_name_no_shard_is_one_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI_NODE_INDEX", "5")
    monkeypatch.setenv("CI_NODE_TOTAL", "3")
    result = pytester.runpytest("-p", "no:cacheprovider", "--eval-shard", "auto")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: --eval-shard auto: the CI variables do not name a shard (CI_NODE_INDEX=5, "
         "CI_NODE_TOTAL=3)"]
    )  # fmt: skip
