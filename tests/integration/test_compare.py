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
RUNS = 3


def add_case(pytester: pytest.Pytester, name: str) -> None:
    write_tree(
        pytester.path,
        {
            f"evals/{name}/prompt.md": f"---\nruns: {RUNS}\n---\nTask {name}\n",
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


def earlier_session(pytester: pytest.Pytester, plugin_args: list[str], agent: Agent) -> Path:
    """A first session: steady, breaks and dropped all answer ok on every run."""
    for name in ("steady", "breaks", "dropped"):
        add_case(pytester, name)
    first = pytester.runpytest("evals", *plugin_args, "--eval-agent", agent([{"reply": "ok"}]))
    first.assert_outcomes(passed=3 * RUNS)
    (folder,) = results(pytester)
    return folder


def change_the_suite(pytester: pytest.Pytester, agent: Agent) -> str:
    """breaks now fails every run; dropped is removed; added is new."""
    remove_case(pytester, "dropped")
    add_case(pytester, "added")
    return agent([{"match": "Task breaks", "reply": "nope"}, {"reply": "ok"}])


def test_compared_with_the_last_session_and_by_path(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Agent
) -> None:
    earlier = earlier_session(pytester, plugin_args, scripted_agent)
    agent = change_the_suite(pytester, scripted_agent)
    # Under a threshold of 0 the failing runs are measurements: the exit status is the gate's.
    second = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-threshold", "0",
        "--eval-compare", "last",
    )  # fmt: skip
    assert second.ret == pytest.ExitCode.OK
    second.assert_outcomes(passed=3 * RUNS)
    _, current = results(pytester)
    doc = document(current)
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
        ],
        consecutive=True,
    )
    assert "--eval-fail-on-regression" not in second.stdout.str()

    # By path (the folder, or its document), and failing the session on the regression.
    for given in (earlier, earlier / "aggregate-result.json"):
        failed = pytester.runpytest(
            "evals", *plugin_args, "--eval-agent", agent, "--eval-threshold", "0",
            "--eval-compare", str(given), "--eval-fail-on-regression",
        )  # fmt: skip
        assert failed.ret == pytest.ExitCode.TESTS_FAILED
        failed.assert_outcomes(passed=3 * RUNS)  # no item failed: the comparison did
        assert verdicts(document(results(pytester)[-1]))["breaks"] == "worse"
        failed.stdout.fnmatch_lines(
            [
                "--eval-fail-on-regression: 1 case(s) worse since "
                f"{document(earlier)['startedAt']}: breaks"
            ]
        )

    # last is the newest earlier session, never this one's own folder: breaks failed there too.
    again = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-threshold", "0",
        "--eval-compare", "last", "--eval-fail-on-regression",
    )  # fmt: skip
    assert again.ret == pytest.ExitCode.OK
    *_, newest_before, own = results(pytester)
    doc = document(own)
    assert doc["comparison"]["against"] == str(newest_before / "aggregate-result.json")
    assert verdicts(doc) == {
        "added": "inconclusive",
        "breaks": "inconclusive",
        "steady": "inconclusive",
    }
    assert doc["comparison"]["regressed"] is False


def test_last_is_never_this_sessions_own_folder(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Agent
) -> None:
    """A session writing into a folder an earlier one wrote (the same --eval-output-dir)
    compares with the newest other folder, not with what it is about to replace."""
    earlier = earlier_session(pytester, plugin_args, scripted_agent)
    agent = change_the_suite(pytester, scripted_agent)
    fixed = pytester.path / "evals" / "results" / "fixed"
    for _ in range(2):
        result = pytester.runpytest(
            "evals", *plugin_args, "--eval-agent", agent, "--eval-threshold", "0",
            "--eval-compare", "last", "--eval-output-dir", str(fixed),
        )  # fmt: skip
        assert result.ret == pytest.ExitCode.OK
        doc = document(fixed)
        assert doc["comparison"]["against"] == str(earlier / "aggregate-result.json")
        assert verdicts(doc)["breaks"] == "worse"


def test_ini_twins(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Agent
) -> None:
    earlier_session(pytester, plugin_args, scripted_agent)
    agent = change_the_suite(pytester, scripted_agent)
    pytester.makeini(
        "[pytest]\neval_compare = last\neval_fail_on_regression = true\neval_threshold = 0\n"
    )
    result = pytester.runpytest("evals", *plugin_args, "--eval-agent", agent)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert verdicts(document(results(pytester)[-1]))["breaks"] == "worse"
    result.stdout.fnmatch_lines(["--eval-fail-on-regression: 1 case(s) worse since *: breaks"])


def test_an_improvement_does_not_fail_the_session(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Agent
) -> None:
    add_case(pytester, "fixed")
    broken = scripted_agent([{"reply": "nope"}])
    first = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", broken, "--eval-threshold", "0"
    )
    assert first.ret == pytest.ExitCode.OK
    fixed = scripted_agent([{"reply": "ok"}])
    second = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", fixed, "--eval-compare", "last",
        "--eval-fail-on-regression",
    )  # fmt: skip
    assert second.ret == pytest.ExitCode.OK
    assert verdicts(document(results(pytester)[-1])) == {"fixed": "better"}
    second.stdout.fnmatch_lines(["compared with *: 1 better", "better  fixed  0.00 → 1.00  *"])


def test_last_without_an_earlier_session_is_said(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Agent
) -> None:
    add_case(pytester, "steady")
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", scripted_agent([{"reply": "ok"}]),
        "--eval-compare", "last", "--eval-fail-on-regression",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=RUNS)
    results_root = pytester.path / "evals" / "results"
    result.stdout.fnmatch_lines(
        [f"--eval-compare last: no earlier results folder under {results_root} — nothing *"]
    )
    (own,) = results(pytester)
    assert "comparison" not in document(own)


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


def test_an_unreadable_last_document_is_passed_over(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Agent
) -> None:
    add_case(pytester, "steady")
    broken = pytester.path / "evals" / "results" / "2020-01-01T00-00-00-000Z"
    broken.mkdir(parents=True)
    (broken / "aggregate-result.json").write_text('{"schemaVersion": 1, "cases": 3,', "utf-8")
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", scripted_agent([{"reply": "ok"}]),
        "--eval-compare", "last",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "--eval-compare last: no earlier comparable session under * — nothing to compare "
            "with; passed over results/2020-01-01T00-00-00-000Z (not a result document this "
            "version reads: not JSON: *)",
        ]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_case_whose_graders_changed_is_named(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Agent
) -> None:
    """A grader's pattern rewritten between the sessions: the case is still compared, and
    marked and named as one whose change is partly the graders'."""
    earlier_session(pytester, plugin_args, scripted_agent)
    (pytester.path / "evals" / "steady" / "graders" / "ok.md").write_text(
        "---\ntype: regex\npattern: o[k]\n---\n", encoding="utf-8"
    )
    second = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", scripted_agent([{"reply": "ok"}]),
        "--eval-compare", "last",
    )  # fmt: skip
    second.assert_outcomes(passed=3 * RUNS)
    cases = document(results(pytester)[-1])["comparison"]["cases"]
    assert {c["name"]: c.get("gradersChanged", False) for c in cases} == {
        "steady": True, "breaks": False, "dropped": False,
    }  # fmt: skip
    second.stdout.fnmatch_lines(
        ["graders changed since then in 1 case(s) (steady): their change measures the graders' "
         "as well as the plugin's"]
    )  # fmt: skip
