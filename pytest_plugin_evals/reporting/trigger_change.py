"""Trigger accuracy before and after an edit (``--eval-baseline-plugin``): each skill's numbers
in the baseline arm (before) and the with arm (after), and the difference after − before of
each, with its 95% interval.

The two arms ran the same queries, so their numbers are paired, not independent. Each
difference's interval is the MOVER interval (Zou and Donner 2008) built from the two arms' own
95% intervals:

* **accuracy** and **recall** are proportions of the same queries (all of them; the
  should-trigger ones) in both arms: Newcombe's interval for paired proportions (1998, method
  10), the two Wilson intervals combined with the phi correlation of the paired verdicts, over
  the queries decided in both arms.
* **precision** is a proportion of the queries that triggered, a set that the edit changes: the
  correlation is taken as 0 (Newcombe's interval for independent proportions). Two versions of
  a description answering the same queries agree more than chance, so the correlation left out
  is positive, and leaving it out makes the interval wider, not narrower.
* **F1** gets the same: each arm's F1 interval (see :func:`stats.intervals.f1_interval`) and a
  correlation of 0.

The coverage of all four is checked by simulation in the tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pytest_plugin_evals.stats import Interval, mover, paired_phi


class Query(Protocol):
    """A query's verdict in one arm (:class:`~.triggers.QueryResult`)."""

    @property
    def should_trigger(self) -> bool: ...
    @property
    def triggered(self) -> bool | None: ...
    @property
    def right(self) -> bool | None: ...


class Skill(Protocol):
    """A skill's trigger results in one arm (:class:`~.triggers.SkillTriggers`)."""

    @property
    def queries(self) -> Sequence[Query]: ...
    def metrics(self) -> Mapping[str, tuple[float | None, Interval | None]]: ...


METRICS = ("precision", "recall", "f1", "accuracy")


@dataclass(frozen=True)
class Change:
    """One number before and after, and their difference (after − before)."""

    before: float | None
    before_interval: Interval | None
    after: float | None
    after_interval: Interval | None
    difference: float | None
    interval: Interval | None


def _phi(pairs: Sequence[tuple[bool, bool]]) -> float:
    both = sum(1 for a, b in pairs if a and b)
    first = sum(1 for a, b in pairs if a and not b)
    second = sum(1 for a, b in pairs if b and not a)
    return paired_phi(both, first, second, len(pairs) - both - first - second)


def changes(skill: Skill, baseline: Skill | None) -> dict[str, Change] | None:
    """Each number before (``baseline``: the same queries in the baseline arm, in order) and
    after (``skill``); None outside an A/B."""
    if baseline is None:
        return None
    after, before = skill.metrics(), baseline.metrics()
    pairs = [
        (a, b)
        for a, b in zip(skill.queries, baseline.queries, strict=False)
        if a.triggered is not None and b.triggered is not None
    ]
    should = [(a, b) for a, b in pairs if a.should_trigger]
    phi = {
        "accuracy": _phi([(bool(a.right), bool(b.right)) for a, b in pairs]),
        "recall": _phi([(bool(a.triggered), bool(b.triggered)) for a, b in should]),
    }
    found = {}
    for name in METRICS:
        (va, ia), (vb, ib) = after[name], before[name]
        diff = None if va is None or vb is None else round(va - vb, 10)
        interval = None
        if va is not None and vb is not None and ia is not None and ib is not None:
            interval = mover(va, ia, vb, ib, phi.get(name, 0.0))
        found[name] = Change(vb, ib, va, ia, diff, interval)
    return found
