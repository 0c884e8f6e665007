"""Judge agreement end to end: split votes, a second judge (``--eval-judge-second``) and
labels people gave (``--eval-labels``), both judges played by the scripted model on loopback,
under ``-n 0`` and ``-n 2``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text

RUBRIC = "PASS if the reply names 1.4.1."


def make_suite(pytester: pytest.Pytester) -> None:
    for case, question in (("good", "Which version next?"), ("bad", "Which release next?")):
        pytester.makefile(".md", **{f"evals/{case}/prompt": f"---\nruns: 2\n---\n{question}\n"})
        rubric = f"---\ntype: llm\n---\n{RUBRIC}\n"
        pytester.makefile(".md", **{f"evals/{case}/graders/rubric": rubric})


@pytest.fixture(scope="module", autouse=True)
def _sdk_imported() -> None:
    """Import the OpenAI SDK once for the module, before any session: the judge imports it only
    when chosen, inside the in-process session, which drops the modules first imported in it,
    so each session would import it again."""
    import openai  # noqa: F401


@pytest.fixture
def judges(scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch) -> ScriptedModel:
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_model.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    # The first judge passes the right answer and fails the wrong one, once voting PASS on
    # it (one split vote in the session); the second passes every answer.
    scripted_model.add(
        Rule(when_model="first-judge", when_prompt="Ship 1.4.1", reply=text("PASS")),
        Rule(when_model="first-judge", when_prompt="Maybe 2.0", reply=text("PASS"), times=1),
        Rule(when_model="first-judge", when_prompt="Maybe 2.0", reply=text("FAIL: wrong")),
        Rule(when_model="second-judge", reply=text("PASS, looks fine")),
    )
    return scripted_model


def run(pytester: pytest.Pytester, agent: str, *args: str) -> tuple[Any, dict[str, Any]]:
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--eval-agent", agent, "--eval-json", "out.json",
        "--eval-judge", "openai", "--eval-judge-model", "first-judge", *args,
    )  # fmt: skip
    path = pytester.path / "out.json"
    return result, (json.loads(path.read_text(encoding="utf-8")) if path.exists() else {})


def verdicts(doc: dict[str, Any], case: str) -> list[dict[str, Any]]:
    (found,) = [c for c in doc["cases"] if c["name"] == case]
    return [g for run in found["arms"]["with"] for g in run["graders"]]


@pytest.mark.workers
def test_second_judge_and_labels_give_agreement_and_flag_it_and_measure_a_replay(
    pytester: pytest.Pytester,
    scripted_agent: Any,
    judges: ScriptedModel,
    plugin_args: list[str],
) -> None:
    make_suite(pytester)
    agent = scripted_agent(
        [{"match": "version", "reply": "Ship 1.4.1."}, {"match": "release", "reply": "Maybe 2.0."}]
    )
    labels = pytester.path / "labels.jsonl"
    rows = [("good", 1, True), ("good", 2, True), ("bad", 1, False), ("bad", 2, False)]
    labels.write_text(
        "".join(
            json.dumps({"case": c, "arm": "with", "run": n, "grader": "rubric", "passed": p}) + "\n"
            for c, n, p in rows
        ),
        encoding="utf-8",
    )
    result, doc = run(
        pytester, agent, *plugin_args[:1],
        "--eval-judge-second", "openai:second-judge", "--eval-labels", str(labels),
        "--eval-markdown", "summary.md",
    )  # fmt: skip
    # The second judge is recorded and never scores: the wrong answer still fails.
    bad = verdicts(doc, "bad")
    assert [v["passed"] for v in bad] == [False, False]
    assert all(v["secondJudge"]["passed"] is True for v in bad)
    assert sum(v["splitVote"] for v in bad) == 1
    assert all(v["secondJudge"]["passed"] is True for v in verdicts(doc, "good"))
    agreement = doc["judgeAgreement"]
    assert agreement["secondJudge"] == "openai:second-judge"
    pooled = agreement["graders"][0]
    assert pooled["grader"] == "all judge graders" and pooled["verdicts"] == 4
    assert pooled["splitVotes"] == 1
    # First judge P P F F, second P P P P: agree on 2 of 4, κ 0 (the second never fails).
    assert pooled["judges"]["agreed"] == 2 and pooled["judges"]["n"] == 4
    assert pooled["judges"]["kappa"] == 0.0 and pooled["judges"]["low"] is True
    # People agree with the first judge on every run: κ 1.
    assert pooled["firstJudgeWithPeople"]["kappa"] == 1.0
    assert pooled["secondJudgeWithPeople"]["agreed"] == 2
    assert "all judge graders" in agreement["flagged"]
    out = result.stdout.str()
    assert "JUDGE AGREEMENT (1 of 4 judge verdicts split 2-1)" in out
    assert "⚠ low judge agreement: all judge graders (κ < 0.6)" in out
    assert "split vote 2-1" in out  # the failed item's verdict says so
    html = next((pytester.path / "evals" / "results").glob("*/report.html")).read_text("utf-8")
    assert 'id="judge-agreement"' in html and "Low judge agreement" in html
    # The pull request's summary: the split votes, each flagged grader with κ, interval and n.
    said = " ".join((pytester.path / "summary.md").read_text(encoding="utf-8").split())
    low, high = pooled["judges"]["kappaInterval"] or (0.0, 0.0)
    assert (
        "### Judge agreement 1 of 4 judge verdicts were split votes (2-1). **Low agreement** "
        "(Cohen's κ under 0.6): - all judge graders: with the second judge κ 0.00 "
        f"[{low:.2f}, {high:.2f}], n 4"
    ) in said
    result.assert_outcomes(passed=2, failed=2)

    # Labels given after the session (skill-creator's ``feedback.json``) measure both judges
    # on its runs replayed by ``replay:last``: the same answers judged again. The viewer's
    # file: complaints on both runs of eval 1 (the case "bad"); "complete", so the runs of
    # eval 2 ("good") it showed without a review were fine.
    feedback = pytester.path / "feedback.json"
    reviews = [
        {"run_id": "eval-1-with_skill-run-1", "feedback": "names the wrong version"},
        {"run_id": "eval-1-with_skill-run-2", "feedback": "FAIL", "timestamp": "t"},
    ]
    feedback.write_text(json.dumps({"reviews": reviews, "status": "complete"}), encoding="utf-8")
    _, doc = run(
        pytester, "replay:last",
        "--eval-judge-second", "openai:second-judge", "--eval-labels", str(feedback),
    )  # fmt: skip
    assert {c["name"]: [r["answer"] for r in c["arms"]["with"]] for c in doc["cases"]} == {
        "bad": ["Maybe 2.0.", "Maybe 2.0."],
        "good": ["Ship 1.4.1.", "Ship 1.4.1."],
    }  # the same answers, judged again
    pooled = doc["judgeAgreement"]["graders"][0]
    assert pooled["firstJudgeWithPeople"] | {"kappaInterval": None} == {
        "n": 4, "agreed": 4, "share": 1.0, "kappa": 1.0, "kappaInterval": None,
        "low": False, "rough": True,
    }  # fmt: skip
    assert pooled["secondJudgeWithPeople"]["agreed"] == 2
    assert doc["judgeAgreement"]["labelled"] is True


def test_a_bad_labels_line_is_one_usage_error(
    pytester: pytest.Pytester, scripted_agent: Any, judges: ScriptedModel
) -> None:
    make_suite(pytester)
    labels = pytester.path / "labels.jsonl"
    good = {"case": "good", "arm": "with", "run": 1, "grader": "rubric", "passed": True}
    labels.write_text(json.dumps(good) + "\n" + json.dumps({**good, "arm": "both"}) + "\n")
    agent = scripted_agent([{"match": "version", "reply": "Ship 1.4.1."}])
    result, _ = run(pytester, agent, "--eval-labels", str(labels))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f'ERROR: --eval-labels: {labels}:2: "arm" must be one of with, without, baseline *']
    )
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
