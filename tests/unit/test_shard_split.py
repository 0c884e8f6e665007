"""The split of a suite into shards: every case exactly once, balanced, the same everywhere."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_plugin_evals.recording.recorded import recorded_durations
from pytest_plugin_evals.reporting.document_read import load_document, read_plan
from pytest_plugin_evals.settings import EvalSettings, shared_settings
from pytest_plugin_evals.shards import (
    DEFAULT_RUN_COST,
    Shard,
    ShardCase,
    ShardPlan,
    ShardSource,
    assign,
    case_cost,
    parse_shard,
    per_run_costs,
    plan_to_json,
    plugin_version,
    source_to_json,
    split,
)


def cases(n: int, costs: list[int] | None = None, runs: int = 4) -> list[ShardCase]:
    return [
        ShardCase(
            f"evals/c{i:02d}::c{i:02d}",
            f"c{i:02d}",
            f"c{i:02d}-{i:08x}",
            runs,
            costs[i] if costs else runs * DEFAULT_RUN_COST,
        )
        for i in range(n)
    ]


def loads(placed: tuple[ShardCase, ...], total: int) -> list[int]:
    return [sum(c.cost for c in placed if c.shard == k) for k in range(1, total + 1)]


@pytest.mark.parametrize(
    ("text", "shard"),
    [
        ("1/1", Shard(1, 1)),
        ("2/3", Shard(2, 3)),
        (" 3 / 3 ", Shard(3, 3)),
        ("10/12", Shard(10, 12)),
    ],
)
def test_parse_shard(text: str, shard: Shard) -> None:
    assert parse_shard(text) == shard
    assert str(parse_shard(text)) == f"{shard.index}/{shard.total}"


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "1/0", "a/b", "-1/3", "1/3/4", "", "1.5/3"])
def test_parse_shard_refuses(text: str) -> None:
    with pytest.raises(ValueError, match=r"must be K/N with 1 <= K <= N"):
        parse_shard(text)


@pytest.mark.parametrize("total", [1, 2, 3, 7, 40])
def test_every_case_lands_in_exactly_one_shard(total: int) -> None:
    given = cases(30)
    placed = assign(given, total)
    assert sorted(c.nodeid for c in placed) == sorted(c.nodeid for c in given)
    assert all(1 <= c.shard <= total for c in placed)
    by_shard = [{c.nodeid for c in placed if c.shard == k} for k in range(1, total + 1)]
    assert sum(len(s) for s in by_shard) == 30
    assert set().union(*by_shard) == {c.nodeid for c in given}


def test_equal_costs_deal_the_cases_out_in_sha256_order() -> None:
    """The reference: the cases sorted by the SHA-256 of their key, dealt out in turn."""
    given = cases(30)
    order = sorted(given, key=lambda c: hashlib.sha256(c.key.encode()).hexdigest())
    expected = {c.nodeid: i % 3 + 1 for i, c in enumerate(order)}
    assert {c.nodeid: c.shard for c in assign(given, 3)} == expected
    counts = [sum(1 for c in assign(given, 4) if c.shard == k) for k in range(1, 5)]
    assert sorted(counts) == [7, 7, 8, 8]


def test_the_split_does_not_depend_on_the_order_cases_come_in() -> None:
    given = cases(25, costs=[random.Random(i).randint(1, 9000) for i in range(25)])
    first = assign(given, 4)
    for seed in range(5):
        shuffled = list(given)
        random.Random(seed).shuffle(shuffled)
        assert assign(shuffled, 4) == first
    assert [c.nodeid for c in first] == sorted(c.nodeid for c in given)


def test_the_split_is_the_same_in_every_process() -> None:
    """No ``hash()``: other hash seeds (other processes, other machines) split the same."""
    code = (
        "import json, sys\n"
        "from pytest_plugin_evals.shards import ShardCase, assign\n"
        "cs = [ShardCase(f'n{i}', f'c{i}', f'k-{i}', 2, 1000 + (i * 37) % 500)\n"
        "      for i in range(40)]\n"
        "print(json.dumps([c.shard for c in assign(cs, 5)]))\n"
    )
    seen = set()
    for seed in ("1", "2", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        ).stdout
        seen.add(out)
    assert len(seen) == 1
    here = [ShardCase(f"n{i}", f"c{i}", f"k-{i}", 2, 1000 + (i * 37) % 500) for i in range(40)]
    assert json.loads(seen.pop()) == [c.shard for c in assign(here, 5)]


@pytest.mark.parametrize("seed", range(20))
def test_shards_are_balanced_within_one_case(seed: int) -> None:
    rng = random.Random(seed)
    total = rng.randint(2, 6)
    costs = [rng.randint(1, 20_000) for _ in range(rng.randint(total, 60))]
    placed = assign(cases(len(costs), costs), total)
    spread = loads(placed, total)
    assert max(spread) - min(spread) <= max(costs)


def _optimal(costs: list[int], total: int) -> int:
    """The least possible cost of the costliest shard (brute force)."""
    best = sum(costs)
    for choice in itertools.product(range(total), repeat=len(costs)):
        shards = [0] * total
        for cost, shard in zip(costs, choice, strict=True):
            shards[shard] += cost
        best = min(best, max(shards))
    return best


@pytest.mark.parametrize("seed", range(8))
def test_the_costliest_shard_is_within_grahams_bound_of_the_best_split(seed: int) -> None:
    rng = random.Random(seed)
    costs = [rng.randint(1, 50) * 100 for _ in range(8)]
    placed = assign(cases(8, costs), 3)
    # Longest-processing-time is within (4/3 - 1/(3m)) of the optimum (Graham, 1969).
    assert max(loads(placed, 3)) <= (4 / 3 - 1 / 9) * _optimal(costs, 3) + 1e-9


def test_a_costly_case_gets_a_shard_of_its_own() -> None:
    costs = [90_000] + [1_000] * 9
    placed = assign(cases(10, costs), 2)
    heavy = next(c for c in placed if c.cost == 90_000)
    assert all(c.shard != heavy.shard for c in placed if c is not heavy)


def test_more_shards_than_cases_leaves_shards_empty() -> None:
    placed = assign(cases(2), 3)
    assert sorted(c.shard for c in placed) == [1, 2]


def test_costs_from_recorded_durations() -> None:
    means, typical = per_run_costs({"a": [1.0, 3.0], "b": [10.0], "c": [4.0], "d": []})
    assert means == {"a": 2.0, "b": 10.0, "c": 4.0}
    assert typical == 4.0  # the median of the cases' means
    assert per_run_costs({"a": [1.0], "b": [2.0]})[1] == 1.5
    assert per_run_costs({}) == ({}, DEFAULT_RUN_COST / 1000)
    assert case_cost(4, None) == 4 * DEFAULT_RUN_COST
    assert case_cost(4, 2.5) == 10_000
    assert case_cost(2, 0.0) == 1  # a case always weighs something


def test_a_shard_weighs_its_cases_by_runs_or_by_recorded_durations() -> None:
    cases = [(f"evals/c{i}", f"c{i}", f"c{i}-key", 2) for i in range(4)]
    by_runs = split(Shard(2, 2), cases, None, {"runs": 2}, "/suite")
    assert (by_runs.index, by_runs.total, by_runs.weights) == (2, 2, "runs")
    assert [c.cost for c in by_runs.cases] == [2 * DEFAULT_RUN_COST] * 4
    assert sorted(c.shard for c in by_runs.cases) == [1, 1, 2, 2]
    assert by_runs.settings == {"runs": 2} and by_runs.root == "/suite"
    assert by_runs.version == plugin_version() != ""
    # c3 took ten times as long; c0 was not recorded: it weighs as the median case.
    durations = {"c1-key": [4.0], "c2-key": [4.0, 4.0], "c3-key": [40.0]}
    by_time = split(Shard(1, 2), cases, durations, {}, "")
    assert by_time.weights == "durations"
    assert [c.cost for c in by_time.cases] == [8000, 8000, 8000, 80000]
    assert [c.name for c in by_time.cases if c.shard == by_time.cases[3].shard] == ["c3"]
    assert split(Shard(1, 2), cases, {}, {}, "").weights == "durations"  # nothing recorded


def test_recorded_durations_are_read_leniently(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for rel, text in {
        "a-key/with-1": '{"durationSeconds": 3}',
        "a-key/without-1": '{"durationSeconds": 1.5}',
        "b-key/with-1": '{"durationSeconds": true}',
        "b-key/with-2": '{"durationSeconds": -1}',
        "b-key/with-3": "[1]",
        "c-key/with-1": "{not json",
        "c-key/with-2": '{"durationSeconds": Infinity}',
    }.items():
        (runs / rel).mkdir(parents=True)
        (runs / rel / "meta.json").write_text(text, encoding="utf-8")
    # another session's folder is hostile: a link to a device and a pipe are never read
    (runs / "d-key/with-1").mkdir(parents=True)
    (runs / "d-key/with-1/meta.json").symlink_to("/dev/zero")
    (runs / "d-key/with-2").mkdir(parents=True)
    os.mkfifo(runs / "d-key/with-2/meta.json")
    assert recorded_durations(tmp_path) == {"a-key": [3.0, 1.5]}
    assert recorded_durations(tmp_path / "nowhere") == {}


def test_the_settings_every_shard_shares() -> None:
    settings = EvalSettings(agents=(("a", "claude"), ("b", "codex")), no_judge=True, tags=("x",))
    shared = shared_settings(settings)
    assert shared["agent"] == "a=claude, b=codex"
    assert shared["judge"] is None and shared["noJudge"] is True
    assert shared["tagFilters"] == ["x"]
    assert shared_settings(EvalSettings(judge="openai"))["judge"] == "openai"
    assert shared_settings(EvalSettings())["agent"] == "claude"


def test_the_plan_and_the_sources_read_back() -> None:
    plan = ShardPlan(
        index=2,
        total=3,
        weights="durations",
        cases=assign(cases(5), 3),
        version="1.2.3",
        settings={"threshold": 0.8, "agent": "cmd:x", "tagFilters": ["a"]},
        root="/suite/evals",
    )
    text = json.dumps(plan_to_json(plan))
    doc = json.loads(text)
    assert read_plan(text) == plan
    assert [c["shard"] for c in doc["suiteCases"]] == [c.shard for c in plan.cases]
    assert plan.cases_of(2) == tuple(c for c in plan.cases if c.shard == 2)
    assert read_plan("null") is None
    assert read_plan('{"index": "2"}') is None  # not a plan: the session is not split
    source = ShardSource("shards/a", 1, 3, "2026-11-30T08:55:45.771Z", 3.5, ("x", "y"))
    merged = {"schemaVersion": 1, "shard": doc, "shards": [source_to_json(source)]}
    back = load_document(json.loads(json.dumps(merged)))
    assert back.shard == plan
    assert back.shards == (source,)


def test_the_shard_line_counts_this_shards_cases_of_all_and_says_how_to_merge() -> None:
    from pytest_plugin_evals.shards import ShardPlan, shard_line

    cases = tuple(ShardCase(f"n{i}", f"c{i}", f"k{i}", 2, 1000, shard=1 + i % 3) for i in range(7))
    line = shard_line(ShardPlan(2, 3, "durations", cases))
    assert line.startswith("shard 2/3: 2 of the 7 selected case(s) (weighed by durations);")
    assert line.endswith("python -m pytest_plugin_evals merge")
