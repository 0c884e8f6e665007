"""``--eval-compare`` and ``--eval-fail-on-regression``: a session compared with an earlier one,
as users run it (the earlier one by ``last`` or by path), with and without xdist."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep

from tests.helpers import write_tree

Agent = Callable[[list[dict[str, Any]]], str]
RUNS = 3  #: breaks' runs: enough for a case failing every run now to be worse
CASES_RUNS = RUNS + 2  #: a session's runs: breaks', and one of each other case


def add_case(pytester: pytest.Pytester, name: str, runs: int = 1) -> None:
    write_tree(
        pytester.path,
        {
            f"evals/{name}/prompt.md": f"---\nruns: {runs}\n---\nTask {name}\n",
            f"evals/{name}/graders/ok.md": "---\ntype: regex\npattern: ok\n---\n",
        },
    )


def remove_case(pytester: pytest.Pytester, name: str) -> None:
    for path in sorted((pytester.path / "evals" / name).rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    (pytester.path / "evals" / name).rmdir()


def results(pytester: pytest.Pytester) -> list[Path]:
    """The results folders, oldest first (their names are timestamps)."""
    return sorted((pytester.path / "evals" / "results").iterdir())


def document(folder: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((folder / "aggregate-result.json").read_text("utf-8"))
    return doc


def verdicts(doc: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["verdict"] for c in doc["comparison"]["cases"]}


BROKEN = "2020-01-01T00-00-00-000Z"


def earlier_session(pytester: pytest.Pytester, plugin_args: list[str], agent: Agent) -> Path:
    """A first session: steady, breaks and dropped all answer ok on every run. It asks for
    --eval-compare last where the only earlier folder holds no document it reads: it says so,
    compares with nothing and passes."""
    for name in ("steady", "dropped"):
        add_case(pytester, name)
    add_case(pytester, "breaks", RUNS)
    broken = pytester.path / "evals" / "results" / BROKEN
    broken.mkdir(parents=True)
    (broken / "aggregate-result.json").write_text('{"schemaVersion": 1, "cases": 3,', "utf-8")
    first = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent([{"reply": "ok"}]), "--eval-compare", "last",
        "--eval-fail-on-regression",
    )  # fmt: skip
    assert first.ret == pytest.ExitCode.OK
    first.assert_outcomes(passed=CASES_RUNS)
    first.stdout.fnmatch_lines(
        [
            "--eval-compare last: no earlier comparable session under * — nothing to compare "
            f"with; passed over results/{BROKEN} (not a result document this version reads: "
            "not JSON: *)",
        ]
    )
    assert "Traceback" not in first.stdout.str() + first.stderr.str()
    _, folder = results(pytester)
    assert "comparison" not in document(folder), "nothing was compared"
    return folder


def change_the_suite(pytester: pytest.Pytester, agent: Agent) -> str:
    """breaks now fails every run; dropped is removed; added is new; steady's grader is
    rewritten (it still matches ok)."""
    remove_case(pytester, "dropped")
    add_case(pytester, "added")
    (pytester.path / "evals" / "steady" / "graders" / "ok.md").write_text(
        "---\ntype: regex\npattern: o[k]\n---\n", encoding="utf-8"
    )
    return agent([{"match": "Task breaks", "reply": "nope"}, {"reply": "ok"}])


def compared_with_last(
    pytester: pytest.Pytester, plugin_args: list[str], agent: str, earlier: Path
) -> None:
    """--eval-compare last takes the earlier session: the verdicts, counts and intervals in the
    document, and the comparison in the terminal (without the regression gate: exit 0)."""
    # Under a threshold of 0 the failing runs are measurements: the exit status is the gate's.
    second = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-threshold", "0",
        "--eval-compare", "last",
    )  # fmt: skip
    assert second.ret == pytest.ExitCode.OK
    second.assert_outcomes(passed=CASES_RUNS)
    doc = document(results(pytester)[-1])
    comparison = doc["comparison"]
    assert comparison["against"] == str(earlier / "aggregate-result.json")
    assert comparison["againstStartedAt"] == document(earlier)["startedAt"]
    assert verdicts(doc) == {
        "added": "new",
        "breaks": "worse",
        "steady": "inconclusive",
        "dropped": "gone",
    }
    assert comparison["counts"] == {
        "better": 0, "worse": 1, "equivalent": 0, "inconclusive": 1, "new": 1, "gone": 1,
        "not run": 0,
    }  # fmt: skip
    assert comparison["regressed"] is True
    changed = {c["name"]: c.get("gradersChanged", False) for c in comparison["cases"]}
    assert changed == {"steady": True, "breaks": False, "added": False, "dropped": False}
    breaks = next(c for c in comparison["cases"] if c["name"] == "breaks")
    low, high = confint_proportions_2indep(0, RUNS, RUNS, RUNS, method="newcomb")
    assert breaks["before"] == 1.0 and breaks["after"] == 0.0 and breaks["change"] == -1.0
    assert breaks["changeInterval"] == [pytest.approx(low), pytest.approx(high)]
    assert breaks["dir"] == "breaks"
    second.stdout.fnmatch_lines(
        [
            f"compared with {document(earlier)['startedAt']}: "
            "1 worse, 1 inconclusive, 1 new, 1 gone",
            "new    added    — → 1.00",
            f"worse  breaks   1.00 → 0.00  -1.00 [{low:+.2f}, {high:+.2f}]",
            "gone   dropped  1.00 → —",
            "changes: 1 worse (breaks), 1 inconclusive (steady: about * more run(s)) — false "
            "discovery rate held at 5% over 2 changes (Benjamini–Hochberg)",
            "graders changed since then in 1 case(s) (steady): their change measures the "
            "graders' as well as the plugin's",
        ],
        consecutive=True,
    )
    assert "--eval-fail-on-regression" not in second.stdout.str()


def failed_on_regression(result: pytest.RunResult, folder: Path, earlier: Path) -> None:
    assert result.ret == pytest.ExitCode.TESTS_FAILED, "the regression fails the session"
    result.assert_outcomes(passed=CASES_RUNS)  # no item failed: the comparison did
    assert verdicts(document(folder))["breaks"] == "worse"
    result.stdout.fnmatch_lines(
        [
            "--eval-fail-on-regression: 1 case(s) worse since "
            f"{document(earlier)['startedAt']}: breaks"
        ]
    )


def test_compared_with_the_last_session_by_path_and_in_the_ini_file(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Agent
) -> None:
    """The sessions as users chain them: a first with nothing to compare with, then one
    compared with the last, by path (the folder on the command line, the document in the ini
    file, with its twins of --eval-fail-on-regression and --eval-threshold), and last never
    this session's own folder (one an earlier session of the same --eval-output-dir wrote)."""
    earlier = earlier_session(pytester, plugin_args, scripted_agent)
    agent = change_the_suite(pytester, scripted_agent)
    compared_with_last(pytester, plugin_args, agent, earlier)

    by_folder = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-threshold", "0",
        "--eval-compare", str(earlier), "--eval-fail-on-regression",
    )  # fmt: skip
    newest = results(pytester)[-1]
    failed_on_regression(by_folder, newest, earlier)

    pytester.makeini(
        f"[pytest]\neval_compare = {earlier / 'aggregate-result.json'}\n"
        "eval_fail_on_regression = true\neval_threshold = 0\n"
    )
    fixed = pytester.path / "evals" / "results" / "fixed"
    in_ini = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-output-dir", str(fixed)
    )
    failed_on_regression(in_ini, fixed, earlier)
    (pytester.path / "tox.ini").unlink()

    # last is the newest other session, never the folder this one writes (fixed is newer):
    # breaks failed there too.
    again = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-threshold", "0",
        "--eval-compare", "last", "--eval-fail-on-regression", "--eval-output-dir", str(fixed),
    )  # fmt: skip
    assert again.ret == pytest.ExitCode.OK
    doc = document(fixed)
    assert doc["comparison"]["against"] == str(newest / "aggregate-result.json")
    assert verdicts(doc) == {
        "added": "inconclusive",
        "breaks": "inconclusive",
        "steady": "inconclusive",
    }
    assert doc["comparison"]["regressed"] is False


# The other lines a document named gives: tests/unit/test_earlier_session.py, called directly.
@pytest.mark.parametrize(
    ("given", "line"),
    [
        (
            "nowhere",
            "--eval-compare: no result document at {path}/nowhere (expected a results folder "
            "holding aggregate-result.json, or that file)",
        ),
        # Numbers JSON cannot hold: once an INTERNALERROR (OverflowError) at the session's end.
        (
            "huge.json",
            "--eval-compare: {path}/huge.json: a number JSON cannot hold: an integer of 400 "
            "digits (at $.cases[0].arms.with[0].score)",
        ),
    ],
)
def test_a_missing_or_unreadable_document_is_one_usage_line(
    pytester: pytest.Pytester,
    plugin_args: list[str],
    scripted_agent: Agent,
    given: str,
    line: str,
) -> None:
    add_case(pytester, "steady")
    case = '{"name": "steady", "aggregates": {"score": 1}, "arms": {"with": [{"score": %s}]}}'
    text = f'{{"schemaVersion": 1, "cases": [{case % ("9" * 400)}]}}'
    (pytester.path / "huge.json").write_text(text, encoding="utf-8")
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", scripted_agent([{"reply": "ok"}]),
        "--eval-compare", given,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.assert_outcomes()  # nothing ran
    expected = "ERROR: " + line.format(path=pytester.path)
    result.stderr.fnmatch_lines([expected.replace("[", "[[]")])
    output = result.stdout.str() + result.stderr.str()
    assert output.count("--eval-compare") == 1
    assert "Traceback" not in output and "INTERNALERROR" not in output
    assert not (pytester.path / "evals" / "results").exists()
