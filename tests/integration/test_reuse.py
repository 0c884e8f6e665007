"""``--eval-reuse``: a pull request's session takes the without arm's runs from the earlier
session when nothing that shapes them changed, and makes them again when something did.

The agent is a ``cmd:`` program that logs every run it makes to a file outside its run (so
the sessions pass ``--eval-unconfined`` on purpose) and reports a cost.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, write_tree

#: Answers "done" (the plugin's arm also says "plugin"), reports $0.01 of usage, and appends
#: "<case> <arm> <run>" to $EVAL_REUSE_LOG (a shell script: the sessions make hundreds of runs,
#: and none starts an interpreter).
AGENT = """\
cat > /dev/null
echo "$EVAL_CASE $EVAL_ARM $EVAL_RUN" >> "$EVAL_REUSE_LOG"
echo '{"type": "usage", "input_tokens": 10, "output_tokens": 5, "cost_usd": 0.01}' \\
    >> "$EVAL_TRACE_FILE"
if [ "$EVAL_ARM" = with ]; then echo "done plugin"; else echo done; fi
"""

CASES = ("alpha", "beta")


def make_suite(root: Path, runs: int = 3) -> str:
    files = {
        "agent.sh": AGENT,
        ".claude-plugin/plugin.json": '{"name": "helper", "version": "1.0.0"}',
    }
    for name in CASES:
        files[f"evals/{name}/prompt.md"] = f"---\nruns: {runs}\n---\nCase {name}.\n"
        files[f"evals/{name}/graders/done.md"] = "---\ntype: regex\npattern: done\n---\n"
    write_tree(root, files)
    return "cmd:" + shlex.join(["sh", str(root / "agent.sh")])


class Sessions:
    """Runs sessions of one suite, each in a results folder of its own, and says which runs
    the agent made in each."""

    def __init__(self, pytester: pytest.Pytester, plugin_args: list[str], runs: int = 3) -> None:
        self.pytester = pytester
        self.plugin_args = plugin_args
        self.agent = make_suite(pytester.path, runs)
        self.log = pytester.path / "made.log"
        self.count = 0

    def run(
        self, *extra: str, one_process: bool = False
    ) -> tuple[pytest.RunResult, list[str], dict[str, Any]]:
        """A session (``one_process``: without xdist workers, whatever the test's mode)."""
        self.count += 1
        out = self.pytester.path / "evals" / "results" / f"s{self.count}"
        self.log.write_text("")
        os.environ["EVAL_REUSE_LOG"] = str(self.log)
        several = "--eval-agents" in extra
        result = self.pytester.runpytest(
            *(["-n0", "-p", "no:cacheprovider"] if one_process else self.plugin_args),
            "evals",
            *([] if several else [f"--eval-agent={self.agent}"]),
            "--eval-unconfined",
            f"--eval-output-dir={out}",
            *extra,
        )
        doc = json.loads((out / "aggregate-result.json").read_text())
        return result, self.log.read_text().splitlines(), doc


@pytest.fixture
def sessions(
    pytester: pytest.Pytester, plugin_args: list[str], monkeypatch: pytest.MonkeyPatch
) -> Sessions:
    """Sessions of the two-case suite, three runs per case and arm."""
    monkeypatch.setenv("EVAL_REUSE_LOG", str(pytester.path / "made.log"))
    return Sessions(pytester, plugin_args)


@pytest.fixture
def one_run(
    pytester: pytest.Pytester, plugin_args: list[str], monkeypatch: pytest.MonkeyPatch
) -> Sessions:
    """Sessions of the same suite with one run per case and arm (where the count is not what
    is tested)."""
    monkeypatch.setenv("EVAL_REUSE_LOG", str(pytester.path / "made.log"))
    return Sessions(pytester, plugin_args, runs=1)


def arms_made(lines: list[str]) -> dict[str, int]:
    made: dict[str, int] = {}
    for line in lines:
        arm = line.split()[1]
        made[arm] = made.get(arm, 0) + 1
    return made


def runs_of(doc: dict[str, Any], arm: str) -> list[dict[str, Any]]:
    return [run for case in doc["cases"] for run in case["arms"].get(arm, [])]


@pytest.mark.workers
def test_a_pr_session_reuses_every_without_arm_run(sessions: Sessions) -> None:
    """A pull request's session (the plugin changed) makes only the with arm and reuses the
    without arm's runs; the next reuses them from that session, makes again the runs of a case
    whose files changed, and grades the reused runs with the graders as they are now."""
    root = sessions.pytester.path
    # The earlier session in one process: the two after it reuse, the last from the one
    # before it (runs kept by a session's workers).
    first, made, doc = sessions.run(one_process=True)
    first.assert_outcomes(passed=12)
    assert arms_made(made) == {"with": 6, "without": 6}
    assert doc["costUsd"] == pytest.approx(0.12)
    # The plugin changes (a pull request): only the with arm is made again.
    (root / ".claude-plugin" / "skill.md").write_text("new")
    second, made, doc = sessions.run("--eval-reuse", "last", "--junitxml", "junit.xml")
    second.assert_outcomes(passed=12)
    assert arms_made(made) == {"with": 6}
    without = runs_of(doc, "without")
    first_folder = str(root / "evals" / "results" / "s1")
    assert [r.get("reusedFrom") for r in without] == [first_folder] * 6
    assert all(r["passed"] and r["costUsd"] == pytest.approx(0.01) for r in without)
    assert not any("reusedFrom" in r for r in runs_of(doc, "with"))
    assert doc["costUsd"] == pytest.approx(0.06)  # the with arm's: the rest was spent before
    junit = (root / "junit.xml").read_text()
    assert junit.count(f'name="eval_reused_from" value="{first_folder}"') == 6
    second.stdout.fnmatch_lines(
        [
            f"--eval-reuse: 6 of 6 without-arm run(s) reused from {first_folder} (their agent "
            "cost, $0.0600, was spent when they were made)"
        ]
    )
    # alpha's files change: its runs are made again. beta's grader changes: applied again to
    # its runs, reused from the session that reused them (their age is the runs' own).
    (root / "evals" / "alpha" / "fixture.txt").write_text("a file the run sees")
    (root / "evals" / "beta" / "graders" / "done.md").write_text(
        "---\ntype: regex\npattern: nothing-matches\n---\n"
    )
    third, made, doc = sessions.run("--eval-reuse", "last")
    assert sorted(line for line in made if " without " in line) == [
        "alpha without 1",
        "alpha without 2",
        "alpha without 3",
    ], "a case whose files changed must have its without-arm runs made again"
    assert arms_made(made)["with"] == 6
    second_folder = str(root / "evals" / "results" / "s2")
    beta = next(c for c in doc["cases"] if c["name"] == "beta")
    assert [r.get("reusedFrom") for r in beta["arms"]["without"]] == [second_folder] * 3
    assert [r["passed"] for r in beta["arms"]["without"]] == [False] * 3, "graded as before"
    third.stdout.fnmatch_lines_random(
        [
            f"--eval-reuse: 3 of 6 without-arm run(s) reused from {second_folder} *",
            "--eval-reuse: 3 run(s) made, not reused: changed since: the case's files",
        ]
    )


def test_tampered_records_are_refused_in_one_line_and_made(sessions: Sessions) -> None:
    """Hostile recorded runs (a stamp of a wrong type or too large, a meta of a wrong type, a
    link out) are refused in one line each and made; more runs than recorded are made too (the
    first session, with nothing to reuse, says so and makes every run)."""
    root = sessions.pytester.path
    first, made, _ = sessions.run("--eval-reuse", "last")
    assert arms_made(made) == {"with": 6, "without": 6}
    first.stdout.fnmatch_lines(
        ["--eval-reuse last: no earlier session of this kind with reusable runs under *"]
    )
    runs = root / "evals" / "results" / "s1" / "runs"
    alpha = next(p for p in runs.iterdir() if p.name.startswith("alpha"))
    beta = next(p for p in runs.iterdir() if p.name.startswith("beta"))
    stamp = json.loads((alpha / "without-1" / "reuse.json").read_text())
    stamp["madeAt"] = "yesterday"  # a wrong type
    (alpha / "without-1" / "reuse.json").write_text(json.dumps(stamp))
    (alpha / "without-2" / "meta.json").write_text('{"costUsd": "a lot"}')
    secret = root / "secret.txt"
    secret.write_text("not for the run")
    (alpha / "without-3" / "files").mkdir(exist_ok=True)
    (alpha / "without-3" / "files" / "leak.txt").symlink_to(secret)  # a link out
    (beta / "without-1" / "reuse.json").write_text('{"parts": {}, "x": "' + "y" * 70_000 + '"}')
    result, made, doc = sessions.run("--eval-reuse", "last", "--eval-runs", "4")
    assert sorted(line for line in made if " without " in line) == [
        "alpha without 1",
        "alpha without 2",
        "alpha without 3",
        "alpha without 4",
        "beta without 1",
        "beta without 4",
    ], "the refused runs and the fourth (never recorded) must be made"
    result.assert_outcomes(passed=16)
    out = result.stdout.str()
    assert "Traceback" not in out
    assert out.count("without-arm run(s) reused") == 1
    assert "--eval-reuse: 2 of 8 without-arm run(s) reused" in out
    assert "madeAt is not a number: refused" in out
    assert "costUsd is not as a session writes it: Input should be a valid number" in out
    assert "a symbolic link (files/leak.txt" in out
    assert "reuse.json is larger than 64 KB: refused" in out
    assert "not for the run" not in json.dumps(doc)


def forge_stamp(run: Path) -> None:
    """Make a run's stamp match its altered files the way one without the stamp key can:
    every digest made again, the signature a plain hash."""
    stamp = json.loads((run / "reuse.json").read_text())
    files = {
        p.relative_to(run).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(run.rglob("*"))
        if p.is_file() and p.name != "reuse.json"
    }
    stamp["files"] = hashlib.sha256(json.dumps(files).encode()).hexdigest()
    stamp["madeAt"] = time.time()  # younger, too
    stamp["mac"] = hashlib.sha256(json.dumps(stamp, sort_keys=True).encode()).hexdigest()
    (run / "reuse.json").write_text(json.dumps(stamp))


def test_a_run_altered_without_the_stamp_key_is_refused_and_made(sessions: Sessions) -> None:
    """A run whose files or stamp were altered without the stamp key is refused and made; then
    runs older than ``--eval-reuse-max-age`` are made."""
    root = sessions.pytester.path
    sessions.run()
    runs = root / "evals" / "results" / "s1" / "runs"
    alpha = next(p for p in runs.iterdir() if p.name.startswith("alpha")) / "without-1"
    beta = next(p for p in runs.iterdir() if p.name.startswith("beta")) / "without-2"
    meta = json.loads((alpha / "meta.json").read_text())
    (alpha / "meta.json").write_text(json.dumps({**meta, "finalMessage": "forged", "costUsd": 0}))
    forge_stamp(alpha)
    with (beta / "trace.jsonl").open("a") as trace:
        trace.write(json.dumps({"type": "usage", "cost_usd": 99}) + "\n")
    result, made, doc = sessions.run("--eval-reuse", "last")
    assert sorted(line for line in made if " without " in line) == [
        "alpha without 1",
        "beta without 2",
    ]
    result.assert_outcomes(passed=12)
    assert "forged" not in json.dumps(doc)
    result.stdout.fnmatch_lines_random(
        [
            "--eval-reuse: 4 of 6 without-arm run(s) reused from *",
            "--eval-reuse: 1 run(s) made, not reused: the recorded run runs/alpha*/without-1 has "
            "a reuse.json not signed with this machine's stamp key (altered, or stamped with "
            "another key): refused",
            "--eval-reuse: 1 run(s) made, not reused: the recorded run runs/beta*/without-2 has "
            "files (meta.json, trace, kept files) changed since it was stamped: refused",
        ]
    )
    time.sleep(1.5)
    result, made, _ = sessions.run("--eval-reuse", "last", "--eval-reuse-max-age", "1s")
    assert arms_made(made) == {"with": 6, "without": 6}
    result.stdout.fnmatch_lines_random(
        [
            "*6 run(s) made, not reused: older than --eval-reuse-max-age",
            "*--eval-reuse: none of the 6 without-arm run(s) reused",
        ]
    )


def test_last_takes_a_session_of_the_same_kind_and_says_why_not_the_newer(
    one_run: Sessions,
) -> None:
    """After a with/without session, an A/A one and an A/B one, a with/without session reuses
    the with/without one's runs, and says which it took and why it passed over the newer."""
    root = one_run.pytester.path
    results = root / "evals" / "results"
    one_run.run()
    _, made, doc = one_run.run("--eval-aa")
    assert arms_made(made) == {"with": 2, "baseline": 2}
    assert doc["suite"]["aa"] is True
    write_tree(root, {"old/.claude-plugin/plugin.json": '{"name": "helper"}'})
    _, made, _ = one_run.run("--eval-baseline-plugin", str(root / "old"))
    assert arms_made(made) == {"with": 2, "baseline": 2}
    result, made, doc = one_run.run("--eval-reuse", "last")
    assert arms_made(made) == {"with": 2}
    assert {r["reusedFrom"] for r in runs_of(doc, "without")} == {str(results / "s1")}
    result.stdout.fnmatch_lines(
        [
            "--eval-reuse last: took results/s1, the newest session of this kind with reusable "
            f"runs; passed over results/s3 (an A/B session against {root / 'old'}), results/s2 "
            "(an A/A session)"
        ]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--eval-reuse-max-age", "soon"], "*--eval-reuse-max-age must be an age such as 7d*"),
        (["--eval-reuse", "nowhere"], "*--eval-reuse: no recorded runs at */nowhere*"),
    ],
)
def test_bad_values_are_one_line(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    make_suite(pytester.path)
    result = pytester.runpytest("-p", "no:cacheprovider", "evals", *args)
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_the_ini_twins(pytester: pytest.Pytester) -> None:
    make_suite(pytester.path)
    pytester.makeini("[pytest]\neval_reuse_max_age = 3 days\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "evals")
    result.stderr.fnmatch_lines(["*ini eval_reuse_max_age must be an age such as*'3 days'*"])


def test_a_git_baseline_arm_is_reused_until_its_commit_changes(one_run: Sessions) -> None:
    """A ``git:`` baseline's runs are reused while its commit's tree is the same (the working
    tree may change), and made again when the revision names another tree."""
    root = one_run.pytester.path
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "v1")
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "helper", "version": "1.1"}')
    git(root, "commit", "-q", "-am", "v1.1")
    baseline = ("--eval-baseline-plugin", "git:HEAD~1")
    _, made, _ = one_run.run(*baseline)
    assert arms_made(made) == {"with": 2, "baseline": 2}
    (root / "skill.md").write_text("the pull request's change")  # the working tree only
    result, made, doc = one_run.run(*baseline, "--eval-reuse", "last")
    assert arms_made(made) == {"with": 2}
    assert all(r.get("reusedFrom") for r in runs_of(doc, "baseline"))
    result.stdout.fnmatch_lines(["--eval-reuse: 2 of 2 baseline-arm run(s) reused from *"])
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "v1.2")  # HEAD~1 is now another tree
    result, made, _ = one_run.run(*baseline, "--eval-reuse", "last")
    assert arms_made(made) == {"with": 2, "baseline": 2}
    result.stdout.fnmatch_lines(["*changed since: the baseline plugin"])


def made_runs(lines: list[str]) -> dict[tuple[str, str], list[int]]:
    """``(case, arm)`` → the runs the agent made, in order."""
    found: dict[tuple[str, str], list[int]] = {}
    for line in lines:
        case, arm, run = line.split()[:3]
        found.setdefault((case, arm), []).append(int(run))
    return {key: sorted(runs) for key, runs in found.items()}


def test_sequential_runs_count_reused_runs_and_top_them_up(sessions: Sessions) -> None:
    """Under ``--eval-runs auto`` the reused without-arm runs are rounds like any other, and
    the rounds beyond what the earlier session recorded are made."""
    # alpha: the plugin's arm passes, the other fails (it runs to its budget); beta: a tie
    (sessions.pytester.path / "evals" / "alpha" / "graders" / "done.md").write_text(
        "---\ntype: regex\npattern: plugin\n---\n"
    )
    _, made, _ = sessions.run("--eval-runs", "3")
    assert arms_made(made) == {"with": 6, "without": 6}
    (sessions.pytester.path / ".claude-plugin" / "skill.md").write_text("new")
    second, made, doc = sessions.run("--eval-runs", "auto:8", "--eval-reuse", "last", "-rs")
    cases = {c["name"]: c for c in doc["cases"]}
    alpha, beta = cases["alpha"]["aggregates"], cases["beta"]["aggregates"]
    assert beta["sequential"]["stopped"] == "futility" and beta["sequential"]["runs"] == 2
    assert alpha["sequential"]["runs"] == 8, alpha["sequential"]
    made_now = made_runs(made)
    assert made_now[("alpha", "with")] == list(range(1, 9))
    assert made_now[("alpha", "without")] == [4, 5, 6, 7, 8]  # 1-3 reused, then topped up
    assert made_now[("beta", "with")] == [1, 2]
    assert ("beta", "without") not in made_now  # its two rounds' without runs were reused
    first_folder = str(sessions.pytester.path / "evals" / "results" / "s1")
    reused = {
        c["name"]: [r["run"] for r in c["arms"]["without"] if r.get("reusedFrom") == first_folder]
        for c in doc["cases"]
    }
    assert reused == {"alpha": [1, 2, 3], "beta": [1, 2]}
    second.stdout.fnmatch_lines(["*stopped after 2 runs as inconclusive*(futility)"])
    # alpha's 3 reused rounds were read by the first session and again now: another look
    second.stdout.fnmatch_lines(
        ["--eval-reuse: top-up: 1 case(s) went from 3 reused run(s) per arm to 8; *, not 5%*"]
    )
    assert second.ret == 0


def test_each_agent_reuses_only_its_own_runs(one_run: Sessions) -> None:
    """Under ``--eval-agents`` a run is reused only from the same agent: two agents that swap
    labels make all their runs again; the same agents again reuse each its own."""
    root = one_run.pytester.path
    other = root / "other.sh"
    other.write_text((root / "agent.sh").read_text())
    one = one_run.agent
    two = "cmd:" + shlex.join(["sh", str(other)])
    _, made, _ = one_run.run("--eval-agents", f"a={one}", "--eval-agents", f"b={two}")
    assert arms_made(made) == {"with": 4, "without": 4}
    (root / ".claude-plugin" / "skill.md").write_text("new")
    swapped = ("--eval-agents", f"a={two}", "--eval-agents", f"b={one}", "--eval-reuse", "last")
    _, made, doc = one_run.run(*swapped)
    assert arms_made(made) == {"with": 4, "without": 4}  # a's runs are not b's
    assert not any("reusedFrom" in r for r in runs_of(doc, "without"))
    _, made, doc = one_run.run(*swapped)
    assert arms_made(made) == {"with": 4}
    second_folder = str(root / "evals" / "results" / "s2")
    by_agent: dict[str, set[str]] = {}
    for case in doc["cases"]:
        for r in case["arms"]["without"]:
            by_agent.setdefault(str(case.get("agent")), set()).add(r.get("reusedFrom"))
    assert by_agent == {"a": {second_folder}, "b": {second_folder}}, by_agent
