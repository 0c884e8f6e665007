"""A session compared with an earlier one: per case before/after, the change's 95% interval
(reference values from statsmodels and scipy) and the verdict."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep

from pytest_plugin_evals.engine.gates import regression_gate
from pytest_plugin_evals.model import Case
from pytest_plugin_evals.reporting.compare import Comparison, compare, comparison_json
from pytest_plugin_evals.reporting.document import document_json, dumps_document, load_document
from pytest_plugin_evals.reporting.terminal import comparison_lines, summary_lines
from tests.helpers import run_record, summary

ROOT = Path("/suite/evals")


def case(name: str, folder: str | None = None) -> Case:
    where = ROOT / (folder or name)
    return Case(
        name=name,
        prompt=f"Prompt of {name}",
        source="prose",
        path=where / "prompt.md",
        dir=where,
        suite_root=ROOT,
        runs=3,
    )


def runs(c: Case, scores: Sequence[float], without: Sequence[float] | None = None) -> list[Any]:
    two_arm = without is not None
    records = [
        run_record(c, "with" if two_arm else "single", n, score=s, two_arm=two_arm)
        for n, s in enumerate(scores, 1)
    ]
    for n, s in enumerate(without or (), 1):
        records.append(run_record(c, "without", n, score=s, two_arm=True))
    return records


def session(*cases: list[Any], started_at: str = "2026-01-01T00:00:00.000Z") -> Any:
    records = [r for group in cases for r in group]
    return summary(records, started_at=started_at, threshold=1.0, ablation="none")


def newcombe(after: Sequence[float], before: Sequence[float]) -> tuple[float, float]:
    """statsmodels' Newcombe interval of mean(after) - mean(before), for 0/1 scores."""
    low, high = confint_proportions_2indep(
        int(sum(after)), len(after), int(sum(before)), len(before), method="newcomb"
    )
    return float(low), float(high)


def by_name(comparison: Comparison) -> dict[str, Any]:
    return {c.name: c for c in comparison.cases}


def test_a_case_that_fails_every_run_now_regressed_beyond_noise() -> None:
    c = case("broke")
    before, after = session(runs(c, [1, 1, 1])), session(runs(c, [0, 0, 0]))
    (change,) = compare(before, after, "/old/aggregate-result.json").cases
    assert (change.before, change.after, change.change) == (1.0, 0.0, -1.0)
    assert change.change_interval == pytest.approx(newcombe([0, 0, 0], [1, 1, 1]), abs=1e-9)
    assert change.change_interval is not None and change.change_interval[1] < 0
    assert change.verdict == "worse"


def test_improved_unchanged_and_noise() -> None:
    fixed, steady, wobbly = case("fixed"), case("steady"), case("wobbly")
    before = session(runs(fixed, [0, 0, 0, 0]), runs(steady, [1, 1, 1]), runs(wobbly, [1, 0, 1]))
    after = session(runs(fixed, [1, 1, 1, 1]), runs(steady, [1, 1, 1]), runs(wobbly, [0, 1, 0]))
    changes = by_name(compare(before, after, "x"))
    assert changes["fixed"].verdict == "better"
    assert changes["fixed"].change_interval == pytest.approx(
        newcombe([1, 1, 1, 1], [0, 0, 0, 0]), abs=1e-9
    )
    assert changes["steady"].verdict == "inconclusive"
    assert changes["steady"].change == 0.0
    assert changes["steady"].change_interval == pytest.approx(
        newcombe([1, 1, 1], [1, 1, 1]), abs=1e-9
    )
    # A third of the runs flipped the other way: a change of -1/3, well within noise.
    assert changes["wobbly"].change == pytest.approx(-1 / 3, abs=1e-9)
    assert changes["wobbly"].change_interval == pytest.approx(
        newcombe([0, 1, 0], [1, 0, 1]), abs=1e-9
    )
    assert changes["wobbly"].verdict == "inconclusive"


def test_an_improvement_alone_does_not_fail_a_session_on_regression() -> None:
    """A case that went from failing to passing is said as better, and
    ``--eval-fail-on-regression`` leaves the session's status alone."""
    fixed = case("fixed")
    before, after = session(runs(fixed, [0, 0, 0])), session(runs(fixed, [1, 1, 1]))
    comparison = compare(before, after, "/old/aggregate-result.json")
    assert comparison.counts["better"] == 1 and comparison.regressed is False
    low, high = newcombe([1, 1, 1], [0, 0, 0])
    assert comparison_lines(comparison)[:2] == [
        "compared with 2026-01-01T00:00:00.000Z: 1 better",
        f"better  fixed  0.00 → 1.00  +1.00 [{low:+.2f}, {high:+.2f}]",
    ]
    assert regression_gate(replace(after, comparison=comparison), True) is None


def test_a_single_run_each_is_never_beyond_noise() -> None:
    c = case("once")
    changes = compare(session(runs(c, [1])), session(runs(c, [0])), "x").cases
    assert changes[0].change == -1.0
    assert changes[0].change_interval == pytest.approx(newcombe([0], [1]), abs=1e-9)
    assert changes[0].verdict == "inconclusive"


def test_partial_scores_use_newcombe_with_fractional_counts() -> None:
    c = case("partial")
    old, new = [0.5, 0.6, 0.7], [0.9, 0.95, 1.0]
    (change,) = compare(session(runs(c, old)), session(runs(c, new)), "x").cases
    reference = confint_proportions_2indep(
        sum(new), 3, sum(old), 3, method="newcomb", compare="diff"
    )
    assert change.change_interval == pytest.approx(tuple(reference), abs=1e-8)
    assert change.change == pytest.approx(0.35)
    worse = compare(session(runs(c, new)), session(runs(c, old)), "x").cases[0]
    assert worse.change_interval == pytest.approx((-reference[1], -reference[0]), abs=1e-8)


def test_constant_partial_scores_regress() -> None:
    """The regression of the issue: every run scored 1.00, then every run 0.33 (weighted
    graders): no spread in either session, and still a regression beyond noise."""
    c = case("partial")
    before, after = session(runs(c, [1.0] * 4)), session(runs(c, [1 / 3] * 4))
    (change,) = compare(before, after, "x").cases
    assert change.change_interval is not None and change.change_interval[1] < 0
    assert change.verdict == "worse"
    (back,) = compare(after, before, "x").cases
    assert back.verdict == "better"


def test_cases_match_by_name_and_folder_new_and_gone() -> None:
    kept, moved_old, moved_new = case("kept"), case("moved", "a"), case("moved", "b")
    dropped, added = case("dropped"), case("added")
    before = session(runs(kept, [1, 1]), runs(moved_old, [1, 1]), runs(dropped, [0, 1]))
    after = session(runs(added, [1, 1]), runs(kept, [1, 1]), runs(moved_new, [0, 0]))
    result = compare(before, after, "/old/aggregate-result.json")
    got = [(c.name, c.dir, c.verdict, c.before, c.after, c.change) for c in result.cases]
    assert got == [
        # this session's cases in their order (by folder), then those only the earlier ran
        ("added", "added", "new", None, 1.0, None),
        ("moved", "b", "new", None, 0.0, None),
        ("kept", "kept", "inconclusive", 1.0, 1.0, 0.0),
        ("moved", "a", "gone", 1.0, None, None),
        ("dropped", "dropped", "gone", 0.5, None, None),
    ]
    assert all(c.change_interval is None for c in result.cases if c.verdict in ("new", "gone"))
    assert result.counts == {
        "better": 0,
        "worse": 0,
        "equivalent": 0,
        "inconclusive": 1,
        "new": 2,
        "gone": 2,
        "not run": 0,
    }
    assert result.regressed is False
    assert result.against_started_at == "2026-01-01T00:00:00.000Z"


def test_runs_that_could_not_be_made_are_left_out() -> None:
    c = case("flaky-infra")
    before = session(runs(c, [1, 1, 1]))
    after_runs = [*runs(c, [1, 1, 1]), run_record(c, "single", 4, infra="rate_limit")]
    (change,) = compare(before, session(after_runs), "x").cases
    assert (change.before, change.after, change.verdict) == (1.0, 1.0, "inconclusive")
    assert change.change_interval == pytest.approx(newcombe([1, 1, 1], [1, 1, 1]), abs=1e-9)


def test_deltas_of_both_sessions() -> None:
    c = case("two-arm")
    before = session(runs(c, [1, 1], without=[0, 0]))
    after = session(runs(c, [1, 0], without=[0, 0]))
    (change,) = compare(before, after, "x").cases
    assert (change.delta_before, change.delta_after) == (1.0, 0.5)


def test_comparison_json_has_the_agreed_shape() -> None:
    broke, new = case("broke"), case("new-one")
    before = session(runs(broke, [1, 1, 1]), started_at="2026-02-03T04:05:06.789Z")
    after = session(runs(broke, [0, 0, 0]), runs(new, [1, 1, 1]))
    doc = comparison_json(compare(before, after, "/old/aggregate-result.json"))
    assert list(doc) == ["against", "againstStartedAt", "cases", "counts", "regressed"]
    assert doc["against"] == "/old/aggregate-result.json"
    assert doc["againstStartedAt"] == "2026-02-03T04:05:06.789Z"
    low, high = newcombe([0, 0, 0], [1, 1, 1])
    assert doc["cases"][0] == {
        "name": "broke",
        "dir": "broke",
        "before": 1.0,
        "after": 0.0,
        "change": -1.0,
        "changeInterval": [pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9)],
        "deltaBefore": None,
        "deltaAfter": None,
        "verdict": "worse",
        "decision": {"verdict": "worse", "claim": "worse", "pValue": pytest.approx(0.0, abs=0.05)},
    }
    assert doc["cases"][1]["verdict"] == "new"
    assert doc["counts"] == {
        "better": 0,
        "worse": 1,
        "equivalent": 0,
        "inconclusive": 0,
        "new": 1,
        "gone": 0,
        "not run": 0,
    }
    assert doc["regressed"] is True
    json.dumps(doc, allow_nan=False)


def test_the_document_holds_the_comparison_and_reads_it_back() -> None:
    broke = case("broke")
    before = session(runs(broke, [1, 1, 1]))
    after = session(runs(broke, [0, 0, 0]))
    assert "comparison" not in document_json(after)
    compared = replace(after, comparison=compare(before, after, "p"))
    doc = json.loads(dumps_document(compared))
    assert doc["comparison"]["counts"]["worse"] == 1
    again = load_document(doc)
    assert again.comparison == compared.comparison
    assert document_json(again)["comparison"] == doc["comparison"]


def test_an_earlier_document_read_back_compares_like_the_session() -> None:
    """The earlier session comes from its aggregate-result.json: every run's score is there."""
    c, other = case("broke"), case("other", "nested/other")
    before = session(runs(c, [1, 1, 1]), runs(other, [0.5, 1.0]))
    after = session(runs(c, [0, 0, 0]), runs(other, [0.5, 1.0]))
    read = load_document(json.loads(dumps_document(before)))
    assert compare(read, after, "p") == compare(before, after, "p")
    assert by_name(compare(read, after, "p"))["other"].dir == "nested/other"


def test_terminal_section() -> None:
    broke, steady, dropped = case("broke"), case("steady"), case("dropped")
    before = session(
        runs(broke, [1, 1, 1]),
        runs(steady, [1, 1, 1]),
        runs(dropped, [1, 1, 1]),
        started_at="2026-02-03T04:05:06.789Z",
    )
    after = session(runs(broke, [0, 0, 0]), runs(steady, [1, 1, 1]))
    comparison = compare(before, after, "p")
    low, high = newcombe([0, 0, 0], [1, 1, 1])
    assert comparison_lines(comparison) == [
        "compared with 2026-02-03T04:05:06.789Z: 1 worse, 1 inconclusive, 1 gone",
        f"worse  broke    1.00 → 0.00  -1.00 [{low:+.2f}, {high:+.2f}]",
        "gone   dropped  1.00 → —",
        "changes: 1 worse (broke), 1 inconclusive (steady: about 32 more run(s)) — false "
        "discovery rate held at 5% over 2 changes (Benjamini–Hochberg)",
    ]
    compared = replace(after, comparison=comparison)
    lines = summary_lines(compared, report_paths=["/r/aggregate-result.json"])
    start = lines.index(comparison_lines(comparison)[0])
    assert lines[start : start + 4] == comparison_lines(comparison)
    assert lines[-1] == "JSON: /r/aggregate-result.json"
    assert not any(line.startswith("compared with") for line in summary_lines(after))


def test_hostile_case_names_are_plain_in_the_terminal() -> None:
    c = case("\x1b[2Jgone\rwild")
    comparison = compare(session(runs(c, [1, 1])), session(), "p")
    assert "\x1b" not in "".join(comparison_lines(comparison))
    assert "\r" not in "".join(comparison_lines(comparison))


def test_a_case_whose_graders_changed_is_marked_and_said() -> None:
    """A grader's options changed: the case's change is partly the graders'. Graders read back
    from the earlier session's document compare equal to the same graders now."""
    from pytest_plugin_evals.model import GraderSpec

    def graded(name: str, pattern: str) -> Case:
        spec = GraderSpec("says", "regex", {"target": "answer", "pattern": pattern}, weight=2)
        return replace(case(name), graders=(spec,))

    kept, moved = graded("kept", "Paris"), graded("moved", "Paris")
    before = session(runs(kept, [1, 1, 1]), runs(moved, [1, 1, 1]))
    after = session(runs(kept, [1, 1, 1]), runs(graded("moved", "Lyon"), [0, 0, 0]))
    read = load_document(json.loads(dumps_document(before)))
    for earlier in (before, read):
        found = by_name(compare(earlier, after, "p"))
        assert not found["kept"].graders_changed
        assert found["moved"].graders_changed
    comparison = compare(read, after, "p")
    doc = comparison_json(comparison)
    assert [c.get("gradersChanged") for c in doc["cases"]] == [None, True]
    compared = replace(after, comparison=comparison)
    assert load_document(json.loads(dumps_document(compared))).comparison == comparison
    assert comparison_lines(comparison)[-1] == (
        "graders changed since then in 1 case(s) (moved): their change measures the graders' "
        "as well as the plugin's"
    )
