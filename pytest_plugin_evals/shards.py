"""Splitting a suite's cases into shards, and the record a shard's document keeps of the split.

``--eval-shard K/N`` runs the K-th of N parts of the selected cases, so the N parts can run as N
jobs of a CI matrix and be merged into one result (``python -m pytest_plugin_evals merge``).
A case is the unit: every case lands in exactly one shard with all its arms and runs, so each
shard's Δ is whole.

The split is the same on every machine and Python version: each case is known by its
suite-relative key (the name of its folder under ``runs/``), ordered by its expected cost, then
by the SHA-256 of its key (never ``hash()``, which changes between processes), and given to the
shard with the least cost so far (greedy longest-processing-time). With equal costs that deals
the cases out in turn, so the shards' case counts differ by one at most; in general the
costliest and cheapest shards differ by at most the cost of one case.
"""

from __future__ import annotations

import hashlib
import heapq
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from pytest_plugin_evals.util.jsonlines import camel_fields

#: ``K/N``, with spaces allowed around the slash.
_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")

#: What a shard's cases are weighed by: their run count, or their runs' recorded durations.
WEIGHTS = ("runs", "durations")

#: The cost of one run when nothing was recorded (milliseconds: costs are whole numbers, so
#: their sums are the same on every machine).
DEFAULT_RUN_COST = 1000


@dataclass(frozen=True)
class Shard:
    """The ``index``-th (from 1) of ``total`` shards."""

    index: int
    total: int

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"


def parse_shard(text: str) -> Shard:
    """``"2/3"`` as a :class:`Shard`; :class:`ValueError` saying what is accepted otherwise."""
    found = _SHARD.fullmatch(text)
    if found is not None:
        index, total = int(found.group(1)), int(found.group(2))
        if 1 <= index <= total:
            return Shard(index, total)
    raise ValueError(f"must be K/N with 1 <= K <= N, such as 2/3 (got {text!r})")


@dataclass(frozen=True)
class ShardCase:
    """One selected case of the suite, and the shard it went to."""

    #: The node id every run item of the case shares (its id without the run label).
    nodeid: str
    name: str
    #: The case's suite-relative key: its folder's name under ``runs/``.
    key: str
    #: Its selected run items (arms × runs).
    runs: int
    #: Its expected cost (milliseconds of runs, or :data:`DEFAULT_RUN_COST` per run).
    cost: int
    shard: int = 0


@dataclass(frozen=True)
class ShardPlan:
    """How a session's selected cases were split, as the shard's document records it."""

    index: int
    total: int
    #: ``runs`` or ``durations`` (see :data:`WEIGHTS`).
    weights: str
    #: Every selected case of the suite, in every shard, in node id order.
    cases: tuple[ShardCase, ...]
    #: The version of pytest-plugin-evals that ran the shard.
    version: str = ""
    #: The settings every shard of one suite must share (besides the suite's own fields).
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: The folder of the suite the split was made in (its results go under it).
    root: str = ""

    @property
    def shard(self) -> Shard:
        return Shard(self.index, self.total)

    def cases_of(self, index: int) -> tuple[ShardCase, ...]:
        return tuple(c for c in self.cases if c.shard == index)


@dataclass(frozen=True)
class ShardSource:
    """Where a merged result's runs came from: one shard's results folder."""

    path: str
    index: int
    total: int
    started_at: str
    duration_seconds: float
    cases: tuple[str, ...]


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def assign(cases: Sequence[ShardCase], total: int) -> tuple[ShardCase, ...]:
    """``cases`` with their ``shard`` set (1 to ``total``), in node id order.

    Greedy longest-processing-time: the costliest case first (ties: by the SHA-256 of its key,
    then its node id), each to the shard with the least cost so far (ties: the lowest shard).
    """
    if total < 1:
        raise ValueError(f"a suite is split into 1 or more shards (got {total})")
    order = sorted(cases, key=lambda c: (-c.cost, _digest(c.key), c.nodeid))
    loads = [(0, index) for index in range(1, total + 1)]  # already a heap
    placed: list[ShardCase] = []
    for case in order:
        load, index = heapq.heappop(loads)
        placed.append(
            ShardCase(case.nodeid, case.name, case.key, case.runs, case.cost, shard=index)
        )
        heapq.heappush(loads, (load + case.cost, index))
    return tuple(sorted(placed, key=lambda c: c.nodeid))


def case_cost(runs: int, per_run: float | None) -> int:
    """A case's expected cost: its runs × the recorded seconds per run (as milliseconds), or
    :data:`DEFAULT_RUN_COST` per run when nothing was recorded."""
    if per_run is None:
        return runs * DEFAULT_RUN_COST
    return max(1, round(runs * per_run * 1000))


def plugin_version() -> str:
    """The installed version of pytest-plugin-evals (shards of one suite must share it)."""
    try:
        return version("pytest-plugin-evals")
    except PackageNotFoundError:
        return "unknown"


def split(
    shard: Shard,
    cases: Sequence[tuple[str, str, str, int]],
    durations: Mapping[str, Sequence[float]] | None,
    settings: Mapping[str, Any],
    root: str,
) -> ShardPlan:
    """The split of the selected ``cases`` (node id, name, key, run items) as ``shard``'s
    document records it: weighed by ``durations`` (recorded seconds per run, by case key;
    None: by their runs), with the ``settings`` every shard must share."""
    per_run, typical = per_run_costs(durations) if durations is not None else ({}, None)
    weighed = [
        ShardCase(nodeid, name, key, runs, case_cost(runs, per_run.get(key, typical)))
        for nodeid, name, key, runs in cases
    ]
    return ShardPlan(
        index=shard.index,
        total=shard.total,
        weights="runs" if durations is None else "durations",
        cases=assign(weighed, shard.total),
        version=plugin_version(),
        settings=settings,
        root=root,
    )


def per_run_costs(durations: Mapping[str, Sequence[float]]) -> tuple[dict[str, float], float]:
    """Each case key's mean seconds per recorded run, and the median of those means (the
    estimate for a case that was not recorded, such as a new one)."""
    means = {key: sum(d) / len(d) for key, d in sorted(durations.items()) if d}
    ordered = sorted(means.values())
    if not ordered:
        return {}, DEFAULT_RUN_COST / 1000
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return means, median


# -- the document's form -------------------------------------------------------------------


def plan_to_json(plan: ShardPlan) -> dict[str, Any]:
    return {
        **camel_fields(plan, "index", "total", "weights", "version"),
        "settings": dict(plan.settings),
        "suiteRoot": plan.root,
        "suiteCases": [
            camel_fields(c, "name", "nodeid", "key", "runs", "cost", "shard") for c in plan.cases
        ],
    }


def source_to_json(source: ShardSource) -> dict[str, Any]:
    return {
        **camel_fields(source, "path", "index", "total", "started_at", "duration_seconds"),
        "cases": list(source.cases),
    }


def shard_line(plan: ShardPlan) -> str:
    """``shard 2/3: 10 of the 30 selected case(s) (weighed by runs)``."""
    mine = len(plan.cases_of(plan.index))
    return (
        f"shard {plan.index}/{plan.total}: {mine} of the {len(plan.cases)} selected case(s) "
        f"(weighed by {plan.weights}); merge the shards' results folders with "
        "python -m pytest_plugin_evals merge"
    )
