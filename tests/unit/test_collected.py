"""What an evals folder's entries become before pytest makes items of them, called directly:
the trees (``suites.discover.Trees``), a case's plan and the errors shown
(``suites.collected``), a run's name (``engine.nodeids``), and what a run item's report shows
of its run (``reporting.failures``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_plugin_evals.engine.nodeids import case_unit, run_name, run_title
from pytest_plugin_evals.model import ANSWER_LIMIT, Case, LoadError, RunResult, Verdict
from pytest_plugin_evals.records import LoadErrorRecord
from pytest_plugin_evals.reporting.failures import (
    PROPERTY_LIMIT,
    item_failure,
    junit_answer,
    junit_properties,
)
from pytest_plugin_evals.suites.collected import Shown, case_plan, mock_errors, named_entries
from pytest_plugin_evals.suites.discover import PYTEST_NORECURSEDIRS, Trees
from pytest_plugin_evals.suites.picks import CasePick, picked

OPTIONS = {"ablation": "auto", "aa": False, "ab": False, "runs": None, "runs_auto": None}


def evals(tmp_path: Path) -> Path:
    """An evals folder with the case folders ``build`` and ``plants`` and a ``results/``."""
    for case in ("build", "plants"):
        (tmp_path / "evals" / case).mkdir(parents=True)
        (tmp_path / "evals" / case / "prompt.md").write_text("hi\n", encoding="utf-8")
    (tmp_path / "evals" / "results" / "x").mkdir(parents=True)
    return tmp_path / "evals"


def case_in(root: Path, name: str = "c", source: str = "prose", **given: object) -> Case:
    return Case(name, "p", source, root / name / "prompt.md", root / name, root, **given)  # type: ignore[arg-type]


def test_the_trees_find_a_source_and_its_evals_folder(tmp_path: Path) -> None:
    root, trees = evals(tmp_path), Trees()
    assert trees.find(root / "plants") is None  # not read yet
    trees.read(root)
    found = trees.find(root / "plants")
    assert found is not None and found[0] == root and found[1] is not None
    assert found[1].kind == "case_dir"
    assert trees.find(root) == (root, None)  # the evals folder itself: no source
    assert trees.find(tmp_path / "evalsx") is None  # a sibling with the same prefix


def test_results_and_mocks_of_an_evals_folder_are_never_collected(tmp_path: Path) -> None:
    root, trees = evals(tmp_path), Trees()
    trees.read(root)
    assert trees.never_collected(root / "results" / "x")
    assert trees.never_collected(root / "plants" / "mocks" / "server.py")
    assert not trees.never_collected(root / "plants")
    assert not trees.never_collected(tmp_path / "results")  # outside every evals folder


def test_a_case_named_as_pytest_passes_over_is_kept_unless_the_user_said_so(
    tmp_path: Path,
) -> None:
    root, trees = evals(tmp_path), Trees()
    trees.read(root)
    default = list(PYTEST_NORECURSEDIRS)
    assert trees.kept_case(root / "build", default, [], [])
    assert not trees.kept_case(root / "plants", default, [], [])  # not passed over by name
    assert not trees.kept_case(root / "build", [*default, "x"], [], [])  # the project's own
    assert not trees.kept_case(root / "build", default, [root / "build"], [])  # --ignore
    assert not trees.kept_case(root / "build", default, [], [str(root / "bu*")])  # --ignore-glob
    assert not trees.kept_case(root / "results", default, [], [])  # no case


def test_a_suite_files_broken_entries_are_named_by_their_line(tmp_path: Path) -> None:
    case = case_in(tmp_path)
    entries: list[Case | LoadError] = [
        LoadError("s.json", "a", 7),
        case,
        LoadError("s.json", "b", 7),
        LoadError("s", "c"),
    ]
    named = list(named_entries(entries))
    assert named[1] is case
    assert [(e.name, e.error.message) for e in named if isinstance(e, Shown)] == [
        ("line-7", "a"),
        ("line-7-2", "b"),
        ("case", "c"),
    ]


def test_a_case_plans_its_arms_and_plugin_or_shows_one_error(tmp_path: Path) -> None:
    planned = case_plan(case_in(tmp_path), set(), **OPTIONS)
    assert isinstance(planned, tuple) and planned[1] is None and not planned[0].two_arm
    bad = case_in(tmp_path, plugins=("missing",))
    shown = case_plan(bad, set(), **OPTIONS)
    assert isinstance(shown, Shown) and shown.name == "c" and "not a folder" in shown.error.message
    no_plugin = case_plan(case_in(tmp_path), set(), **{**OPTIONS, "ablation": "with-without"})
    assert isinstance(no_plugin, Shown) and "needs a plugin" in no_plugin.error.message


def test_an_aa_refusal_is_shown_once_per_case_and_once_per_trigger_file(tmp_path: Path) -> None:
    refused: set[str] = set()
    aa = {**OPTIONS, "aa": True}
    query = case_in(tmp_path, "q1", "trigger_eval")
    assert isinstance(case_plan(query, refused, **aa), Shown)
    other_query = Case("q2", "p", "trigger_eval", query.path, query.dir, tmp_path)
    assert case_plan(other_query, refused, **aa) is None  # the same trigger file: said already
    prose = case_in(tmp_path, "one")
    assert isinstance(case_plan(prose, refused, **aa), Shown)
    assert case_plan(prose, refused, **aa) is None  # the same case again (another agent)
    beside = Case("two", "p", "prose", prose.path, prose.dir, tmp_path)
    assert isinstance(case_plan(beside, refused, **aa), Shown)  # another case of its file


def test_a_broken_mock_file_is_shown_once_named_in_its_suite(tmp_path: Path) -> None:
    said: set[str] = set()
    broken = [LoadError(tmp_path / "c" / "mocks" / "m.yaml", "bad"), LoadError("/o/x.yaml", "z")]
    assert [s.name for s in mock_errors(broken, tmp_path, said)] == ["c/mocks/m.yaml", "x.yaml"]
    assert list(mock_errors(broken, tmp_path, said)) == []


def test_picks_keep_the_runs_they_name_and_every_error() -> None:
    one, every, none = (CasePick(f"evals/c::{n}", n) for n in ("c[with-1]", "c", "c[9]"))
    runs = [("c[with-1]", "c"), ("c[without-1]", "c"), None]
    assert picked([one], runs) == [True, False, True]
    assert one.seen and one.found and one.runs == ["c[with-1]", "c[without-1]"]
    assert picked([every], runs) == [True, True, True]
    assert picked([none], runs[:2]) == [False, False] and none.seen and not none.found


@pytest.mark.parametrize(
    ("arm", "agent", "name", "title"),
    [
        ("with", None, "c[with-2]", "eval c [with] run 2"),
        ("single", None, "c[2]", "eval c [single] run 2"),
        ("baseline", "fast", "c[fast-baseline-2]", "eval c [baseline] run 2 on fast"),
    ],
)
def test_a_run_is_named_as_its_node_id_is_read_back(
    arm: str, agent: str | None, name: str, title: str
) -> None:
    assert run_name("c", arm, 2, agent) == name
    assert case_unit(f"evals/c::{name}") == ("evals/c::c", agent)
    assert run_title("c", arm, 2, agent) == title


def test_only_a_scored_run_below_a_perfect_score_fails_its_item() -> None:
    failed = RunResult(arm="with", run=1, verdicts=(Verdict("g", False, "no"),))
    assert "score 0.00 (run 1, with arm)" in (item_failure(failed, "prose", measured=False) or "")
    assert item_failure(failed, "trigger_eval", measured=False) is None  # decided on its rate
    assert item_failure(failed, "prose", measured=True) is None  # a measurement
    assert item_failure(RunResult(arm="without", run=1), "prose", measured=False) is None
    assert item_failure(RunResult(arm="with", run=1, passed=True), "prose", measured=False) is None


def test_a_ci_view_shows_a_runs_arm_score_failed_graders_and_safe_answer() -> None:
    verdicts = (
        Verdict("\x1b[31mg" + "x" * 600, False, "no"),
        Verdict("h", False, "", scored=False),
    )
    result = RunResult(arm="with", run=2, verdicts=verdicts, reused_from="\x1b[2Jold")
    shown = dict(junit_properties(result))
    assert shown["eval_arm"] == "with" and shown["eval_run"] == "2"
    assert shown["eval_reused_from"] == "old"
    assert shown["eval_failed_graders"].startswith("g") and "h" not in shown["eval_failed_graders"]
    assert len(shown["eval_failed_graders"]) == PROPERTY_LIMIT
    errored = dict(junit_properties(RunResult(arm="with", run=1, infra_error="rate limit")))
    assert errored["eval_infra_error"] == "rate limit" and "eval_score" not in errored
    long = junit_answer(RunResult(arm="with", run=1, answer="a\x07" + "b" * ANSWER_LIMIT))
    assert long.startswith(f"the agent's answer ({ANSWER_LIMIT + 2:,}+ characters):\na")
    assert "\x07" not in long and long.endswith(f"[… cut at {ANSWER_LIMIT:,} characters]\n")


def test_a_load_errors_record_carries_where_and_why(tmp_path: Path) -> None:
    error = LoadError(tmp_path / "s.json", "broken", 3)
    record = LoadErrorRecord.of("evals/s.json::line-3", error, tmp_path)
    assert record == LoadErrorRecord(
        "evals/s.json::line-3", str(error.path), 3, "broken", str(tmp_path)
    )
