"""``--eval-compare``'s and ``replay:last``'s earlier session as the core reads and says it
(``reporting.earlier``): a document that cannot be read is one line, and ``last`` says which
session it took. Called directly, no pytest session."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_plugin_evals.model import BaselinePlugin, Case
from pytest_plugin_evals.reporting.compare import compared
from pytest_plugin_evals.reporting.document import dumps_document
from pytest_plugin_evals.reporting.earlier import (
    EarlierError,
    Picked,
    Wanted,
    earlier_session,
    read_earlier,
    replay_last,
    same_kind,
    selected_cases,
    why_not,
)
from tests.helpers import run_record, summary

ROOT = Path("/suite/evals")


def case(name: str) -> Case:
    where = ROOT / name
    return Case(
        name=name, prompt="Hi", source="prose", path=where / "prompt.md", dir=where,
        suite_root=ROOT, runs=1,
    )  # fmt: skip


def session(folder: Path, *names: str, runs: bool = True, **kw: object) -> Path:
    """A results folder holding a session of the cases ``names`` (and ``runs/``)."""
    records = [run_record(case(n), arm, 1) for n in names for arm in ("with", "without")]
    folder.mkdir(parents=True)
    (folder / "aggregate-result.json").write_text(dumps_document(summary(records, **kw)), "utf-8")
    if runs:
        (folder / "runs").mkdir()
    return folder


def test_a_missing_or_unreadable_document_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(EarlierError, match=r"^--eval-compare: no result document at .*missing"):
        read_earlier(tmp_path / "missing", "--eval-compare")
    (tmp_path / "aggregate-result.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(EarlierError) as caught:
        read_earlier(tmp_path, "ini eval_compare")
    assert str(caught.value).startswith(f"ini eval_compare: {tmp_path / 'aggregate-result.json'}")
    assert "\n" not in str(caught.value)


CASE = '{"name": "steady", "aggregates": {"score": %s}, "arms": {"with": [{"score": %s}]}}'


@pytest.mark.parametrize(
    ("given", "text", "line"),
    [
        ("empty", None, "no result document at {path}/empty (expected a results folder holding "
                        "aggregate-result.json, or that file)"),
        ("garbage.json", "{not json", "{path}/garbage.json: not JSON: Expecting property name "
                                      "enclosed in double quotes (at line 1, column 2)"),
        ("other.json", '{"schemaVersion": 7}',
         "{path}/other.json: not a schemaVersion 1 result document"),
        ("infinite.json", '{"schemaVersion": 1, "costUsd": Infinity, "cases": []}',
         "{path}/infinite.json: a number JSON cannot hold: Infinity (at $.costUsd)"),
        ("nan.json", f'{{"schemaVersion": 1, "cases": [{CASE % ("NaN", "1")}]}}',
         "{path}/nan.json: a number JSON cannot hold: NaN (at $.cases[0].aggregates.score)"),
        ("typed.json", '{"schemaVersion": 1, "cases": [{"name": "steady", "tags": 3}]}',
         "{path}/typed.json: expected a list or null, found 3 (at $.cases[0].tags)"),
    ],
    ids=["empty-folder", "garbage", "other-schema", "infinite", "nan", "typed"],
)  # fmt: skip
def test_a_document_named_that_cannot_be_read_is_one_line(
    tmp_path: Path, given: str, text: str | None, line: str
) -> None:
    """(The shell's usage error of the line: tests/integration/test_compare.py.)"""
    if text is None:
        (tmp_path / given).mkdir()
    else:
        (tmp_path / given).write_text(text, encoding="utf-8")
    with pytest.raises(EarlierError) as caught:
        earlier_session(str(tmp_path / given), "--eval-compare", tmp_path, tmp_path, Wanted())
    assert str(caught.value) == "--eval-compare: " + line.format(path=tmp_path)


def test_a_document_named_is_read_and_last_takes_the_newest_of_its_kind(tmp_path: Path) -> None:
    older = session(tmp_path / "results" / "2026-01-01", "steady")
    newer = session(tmp_path / "results" / "2026-01-02", "steady", agent="codex")
    os.utime(older / "aggregate-result.json", (1, 1))
    document, before, said = earlier_session(
        str(older), "--eval-compare", tmp_path, tmp_path, Wanted()
    )
    assert document == older / "aggregate-result.json" and before is not None and said == []
    wanted = same_kind("claude", (), None, False)
    document, _, said = earlier_session(
        "last", "ini eval_compare", tmp_path / "results", newer, wanted
    )
    assert document == older / "aggregate-result.json"  # the newest is this session's own
    document, _, said = earlier_session(
        "last", "--eval-compare", tmp_path / "results", tmp_path, wanted
    )
    assert document == older / "aggregate-result.json"
    assert said == [
        "--eval-compare last: took results/2026-01-01, the newest comparable session; passed "
        "over results/2026-01-02 (another agent (codex))"
    ]


def test_the_selected_cases_and_the_kind_of_session_wanted() -> None:
    picked = selected_cases([(case("b"), None), (case("a"), "x"), (case("b"), None)])
    assert picked == [("a", "a", "x"), ("b", "b", "")]
    assert same_kind("cmd:python a.py", (("y", "claude"), ("x", "codex")), "git:HEAD", True) == (
        Wanted(
            agent_kind="cmd", agent_labels=("x", "y"), same_arms=True, baseline="git:HEAD", aa=True
        )
    )


def test_replay_last_takes_the_newest_session_with_recorded_runs_of_the_cases(
    tmp_path: Path,
) -> None:
    results = tmp_path / "results"
    none, line = replay_last(results, tmp_path, [("steady", "steady", "")])
    assert none is None
    assert line == (
        f"--eval-agent replay:last: no earlier session under {results} holds recorded runs of "
        "the selected cases"
    )
    recorded = session(results / "2026-01-01", "steady", agent="codex")  # any agent will do
    bare = session(results / "2026-01-02", "steady", runs=False)
    os.utime(recorded / "aggregate-result.json", (1, 1))
    folder, line = replay_last(results, tmp_path, [("steady", "steady", "")])
    assert folder == recorded
    assert line == (
        f"replay:last: replayed {recorded}, the newest comparable session; passed over "
        f"{bare.name} (it holds no recorded runs)"
    )
    shutil.rmtree(recorded / "runs")
    none, line = replay_last(results, tmp_path, [("steady", "steady", "")])
    assert none is None and line.endswith(
        "the selected cases (passed over 2026-01-02 (it holds no recorded runs), 2026-01-01 (it "
        "holds no recorded runs))"
    )


def test_compared_only_when_an_earlier_session_was_read() -> None:
    after = summary([run_record(case("steady"), arm, 1) for arm in ("with", "without")])
    assert compared(after, None, None, 0.1) is after
    against = compared(after, after, Path("/old/aggregate-result.json"), 0.1)
    assert against.comparison is not None
    assert against.comparison.against == "/old/aggregate-result.json"


def test_last_says_which_session_it_took_and_what_it_passed_over(tmp_path: Path) -> None:
    root = tmp_path / "results"
    none = Picked(None, None)
    assert none.notices("--eval-compare", root) == [
        f"--eval-compare last: no earlier results folder under {root} — nothing to compare with"
    ]
    passed = Picked(None, None, (("2026-01-02", "it is a replay"),))
    assert passed.notices("--eval-compare", root) == [
        f"--eval-compare last: no earlier comparable session under {root} — nothing to "
        "compare with; passed over results/2026-01-02 (it is a replay)"
    ]
    took = Picked(root / "2026-01-01" / "aggregate-result.json", summary([]))
    assert took.notices("--eval-compare", root) == [
        "--eval-compare last: took results/2026-01-01, the newest comparable session"
    ]


def test_last_wants_the_same_arms_when_asked() -> None:
    """A with/without session and an A/B one are not compared; A/Bs only against one baseline."""
    doc: dict[str, object] = {"loadErrors": []}
    both = summary([])
    both = replace(both, suite=replace(both.suite, ablation="with-without"))
    ab = replace(
        both,
        suite=replace(
            both.suite,
            ablation="with-baseline",
            baseline_plugins=(BaselinePlugin("git:HEAD~1", "demo", "1.0.0", "."),),
        ),
    )
    plain = Wanted(same_arms=True)
    against = Wanted(same_arms=True, baseline="git:HEAD~1")
    assert why_not(doc, both, plain) is None
    assert why_not(doc, ab, plain) == "an A/B session against git:HEAD~1"
    assert why_not(doc, ab, against) is None
    assert why_not(doc, both, against) == "a with/without session"
    assert why_not(doc, ab, Wanted(same_arms=True, baseline="git:main")) == (
        "an A/B session against git:HEAD~1"
    )
    assert why_not(doc, ab, Wanted()) is None  # replay:last and --eval-plan: any arms
