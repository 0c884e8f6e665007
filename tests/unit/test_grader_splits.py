"""Which graders discriminate: each grader's passes per arm, Δ with Newcombe's interval, the
flag; the terminal's line; the document's ``graderSplits``, computed again whenever a document
is read back; the figures the docs give for the flag."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from math import comb
from pathlib import Path
from typing import Any

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep

from pytest_plugin_evals.model import Case, GraderSpec, RunResult, Verdict
from pytest_plugin_evals.reporting.document import document_json, dumps_document, load_document
from pytest_plugin_evals.reporting.document_error import DocumentError
from pytest_plugin_evals.reporting.grader_splits import (
    BOTH,
    CASES_SHOWN,
    DISCRIMINATES,
    NEITHER,
    NOT_SHOWN,
    GraderSplit,
    blind_line,
    grader_lines,
    grader_splits,
    split_graders,
)
from pytest_plugin_evals.reporting.terminal import summary_lines
from pytest_plugin_evals.stats.intervals import newcombe
from tests.helpers import run_record, summary

ROOT = Path("/suite/evals")
DOCS = Path(__file__).resolve().parents[2] / "docs"


def runs(*passed: bool | None, name: str = "g", arm: str = "with", **kw: Any) -> list[RunResult]:
    """One run per entry, each with one verdict of grader ``name`` (None: it did not judge)."""
    return [
        RunResult(
            arm=arm,  # type: ignore[arg-type]
            run=n,
            verdicts=(Verdict(name, p, "why", skipped=None if p is not None else "cost ceiling"),),
            **kw,
        )
        for n, p in enumerate(passed, start=1)
    ]


def only(with_: list[RunResult], without: list[RunResult] | None) -> GraderSplit:
    (split,) = split_graders(with_, without)
    return split


def test_each_flag_from_the_runs() -> None:
    T, F = True, False
    assert only(runs(T, T, T), runs(T, T, T, arm="without")).flag == BOTH
    assert only(runs(F, F, F), runs(F, F, F, arm="without")).flag == NEITHER
    assert only(runs(T, T, T), runs(F, F, F, arm="without")).flag == DISCRIMINATES
    assert only(runs(F, F, F), runs(T, T, T, arm="without")).flag == DISCRIMINATES
    assert only(runs(T, T, F), runs(F, F, F, arm="without")).flag == NOT_SHOWN
    # 10 of 10 against 9 of 10: the second arm failed it once, so it is not "both".
    nine = only(runs(*[T] * 10), runs(*[T] * 9, F, arm="without"))
    assert (nine.flag, nine.counts, nine.delta) == (NOT_SHOWN, "10/10, 9/10", 0.1)


@pytest.mark.parametrize(("k1", "n1", "k2", "n2"), [(3, 3, 0, 3), (2, 3, 1, 3), (9, 10, 10, 10)])
def test_the_interval_is_newcombes(k1: int, n1: int, k2: int, n2: int) -> None:
    split = only(
        runs(*[True] * k1, *[False] * (n1 - k1)),
        runs(*[True] * k2, *[False] * (n2 - k2), arm="without"),
    )
    expected = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff")
    assert split.delta_interval == pytest.approx(expected, abs=1e-9)
    assert split.delta == pytest.approx(k1 / n1 - k2 / n2)


def test_runs_not_graded_and_verdicts_not_judged_are_left_out() -> None:
    with_ = [
        *runs(True, True),
        *runs(False, infra_error="judge"),  # a grader could not reach a verdict: not graded
        *runs(None),  # skipped under the cost ceiling: not judged
    ]
    split = only(with_, runs(True, arm="without"))
    assert (split.pass_with, split.runs_with, split.pass_without, split.runs_without) == (
        2,
        2,
        1,
        1,
    )
    assert split.flag == BOTH
    # Judged in no run of an arm: counts, but no Δ and no flag.
    none_judged = only(runs(True), runs(None, arm="without"))
    assert (none_judged.runs_without, none_judged.delta, none_judged.flag) == (0, None, None)


def test_a_run_that_ended_in_an_error_counts_where_it_was_graded() -> None:
    """A timeout is graded on what the run produced (it counts, as in the score); a run whose
    agent failed before grading holds no verdict, so it counts for no grader."""
    with_ = [
        *runs(False, error="timed out after 300s"),
        RunResult(arm="with", run=2, error="scaffold failed"),  # graded, no verdict
        *runs(True),
    ]
    split = only(with_, runs(False, False, arm="without"))
    assert (split.pass_with, split.runs_with, split.flag) == (1, 2, NOT_SHOWN)


def test_a_single_arm_has_one_rate_and_no_flag() -> None:
    split = only(runs(True, False, True, arm="single"), None)
    assert (split.counts, split.runs_without, split.delta, split.flag) == ("2/3", None, None, None)


def test_a_with_only_indicator_is_not_scored_and_not_flagged() -> None:
    indicator = Verdict("skill-fired", True, "Skill called", scored=False, with_only=True)
    answer = Verdict("answer", True, "matched")
    with_ = [RunResult(arm="with", run=n, verdicts=(indicator, answer)) for n in (1, 2)]
    without = [RunResult(arm="without", run=n, verdicts=(answer,)) for n in (1, 2)]
    fired, said = split_graders(with_, without)
    assert (fired.name, fired.scored, fired.counts, fired.flag) == (
        "skill-fired",
        False,
        "2/2, 0/0",
        None,
    )
    assert (said.name, said.scored, said.flag) == ("answer", True, BOTH)


def test_one_name_twice_in_a_run_passes_only_when_both_did() -> None:
    twice = RunResult(
        arm="with", run=1, verdicts=(Verdict("g", True, "a"), Verdict("g", False, "b"))
    )
    split = only([twice], runs(False, arm="without"))
    assert (split.pass_with, split.runs_with, split.flag) == (0, 1, NEITHER)


def split(name: str, flag: str, counts: tuple[int, int, int, int]) -> GraderSplit:
    made = GraderSplit(name, True, *counts, delta_interval=newcombe(*counts))
    assert made.flag == flag
    return made


def test_the_line_names_graders_that_cannot_tell_the_arms_apart() -> None:
    version = split("mentions-version", BOTH, (3, 3, 3, 3))
    assert blind_line("alpha", [version]) == (
        'alpha: grader "mentions-version" passes in both arms (3/3, 3/3)'
        " — it cannot tell them apart"
    )
    never = split("cites-rfc", NEITHER, (0, 3, 0, 2))
    useful = split("answer", DISCRIMINATES, (3, 3, 0, 3))
    unsure = split("tone", NOT_SHOWN, (2, 3, 1, 3))
    assert blind_line("alpha", [useful, unsure]) is None
    assert blind_line("alpha", [version, useful, never, split("x", BOTH, (2, 2, 3, 3))]) == (
        'alpha: graders "mentions-version" (3/3, 3/3) and "x" (2/2, 3/3) pass in both arms; '
        'grader "cites-rfc" (0/3, 0/2) fails in both arms — they cannot tell the arms apart'
    )
    assert blind_line("alpha", [version, never]) == (
        'alpha: grader "mentions-version" (3/3, 3/3) passes in both arms; '
        'grader "cites-rfc" (0/3, 0/2) fails in both arms — they cannot tell the arms apart'
    )
    many = [split(f"g{i}", BOTH, (1, 1, 1, 1)) for i in range(6)]
    line = blind_line("beta", many)
    assert line is not None and '"g3" (1/1, 1/1) and 2 more pass in both arms' in line


def case(name: str, source: str = "prose") -> Case:
    graders = (GraderSpec("answer", "regex", {"pattern": "x"}), GraderSpec("tone", "regex", {}))
    return Case(
        name=name,
        prompt="p",
        source=source,  # type: ignore[arg-type]
        path=ROOT / name / "prompt.md",
        dir=ROOT / name,
        suite_root=ROOT,
        graders=graders,
    )


def records(name: str, table: dict[str, list[tuple[bool, bool]]], **kw: Any) -> list[Any]:
    """Runs of case ``name``: per arm, each run's (answer, tone) verdicts."""
    return [
        run_record(
            case(name, **kw),
            arm,
            n,
            [Verdict("answer", a, "a"), Verdict("tone", t, "t")],
        )
        for arm, verdicts in table.items()
        for n, (a, t) in enumerate(verdicts, start=1)
    ]


#: alpha: ``answer`` tells the arms apart, ``tone`` passes everywhere; beta: both discriminate.
SESSION = {
    "alpha": {"with": [(True, True)] * 3, "without": [(False, True)] * 3},
    "beta": {"with": [(True, True)] * 3, "without": [(False, False)] * 3},
}


def session(**kw: Any) -> Any:
    return summary([r for name, t in SESSION.items() for r in records(name, t)], **kw)


def test_the_terminal_says_it_once_per_case_and_nothing_when_all_discriminate() -> None:
    lines = summary_lines(session())
    blind = [line for line in lines if "cannot tell" in line]
    assert blind == [
        'alpha: grader "tone" passes in both arms (3/3, 3/3) — it cannot tell them apart'
    ]
    beta_only = summary(records("beta", SESSION["beta"]))
    assert not [line for line in summary_lines(beta_only) if "cannot tell" in line]
    single = summary(
        [
            run_record(case("solo"), "single", n, [Verdict("tone", True, "t")], two_arm=False)
            for n in (1, 2)
        ],
        ablation="none",
    )
    assert grader_lines(single.cases) == []


def test_the_terminal_caps_its_case_lines_and_counts_the_rest() -> None:
    """A suite of many cases with a blind grader: the first CASES_SHOWN cases have a line,
    the rest one line with their count; at the cap exactly, no such line."""
    blind = {"with": [(True, True)] * 2, "without": [(False, True)] * 2}
    for n, more in ((CASES_SHOWN, None), (CASES_SHOWN + 7, 7)):
        names = [f"c{i:02d}" for i in range(n)]
        lines = summary_lines(summary([r for x in names for r in records(x, blind)]))
        shown = [line.split(":")[0] for line in lines if "cannot tell them apart" in line]
        assert shown == names[:CASES_SHOWN]
        rest = [line for line in lines if line.startswith("…")]
        assert rest == (
            []
            if more is None
            else [
                f"… and {more} more case(s) with graders that cannot tell the arms apart "
                "(see the JSON's graderSplits or the HTML report)"
            ]
        )


def test_a_hostile_grader_name_is_printed_plain() -> None:
    name = "tone\x1b[2J\x1b]0;pwned\x07"
    table = {"with": [(True, True)], "without": [(False, True)]}
    result = summary(
        [
            replace(
                r,
                result=replace(
                    r.result,
                    verdicts=tuple(
                        replace(v, name=name) if v.name == "tone" else v for v in r.result.verdicts
                    ),
                ),
            )
            for r in records("alpha", table)
        ]
    )
    (line,) = [line for line in summary_lines(result) if "cannot tell" in line]
    assert "\x1b" not in line and "\x07" not in line and 'grader "tone' in line


def test_the_document_carries_the_splits_computed_from_the_runs() -> None:
    doc = document_json(session())
    alpha = next(c for c in doc["cases"] if c["name"] == "alpha")
    answer, tone = alpha["graderSplits"]
    expected = list(confint_proportions_2indep(3, 3, 0, 3, method="newcomb", compare="diff"))
    assert answer == {
        "name": "answer",
        "scored": True,
        "passWith": 3,
        "runsWith": 3,
        "passWithout": 0,
        "runsWithout": 3,
        "delta": 1.0,
        "deltaInterval": pytest.approx(expected, abs=1e-9),
        "flag": DISCRIMINATES,
    }
    assert (tone["flag"], tone["delta"]) == (BOTH, 0.0)
    assert json.loads(dumps_document(doc))["cases"][0]["graderSplits"][1]["flag"] == BOTH


def test_a_trigger_query_has_none() -> None:
    table = {"with": [(True, True)]}
    result = summary(records("q1", table, source="trigger_eval"), ablation="none")
    (entry,) = document_json(result)["cases"]
    assert "graderSplits" not in entry and grader_splits(result.cases[0]) == ()


def test_a_document_read_back_recomputes_them_and_ignores_its_own() -> None:
    doc = document_json(session())
    forged = json.loads(json.dumps(doc))
    for entry in forged["cases"]:
        entry["graderSplits"] = [
            {"name": "made-up", "scored": True, "passWith": 9, "runsWith": 9, "flag": "both"}
        ]
    assert document_json(load_document(forged))["cases"] == doc["cases"]
    # A document without them (an earlier version's, the reference's) reads, and gets them.
    for entry in forged["cases"]:
        del entry["graderSplits"]
    assert document_json(load_document(forged))["cases"] == doc["cases"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("passWith", True, "expected a number or null, found true"),
        ("runsWithout", -1, "expected a count (0 or more) or null, found -1"),
        ("delta", 3, "expected a number from -1 to 1 or null, found 3"),
        ("deltaInterval", [0, 1, 2], "expected a list of two numbers (low, high) or null"),
        ("name", ["x"], "expected a string or null, found a list"),
        ("flag", 1, "expected a string or null, found 1"),
    ],
)
def test_a_document_whose_splits_have_the_wrong_types_is_refused(
    field: str, value: Any, message: str
) -> None:
    doc = json.loads(json.dumps(document_json(session())))
    doc["cases"][1]["graderSplits"][0][field] = value
    with pytest.raises(DocumentError) as info:
        load_document(doc)
    assert str(info.value).startswith(message), str(info.value)
    assert f"$.cases[1].graderSplits[0].{field}" in str(info.value)


@cache
def flag_of(a: int, b: int, n: int) -> str:
    """The flag of a grader passed in ``a`` of ``n`` runs with, ``b`` of ``n`` without."""
    with_ = runs(*[True] * a, *[False] * (n - a))
    flag = only(with_, runs(*[True] * b, *[False] * (n - b), arm="without")).flag
    assert flag is not None
    return flag


def exact_flags(n: int, p_with: float, p_without: float) -> dict[str, float]:
    """The chance of each flag for a grader of these true pass rates, ``n`` runs per arm:
    every outcome enumerated and flagged by :func:`split_graders` itself."""
    chances = dict.fromkeys((BOTH, NEITHER, DISCRIMINATES, NOT_SHOWN), 0.0)
    for a in range(n + 1):
        for b in range(n + 1):
            pa = comb(n, a) * p_with**a * (1 - p_with) ** (n - a)
            pb = comb(n, b) * p_without**b * (1 - p_without) ** (n - b)
            chances[flag_of(a, b, n)] += pa * pb
    return {k: round(v, 3) for k, v in chances.items()}


#: The figures docs/explanation/arms-and-scoring.md gives: (runs, with, without) -> flag -> chance.
FIGURES = {
    (3, 0.9, 0.9): {BOTH: 0.531},
    (5, 0.9, 0.9): {BOTH: 0.349},
    (10, 0.9, 0.9): {BOTH: 0.122},
    (3, 1.0, 0.5): {BOTH: 0.125, DISCRIMINATES: 0.125},
    (5, 1.0, 0.5): {BOTH: 0.031, DISCRIMINATES: 0.5},
    (10, 1.0, 0.5): {DISCRIMINATES: 0.828},
    (3, 0.9, 0.1): {DISCRIMINATES: 0.531},
    (5, 0.9, 0.1): {DISCRIMINATES: 0.822},
    (10, 0.9, 0.1): {DISCRIMINATES: 0.989},
}
#: The largest chance, over equal true pass rates, that a grader is flagged ``discriminates``.
WORST_FALSE = {3: 0.031, 5: 0.062, 10: 0.042}


def test_the_figures_in_the_docs_are_the_flags_chances() -> None:
    text = (DOCS / "explanation" / "arms-and-scoring.md").read_text(encoding="utf-8")
    for (n, p_with, p_without), figures in FIGURES.items():
        chances = exact_flags(n, p_with, p_without)
        for flag, figure in figures.items():
            assert chances[flag] == figure, (n, p_with, p_without, flag)
            assert f"{figure:.3f}" in text, figure
    for n, figure in WORST_FALSE.items():
        worst = max(exact_flags(n, p / 100, p / 100)[DISCRIMINATES] for p in range(1, 100))
        assert worst == figure, n
        assert f"{figure * 100:.1f} %" in text, figure
