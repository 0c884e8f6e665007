"""Cohen's κ and its interval against published values, the labels files and the agreement
of a session's judges with people (skill-creator's feedback.json included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_plugin_evals.model import Judgement, JudgeVote, Verdict
from pytest_plugin_evals.stats.agreement import (
    agreement,
    cohen_kappa,
    kappa_interval,
    kappa_of,
    kappa_se,
)
from pytest_plugin_evals.util.labels import LabelsError, feedback_verdict, read_labels


def pairs(both: int, first: int, second: int, neither: int) -> list[tuple[bool, bool]]:
    return (
        [(True, True)] * both
        + [(True, False)] * first
        + [(False, True)] * second
        + [(False, False)] * neither
    )


@pytest.mark.parametrize(
    ("table", "kappa", "se"),
    [
        # Wikipedia's "Cohen's kappa" worked examples (κ); the large-sample standard error of
        # Fleiss, Cohen and Everitt (1969), as statsmodels 0.15 cohens_kappa gives it.
        ((20, 5, 10, 15), 0.4, 0.126996),
        ((45, 15, 25, 15), 0.130435, 0.098662),
        ((25, 35, 5, 35), 0.259259, 0.077160),
    ],
)
def test_kappa_and_its_standard_error_match_published_values(
    table: tuple[int, int, int, int], kappa: float, se: float
) -> None:
    assert kappa_of(table) == pytest.approx(kappa, abs=1e-6)
    assert cohen_kappa(pairs(*table)) == pytest.approx(kappa, abs=1e-6)
    assert kappa_se(table) == pytest.approx(se, abs=1e-6)


def test_the_bootstrap_interval_holds_kappa_and_is_the_same_each_time() -> None:
    items = pairs(20, 5, 10, 15)
    interval = kappa_interval(items)
    assert interval is not None and interval == kappa_interval(items)
    low, high = interval
    # Near the normal interval 0.4 ± 1.96 × 0.127 = [0.151, 0.649].
    assert 0.10 < low < 0.25 and 0.55 < high < 0.70


def test_perfect_and_undefined_agreement() -> None:
    perfect = agreement(pairs(6, 0, 0, 4))
    assert perfect.kappa == 1.0 and perfect.share == 1.0 and not perfect.low
    assert perfect.rough  # 10 items: the interval is rough
    one_verdict = agreement(pairs(5, 0, 0, 0))
    assert one_verdict.kappa is None and one_verdict.interval is None and not one_verdict.low
    assert agreement(pairs(2, 0, 2, 0)).low  # κ 0


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{", "not JSON (Expecting property name enclosed in double quotes, column 2)"),
        ("[1]", "expected an object like"),
        ('{"case": "", "arm": "with", "run": 1, "grader": "g", "passed": true}',
         '"case" must be a non-empty string'),
        ('{"case": "c", "arm": "with", "run": 0, "grader": "g", "passed": true}',
         '"run" must be a whole number from 1 (got 0)'),
        ('{"case": "c", "arm": "with", "run": 1, "grader": "g", "passed": "yes"}',
         '"passed" must be true or false (got "yes")'),
    ],
)  # fmt: skip
def test_a_bad_labels_line_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path, "labels.jsonl", "# people's verdicts\n\n" + line + "\n")
    with pytest.raises(LabelsError) as caught:
        read_labels([path])
    assert str(caught.value).startswith(f"{path}:3: {message}")
    assert "\n" not in str(caught.value)


def test_feedback_json_is_read_as_skill_creators_viewer_writes_it(tmp_path: Path) -> None:
    doc = {
        "reviews": [
            {"run_id": "eval-1-with_skill-run-1", "feedback": "", "timestamp": "t"},
            {"run_id": "eval-1-with_skill-run-2", "feedback": "the chart has no axis labels"},
            {"run_id": "iteration-2-eval-3-without_skill-run-1", "feedback": "PASS, fine"},
            {"run_id": "eval-4-new_skill-run-1", "feedback": "rubric: FAIL\nstyle: pass"},
            {"run_id": "somewhere-else", "feedback": "not ours"},
        ],
        "status": "complete",
    }
    labels = read_labels([write(tmp_path, "feedback.json", json.dumps(doc))])
    assert labels.complete
    got = [(r.eval_id, r.arm, r.run, r.passed, r.graders) for r in labels.reviews]
    assert got == [
        (1, "with", 1, True, ()),
        (1, "with", 2, False, ()),
        (3, "without", 1, True, ()),
        (4, "with", 1, None, (("rubric", False), ("style", True))),
    ]
    bad = write(tmp_path, "bad.json", json.dumps({"reviews": [{"feedback": "x"}]}))
    with pytest.raises(LabelsError, match=r"bad\.json: reviews\[0\]: expected an object with"):
        read_labels([bad])


def test_feedback_text_reading() -> None:
    assert feedback_verdict("  ") == (True, ())
    assert feedback_verdict("fail: wrong file") == (False, ())
    assert feedback_verdict("perfect, love this") == (False, ())  # text is a complaint


def judged(first: list[str], second: list[str] | None) -> Verdict:
    votes = tuple(JudgeVote(v) for v in first)
    other = None if second is None else Judgement(tuple(JudgeVote(v) for v in second))
    passed = votes.count(JudgeVote("PASS")) >= 2
    return Verdict("rubric", passed, "judge votes", type="llm",
                   judgement=Judgement(votes, "e", 0.0, other))  # fmt: skip


def test_split_votes_and_the_second_judges_reading() -> None:
    verdict = judged(["PASS", "FAIL", "PASS"], ["FAIL"] * 3)
    assert verdict.judgement is not None and verdict.judgement.split
    assert verdict.judgement.second is not None and verdict.judgement.second.passed is False
    assert not judged(["FAIL"] * 3, None).judgement.split  # type: ignore[union-attr]
    failing = Judgement(cost_usd=0.001, error="judge call failed: 500")
    assert failing.passed is None


def test_a_document_read_back_keeps_the_split_votes_and_the_second_judges_verdicts() -> None:
    """A merged or compared document is read back: the agreement is measured again from the
    verdicts it holds (the second judge's name is not among them)."""
    import dataclasses

    from pytest_plugin_evals.reporting.agreement import agreement_lines, judge_agreement
    from pytest_plugin_evals.reporting.document import document_json, load_document
    from tests.browser import synthetic
    from tests.helpers import run_record, summary

    case = synthetic.make_case("pick-version")
    plan = [(["PASS", "FAIL", "PASS"], "FAIL"), (["FAIL"] * 3, "FAIL"), (["PASS"] * 3, "PASS")]
    records = [
        run_record(case, "single", n, [judged(votes, [second] * 3)])
        for n, (votes, second) in enumerate(plan, start=1)
    ]
    result = dataclasses.replace(summary(records), second_judge="openai:other")
    doc = document_json(result)
    pooled = doc["judgeAgreement"]["graders"][0]
    # First P F P, second F F P: agree on 2 of 3; one split vote.
    assert (pooled["splitVotes"], pooled["judges"]["agreed"], pooled["judges"]["n"]) == (1, 2, 3)
    assert pooled["judges"]["kappa"] == pytest.approx(0.4)  # p_o 2/3, p_e 4/9
    again = judge_agreement(load_document(doc))
    first = judge_agreement(result)
    assert again is not None and first is not None and again.second_judge is None
    assert again.rows[0].split == 1 and again.rows[0].judges == first.rows[0].judges
    assert (
        agreement_lines(load_document(doc))[0]
        == "JUDGE AGREEMENT (1 of 3 judge verdicts split 2-1)"
    )


@pytest.mark.parametrize(
    ("spec", "backend", "model"),
    [
        ("sonnet", "claude", "sonnet"),
        ("openai:qwen2.5:7b", "openai", "qwen2.5:7b"),
        ("qwen2.5:7b", "claude", "qwen2.5:7b"),  # not a backend: a model with a colon
        ("Anthropic:claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"),
        ("openai:", "openai", None),
    ],
)
def test_second_judge_spec(spec: str, backend: str, model: str | None) -> None:
    from pytest_plugin_evals.judges import second_judge_spec

    assert second_judge_spec(spec, "claude") == (backend, model)


def test_people_are_measured_on_the_runs_they_labelled_and_no_second_judge_is_none(
    tmp_path: Path,
) -> None:
    """One label of one run: the judge is measured against people on that run alone (the
    unlabelled runs are left out, not counted as agreeing), and with no second judge in the
    session there is no second judge's agreement with people."""
    from pytest_plugin_evals.reporting.agreement import judge_agreement
    from tests.helpers import run_record, summary
    from tests.unit.test_reporting_markdown import case

    labels = tmp_path / "labels.jsonl"
    labelled = {"case": "pick", "arm": "with", "run": 2, "grader": "rubric", "passed": False}
    labels.write_text(json.dumps(labelled) + "\n", encoding="utf-8")
    c = case("pick")
    records = [
        run_record(c, arm, n, [judged(["FAIL"] * 3 if n == 2 else ["PASS"] * 3, None)])
        for arm in ("with", "without")
        for n in (1, 2, 3)
    ]
    found = judge_agreement(summary(records, labels=(labels,)))
    assert found is not None
    pooled = found.rows[0]  # every judge verdict of the session
    assert pooled.first_people is not None
    assert (pooled.first_people.n, pooled.first_people.agreed) == (1, 1)
    assert pooled.second_people is None
