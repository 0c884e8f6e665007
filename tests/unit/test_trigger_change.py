"""Trigger accuracy before and after (``--eval-baseline-plugin``): the difference of each number
and its 95% interval, whose coverage is checked here by simulation."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep

from pytest_plugin_evals.model import Case
from pytest_plugin_evals.reporting.trigger_change import METRICS, changes
from pytest_plugin_evals.reporting.triggers import QueryResult, SkillTriggers
from pytest_plugin_evals.stats.intervals import mover, paired_phi, wilson


def skill(after: list[tuple[bool, bool]], before: list[tuple[bool, bool]]) -> SkillTriggers:
    """A skill whose queries are ``(should_trigger, triggered)``, one run each, in both arms."""

    def queries(verdicts: list[tuple[bool, bool]]) -> tuple[QueryResult, ...]:
        return tuple(QueryResult(f"q{i}", s, 1, int(t), 0) for i, (s, t) in enumerate(verdicts))

    return SkillTriggers("s", queries(after), SkillTriggers("s", queries(before)))


def pair(found: SkillTriggers) -> tuple[SkillTriggers, SkillTriggers | None]:
    return found, found.baseline


def truth(p: float, q: float) -> dict[str, float]:
    """The population's numbers, half the queries should trigger: a should-trigger query
    triggers with chance ``p``, a should-not one with chance ``q``."""
    return {
        "precision": p / (p + q),
        "recall": p,
        "f1": 2 * p / (1 + p + q),
        "accuracy": (p + 1 - q) / 2,
    }


def sample(
    rng: random.Random, before: tuple[float, float], after: tuple[float, float], rho: float
) -> SkillTriggers:
    """20 queries (10 should trigger) answered by two versions of a description; with chance
    ``rho`` a query's two verdicts share their draw (the versions agree more than chance)."""
    pairs: tuple[list[tuple[bool, bool]], list[tuple[bool, bool]]] = ([], [])
    for i in range(20):
        should = i < 10
        u = rng.random()
        w = u if rng.random() < rho else rng.random()
        pairs[0].append((should, w < after[0 if should else 1]))
        pairs[1].append((should, u < before[0 if should else 1]))
    return skill(*pairs)


@pytest.mark.parametrize(
    ("before", "after", "rho"),
    [
        ((0.5, 0.2), (0.9, 0.1), 0.7),  # the edit helps: recall up, false positives down
        ((0.6, 0.2), (0.6, 0.2), 0.0),  # no change, the versions' verdicts independent
        ((0.8, 0.1), (0.8, 0.1), 0.9),  # no change, the versions nearly always agree
    ],
)
def test_each_differences_interval_covers_the_true_difference(
    before: tuple[float, float], after: tuple[float, float], rho: float
) -> None:
    rng = random.Random(7)
    then, now = truth(*before), truth(*after)
    sims = 150
    covered = dict.fromkeys(METRICS, 0)
    made = dict.fromkeys(METRICS, 0)
    for _ in range(sims):
        found = changes(*pair(sample(rng, before, after, rho)))
        assert found is not None
        for name in METRICS:
            interval = found[name].interval
            if interval is None:  # undefined in a sample (nothing triggered): not an interval
                continue
            made[name] += 1
            covered[name] += interval[0] - 1e-9 <= now[name] - then[name] <= interval[1] + 1e-9
    rates = {name: covered[name] / made[name] for name in METRICS}
    assert all(made[name] >= 0.9 * sims for name in METRICS), made
    # 95% intervals; 150 samples measure coverage within about ±3.5 points (2 s.e.)
    assert all(rate >= 0.91 for rate in rates.values()), rates


def test_arms_that_agree_on_every_query_still_get_an_interval() -> None:
    verdicts = [(True, True)] * 8 + [(True, False)] * 2 + [(False, False)] * 9 + [(False, True)]
    found = changes(*pair(skill(verdicts, verdicts)))
    assert found is not None
    for name in METRICS:
        change = found[name]
        assert change.difference == 0
        assert change.before == change.after
        assert change.interval is not None
        # 20 queries cannot show that nothing changed: the interval is not a point
        assert change.interval[0] < -0.05 and change.interval[1] > 0.05, (name, change)


def test_accuracy_pairs_the_queries_and_precision_does_not() -> None:
    before = [(True, False)] * 4 + [(True, True)] * 6 + [(False, True)] * 3 + [(False, False)] * 7
    after = [(True, True)] * 10 + [(False, True)] * 1 + [(False, False)] * 9
    found = changes(*pair(skill(after, before)))
    assert found is not None
    # precision 10/11 after, 6/9 before: Newcombe's interval for independent proportions
    low, high = confint_proportions_2indep(10, 11, 6, 9, method="newcomb", compare="diff")
    assert found["precision"].interval == pytest.approx((low, high), abs=1e-9)
    # accuracy 19/20 after, 13/20 before over the same queries: the pairs count
    n = 20
    table = (13, 6, 0, 1)  # right in both, after only, before only, neither
    phi = paired_phi(*table)
    assert phi > 0
    paired = mover(19 / n, wilson(19, n) or (0, 1), 13 / n, wilson(13, n) or (0, 1), phi)
    assert found["accuracy"].interval == pytest.approx(paired)
    unpaired = mover(19 / n, wilson(19, n) or (0, 1), 13 / n, wilson(13, n) or (0, 1))
    assert paired[1] - paired[0] < unpaired[1] - unpaired[0]
    assert found["accuracy"].difference == pytest.approx(0.3)
    assert found["accuracy"].interval[0] > 0  # type: ignore[index]


def test_a_query_not_decided_in_one_arm_is_left_out_of_the_pairs() -> None:
    after = SkillTriggers(
        "s",
        (QueryResult("a", True, 3, 3, 0), QueryResult("b", False, 0, 0, 3)),
        SkillTriggers("s", (QueryResult("a", True, 3, 0, 0), QueryResult("b", False, 3, 0, 0))),
    )
    found = changes(*pair(after))
    assert found is not None
    assert (found["recall"].before, found["recall"].after) == (0.0, 1.0)
    assert found["accuracy"].after == 1.0  # b's runs were not made: only a counts
    assert found["accuracy"].before == 0.5


def test_outside_an_ab_there_is_no_change() -> None:
    assert changes(SkillTriggers("s", (QueryResult("a", True, 1, 1, 0),)), None) is None


@pytest.mark.parametrize(("p", "q"), [(0.7, 0.2), (0.95, 0.05), (0.3, 0.1)])
def test_an_arms_f1_interval_covers_its_f1(p: float, q: float) -> None:
    """Each arm's own F1 interval, which the difference is built from: a bootstrap over the
    queries covered 0.63 of the time at (0.95, 0.05), collapsing when every query is right."""
    rng = random.Random(11)
    sims, covered = 600, 0
    for _ in range(sims):
        verdicts = [(i < 10, rng.random() < (p if i < 10 else q)) for i in range(20)]
        interval = skill(verdicts, verdicts).metrics()["f1"][1]
        assert interval is not None
        covered += interval[0] - 1e-9 <= truth(p, q)["f1"] <= interval[1] + 1e-9
    assert covered / sims >= 0.92


def _ab_result(tmp_path: Path, worse_now: bool = False) -> Any:
    """A session's result in an A/B: two queries, each run once in each arm, each right in
    the with arm and wrong in the baseline (``worse_now``: the other way round)."""
    from pytest_plugin_evals.model import RunResult, ToolCall, brief_tool_calls
    from pytest_plugin_evals.records import CaseInfo, RunRecord
    from pytest_plugin_evals.reporting.result import SessionFacts, summarize
    from pytest_plugin_evals.scoring import ScoringRules
    from tests.unit.test_triggers import load

    cases = [c for c in load(tmp_path, [
        {"query": "prove it", "should_trigger": True},
        {"query": "sort a list", "should_trigger": False},
    ]) if isinstance(c, Case)]  # fmt: skip
    records = []
    fires = ({"with": True, "baseline": False}, {"with": False, "baseline": True})
    if worse_now:
        fires = ({"with": False, "baseline": True}, {"with": True, "baseline": False})
    for case, fired in zip(cases, fires, strict=True):
        for arm in ("with", "baseline"):
            calls = [ToolCall("Skill", {"skill": "kit:olympiad"})] if fired[arm] else []
            right = fired[arm] == case.graders[0].config["should_trigger"]
            result = RunResult(
                arm=arm, run=1, score=float(right), passed=right,
                tool_call_list=brief_tool_calls(calls), tool_calls=len(calls),
            )  # fmt: skip
            records.append(
                RunRecord(f"t::{case.name}[{arm}-1]", CaseInfo.of(case), None, True, result)
            )
    facts = SessionFacts(
        started_at="t", duration_seconds=1, ablation="with-baseline", concurrency=1,
        agent="claude",
    )  # fmt: skip
    return summarize(records, facts, ScoringRules(threshold=1.0))


def test_the_baseline_block_survives_the_documents_round_trip(tmp_path: Path) -> None:
    from pytest_plugin_evals.reporting.document import dumps_document, read_document
    from pytest_plugin_evals.reporting.triggers import trigger_json, trigger_results

    result = _ab_result(tmp_path)
    (written,) = trigger_json(trigger_results(result.cases))
    assert written["matrix"] == {"tp": 1, "fp": 0, "fn": 0, "tn": 1}
    assert written["baseline"]["matrix"] == {"tp": 0, "fp": 1, "fn": 1, "tn": 0}
    assert written["baseline"]["difference"]["accuracy"]["value"] == 1.0
    text = dumps_document(result)
    assert json.loads(text)["triggers"] == [written]
    again = read_document(text)  # a merge or a comparison reads it back from the runs
    assert trigger_json(trigger_results(again.cases)) == [written]


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        (("baseline", "difference", "f1", "value"), 2,
         "expected a number from -1 to 1 or null, found 2 "
         "(at $.triggers[0].baseline.difference.f1.value)"),
        (("baseline", "difference", "recall", "interval"), [-0.5, 0.2, 0.9],
         "expected a list of two numbers (low, high) or null, found a list "
         "(at $.triggers[0].baseline.difference.recall.interval)"),
        (("baseline", "matrix", "tp"), -1,
         "expected a count (0 or more) or null, found -1 (at $.triggers[0].baseline.matrix.tp)"),
        (("baseline", "precision", "value"), 1.5,
         "expected a number from 0 to 1 or null, found 1.5 "
         "(at $.triggers[0].baseline.precision.value)"),
        (("baseline", "queries"), [{"query": 3}],
         "expected a string or null, found 3 (at $.triggers[0].baseline.queries[0].query)"),
        (("baseline",), "<script>",
         "expected an object or null, found a string (at $.triggers[0].baseline)"),
    ],
)  # fmt: skip
def test_a_hostile_baseline_block_is_one_line(
    tmp_path: Path, where: tuple[str, ...], value: object, message: str
) -> None:
    from pytest_plugin_evals.reporting.document import (
        DocumentError,
        document_json,
        dumps_document,
        read_document,
    )

    doc = json.loads(dumps_document(document_json(_ab_result(tmp_path))))
    target = doc["triggers"][0]
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    with pytest.raises(DocumentError) as info:
        read_document(json.dumps(doc))
    assert str(info.value) == message


def test_the_with_arms_f1_gates_and_the_baselines_does_not(tmp_path: Path) -> None:
    """``--eval-trigger-threshold`` gates on the working tree's F1 (the with arm), never on
    the baseline's: better now passes it, worse now fails it naming the with arm's F1."""
    from pytest_plugin_evals.engine.gates import trigger_gate

    assert trigger_gate(_ab_result(tmp_path / "better"), 0.9) is None
    worse = trigger_gate(_ab_result(tmp_path / "worse", worse_now=True), 0.9)
    assert worse is not None and worse.reason == (
        "--eval-trigger-threshold 0.9: the trigger F1 of 1 skill(s) is below it: olympiad (0.00)"
    )
