"""What the session does once collection is done (``engine.selected``): the shard split of the
selected runs, the earlier session ``--eval-compare`` reads, ``--eval-plan``'s lines, and what
an xdist worker tells the controller in the shared folder. Called directly, no pytest session."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_plugin_evals.engine.selected import (
    Run,
    compared_cases,
    find_earlier,
    session_plan,
    shard_split,
    tell_cases,
    tell_plan,
    told_cases,
    told_plan,
)
from pytest_plugin_evals.model import BaselinePlugin, Case
from pytest_plugin_evals.recording import case_key
from pytest_plugin_evals.reporting.document import dumps_document
from pytest_plugin_evals.reporting.earlier import EarlierError
from pytest_plugin_evals.settings import EvalSettings
from pytest_plugin_evals.shards import Shard
from tests.helpers import run_record, summary


def case(root: Path, name: str) -> Case:
    where = root / name
    return Case(
        name=name, prompt="Hi", source="prose", path=where / "prompt.md", dir=where,
        suite_root=root, runs=1,
    )  # fmt: skip


def runs_of(root: Path, names: list[str], agent: str | None = None) -> list[Run]:
    """Each case's two runs (with and without its plugin)."""
    return [
        (f"evals/{n}::{n}[{arm}-1]", case(root, n), agent, 1, True)
        for n in names
        for arm in ("with", "without")
    ]


NAMES = [f"case-{i:02d}" for i in range(5)]


def test_each_case_falls_whole_to_one_shard_and_the_others_are_dropped(tmp_path: Path) -> None:
    runs = runs_of(tmp_path / "evals", NAMES)
    kept: list[str] = []
    for index in (1, 2):
        plan, others = shard_split(Shard(index, 2), runs, EvalSettings())
        mine = [r[0] for r in runs if r[0] not in others]
        assert {n.partition("[")[0] for n in mine} == {c.nodeid for c in plan.cases_of(index)}
        assert plan.weights == "runs" and plan.root == str(tmp_path / "evals")
        kept += mine
    assert sorted(kept) == sorted(r[0] for r in runs)  # every run in exactly one shard
    assert told_plan(tmp_path) is None  # no worker wrote one
    tell_plan(tmp_path, plan)
    assert told_plan(tmp_path) == plan


def test_recorded_durations_weigh_the_split(tmp_path: Path) -> None:
    root = tmp_path / "evals"
    runs = runs_of(root, NAMES)
    for name in NAMES[1:]:  # a case that was not recorded weighs as a typical one
        arms = ("with", "without") if name == "case-03" else ("with",)
        for arm in arms:
            folder = tmp_path / "earlier" / "runs" / case_key(case(root, name)) / f"{arm}-1"
            folder.mkdir(parents=True)
            seconds = 40.0 if name == "case-03" else 4.0  # ten times as long as any other
            (folder / "meta.json").write_text(json.dumps({"durationSeconds": seconds}), "utf-8")
    settings = replace(EvalSettings(), shard_durations=tmp_path / "earlier")
    plan, _ = shard_split(Shard(1, 2), runs, settings)
    assert plan.weights == "durations"
    assert {c.name: c.cost for c in plan.cases} == {
        "case-00": 8000, "case-01": 8000, "case-02": 8000, "case-03": 80000, "case-04": 8000
    }  # fmt: skip
    shard_of = {c.name: c.shard for c in plan.cases}
    assert [n for n, k in shard_of.items() if k == shard_of["case-03"]] == ["case-03"]


def test_the_cases_compared_and_what_a_worker_tells_of_them(tmp_path: Path) -> None:
    root = tmp_path / "evals"
    assert compared_cases([]) is None
    found = compared_cases(runs_of(root, ["b", "a"], agent="x"))
    assert found == (root, [("a", "a", "x"), ("b", "b", "x")])
    assert told_cases(tmp_path) is None  # that worker collected no eval item
    tell_cases(tmp_path, *found)
    assert told_cases(tmp_path) == found


def earlier_session(results: Path, *names: str) -> Path:
    """A session of ``names`` kept under ``results``."""
    root = results.parent
    records = [run_record(case(root, n), arm, 1) for n in names for arm in ("with", "without")]
    folder = results / "2026-01-01T00-00-00"
    folder.mkdir(parents=True)
    (folder / "aggregate-result.json").write_text(dumps_document(summary(records)), "utf-8")
    return folder


def test_the_earlier_session_last_takes_and_one_named_that_cannot_be_read(tmp_path: Path) -> None:
    root = tmp_path / "evals"
    settings = replace(EvalSettings(), compare="last", agent="claude")
    cases = [("a", "a", "")]
    document, before, notices = find_earlier(settings, root, cases, "stamp", "--eval-compare")
    assert (document, before) == (None, None) and notices  # none yet: said
    kept = earlier_session(root / "results", "a")
    document, before, _ = find_earlier(settings, root, cases, "stamp", "--eval-compare")
    assert document == kept / "aggregate-result.json" and before is not None
    missing = replace(settings, compare=str(tmp_path / "missing"))
    with pytest.raises(EarlierError, match=r"^ini eval_compare: no result document at "):
        find_earlier(missing, root, cases, "stamp", "ini eval_compare")


def test_the_plan_takes_the_newest_earlier_session_of_the_cases(tmp_path: Path) -> None:
    root = tmp_path / "evals"
    runs = runs_of(root, ["a"])
    assert "from no earlier session" in session_plan(runs, EvalSettings(), "stamp")[0]
    earlier_session(root / "results", "a")
    assert "from the session of" in session_plan(runs, EvalSettings(), "stamp")[0]


def test_last_takes_the_newest_session_of_the_same_arms(tmp_path: Path) -> None:
    """After a with/without session, a -k subset, a replay, an A/B and an A/A session (newest
    last), ``--eval-compare last`` of a with/without session takes the with/without one; of an
    A/B one the A/B against the same baseline; of an A/A one the A/A; each passed over is
    said with why."""
    root = tmp_path / "evals"
    results = root / "results"
    ab = BaselinePlugin("/old", "demo", "1.0.0", "/old")

    def kept(name: str, arm: str = "without", **kw: object) -> Path:
        cases = [case(root, n) for n in ("steady", "breaks")]
        records = [run_record(c, a, 1) for c in cases for a in ("with", arm)]
        folder = results / name
        folder.mkdir(parents=True)
        (folder / "aggregate-result.json").write_text(
            dumps_document(summary(records, **kw)), "utf-8"
        )
        return folder

    made = [
        kept("both"),
        kept("subset", case_filter="steady"),
        kept("replay", agent="replay:/evals/results/both"),
        kept("ab", "baseline", ablation="with-baseline", baseline_plugins=(ab,)),
        kept("aa", aa=True),
    ]
    subset = json.loads((made[1] / "aggregate-result.json").read_text("utf-8"))
    subset["cases"] = [c for c in subset["cases"] if c["name"] == "steady"]
    (made[1] / "aggregate-result.json").write_text(json.dumps(subset), "utf-8")
    for n, folder in enumerate(made):
        os.utime(folder / "aggregate-result.json", (1_000 + n, 1_000 + n))
    cases = [("breaks", "breaks", ""), ("steady", "steady", "")]
    plain = replace(EvalSettings(), compare="last", agent="claude")

    def last(settings: EvalSettings) -> tuple[Path | None, list[str]]:
        document, _, said = find_earlier(settings, root, cases, "stamp", "--eval-compare")
        return document, said

    assert last(plain) == (
        made[0] / "aggregate-result.json",
        [
            "--eval-compare last: took results/both, the newest comparable session; passed over "
            "results/aa (an A/A session), results/ab (an A/B session against /old), "
            "results/replay (it is a replay), results/subset (a subset that did not run breaks)"
        ],
    )
    assert last(replace(plain, baseline_plugin="/old")) == (
        made[3] / "aggregate-result.json",
        [
            "--eval-compare last: took results/ab, the newest comparable session; passed over "
            "results/aa (an A/A session)"
        ],
    )
    assert last(replace(plain, baseline_plugin="/new"))[0] is None  # another baseline
    assert last(replace(plain, aa=True)) == (
        made[4] / "aggregate-result.json",
        ["--eval-compare last: took results/aa, the newest comparable session"],
    )
    os.utime(made[0] / "aggregate-result.json", (2_000, 2_000))  # the with/without, newest
    assert last(replace(plain, aa=True))[1] == [
        "--eval-compare last: took results/aa, the newest comparable session; passed over "
        "results/both (a with/without session)"
    ]
