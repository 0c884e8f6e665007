"""llm, baseline and meetsCriteria graders end to end, with each judge backend on loopback.

The judges' SDKs are imported by a module-scoped fixture, once for the module, before any
session: a judge imports its SDK only when chosen, which here is inside an in-process session,
and each such session drops the modules first imported in it, so every session would import the
SDK again (a second of CPU each). Not at the top: a collection that leaves these tests out does
not pay for the import."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, error, text


@pytest.fixture(scope="module", autouse=True)
def _sdks_imported() -> None:
    """Import the judges' SDKs before the first session (see the module's docstring)."""
    import anthropic  # noqa: F401
    import openai  # noqa: F401


BASELINE = [
    {"type": "user", "message": {"role": "user", "content": "Which version next?"}},
    {
        "type": "assistant",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "Maybe 1.4.1."}]},
    },
]


def make_suite(pytester: pytest.Pytester, *, every_kind: bool = True) -> None:
    """The ``judged`` case with its rubric (``llm``); with ``every_kind``, also a ``baseline``
    and a regex grader, and a ``meetsCriteria`` case of a package.json."""
    pytester.makefile(".md", **{"evals/judged/prompt": "---\nruns: 1\n---\nWhich version next?\n"})
    if not every_kind:
        rubric = "---\ntype: llm\n---\nPASS if the reply names 1.4.1.\n"
        pytester.makefile(".md", **{"evals/judged/graders/rubric": rubric})
        return
    pytester.makefile(
        ".md",
        **{
            "evals/judged/graders/rubric": "---\ntype: llm\n---\nPASS if the reply names 1.4.1.\n",
            "evals/judged/graders/versus": "---\ntype: baseline\nbaseline_file: baseline.jsonl\n"
            "---\nNames the right version.\n",
            "evals/judged/graders/answer": "---\ntype: regex\npattern: '1\\.4\\.1'\n---\n",
        },
    )
    (pytester.path / "evals" / "judged" / "baseline.jsonl").write_text(
        "\n".join(json.dumps(line) for line in BASELINE) + "\n", encoding="utf-8"
    )
    pytester.makefile(
        ".json",
        package=json.dumps(
            {
                "name": "x",
                "ai": {
                    "evals": [
                        {
                            "name": "criteria",
                            "input": "Which version next?",
                            "expected": [{"meetsCriteria": "Names version 1.4.1"}],
                        }
                    ]
                },
            }
        ),
    )


@pytest.fixture
def judge_env(scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch) -> ScriptedModel:
    for key, value in scripted_model.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_model.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return scripted_model


def backend_args(kind: str, claude_bin: str | None) -> list[str]:
    if kind == "openai":
        return ["--eval-judge", "openai", "--eval-judge-model", "local-judge"]
    if kind == "claude":
        return ["--eval-judge", "claude", f"--eval-claude-bin={claude_bin}"]
    return ["--eval-judge", "anthropic"]


def run(pytester: pytest.Pytester, scripted_agent: Any, *args: str) -> tuple[Any, dict[str, Any]]:
    agent = scripted_agent([{"match": "version", "reply": "Ship 1.4.1."}])
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--eval-agent", agent, "--eval-json", "out.json", *args
    )
    path = pytester.path / "out.json"
    return result, (json.loads(path.read_text(encoding="utf-8")) if path.exists() else {})


def graders_of(doc: dict[str, Any], case: str) -> dict[str, dict[str, Any]]:
    (c,) = [c for c in doc["cases"] if c["name"] == case]
    return {g["name"]: g for g in c["arms"]["with"][0]["graders"]}


SPLIT_VOTES = "PASS if the reply names 1.4.1"


def split_votes(model: ScriptedModel) -> None:
    """The rubric's votes: PASS, FAIL, PASS (PASS by majority)."""
    model.add(
        Rule(when_prompt=SPLIT_VOTES, reply=text("PASS"), times=1),
        Rule(when_prompt=SPLIT_VOTES, reply=text("FAIL: too terse"), times=1),
        Rule(when_prompt=SPLIT_VOTES, reply=text("PASS, it names it")),
    )


def test_every_judged_grader_kind_votes_three_times(
    pytester: pytest.Pytester, scripted_agent: Any, judge_env: ScriptedModel
) -> None:
    """llm, baseline and meetsCriteria graders each take three votes of the judge (here the
    Anthropic API's), the majority decides, and the judge's cost is the run's."""
    make_suite(pytester)
    split_votes(judge_env)
    judge_env.add(
        Rule(when_prompt="BASELINE trajectory", reply=text("PASS")),
        Rule(when_prompt="Names version 1.4.1", reply=text("FAIL")),
    )
    result, doc = run(pytester, scripted_agent, *backend_args("anthropic", None))
    rubric = graders_of(doc, "judged")["rubric"]
    assert rubric["passed"] is True
    assert [v["vote"] for v in rubric["judgeVotes"]] == ["PASS", "FAIL", "PASS"]
    assert rubric["judgeVotes"][1]["reason"] == "FAIL: too terse"
    assert rubric["explanation"] == "judge votes: PASS FAIL PASS"
    assert graders_of(doc, "judged")["versus"]["passed"] is True
    criteria = graders_of(doc, "criteria")
    (only,) = criteria.values()
    assert only["passed"] is False and [v["vote"] for v in only["judgeVotes"]] == ["FAIL"] * 3
    judged_run = next(c for c in doc["cases"] if c["name"] == "judged")["arms"]["with"][0]
    per_grader = rubric["judgeCostUsd"] + graders_of(doc, "judged")["versus"]["judgeCostUsd"]
    assert judged_run["judgeCostUsd"] == pytest.approx(per_grader)
    assert judged_run["judgeCostUsd"] > 0
    assert judged_run["costUsd"] == pytest.approx(judged_run["judgeCostUsd"])
    result.assert_outcomes(passed=1, failed=1)


@pytest.mark.parametrize("kind", ["claude", "openai"])
def test_the_other_backends_judge_a_session_too(
    pytester: pytest.Pytester,
    scripted_agent: Any,
    judge_env: ScriptedModel,
    kind: str,
    request: pytest.FixtureRequest,
) -> None:
    """``--eval-judge claude`` (the real CLI, ``--eval-claude-bin``) and ``--eval-judge openai``
    (``--eval-judge-model``) judge the session's runs through their own API: three votes, the
    majority, the cost (an OpenAI-compatible endpoint reports no price here)."""
    binary = request.getfixturevalue("claude_bin") if kind == "claude" else None
    make_suite(pytester, every_kind=False)
    split_votes(judge_env)
    result, doc = run(pytester, scripted_agent, *backend_args(kind, binary))
    rubric = graders_of(doc, "judged")["rubric"]
    assert [v["vote"] for v in rubric["judgeVotes"]] == ["PASS", "FAIL", "PASS"]
    assert rubric["passed"] is True and rubric["explanation"] == "judge votes: PASS FAIL PASS"
    (judged_run,) = doc["cases"][0]["arms"]["with"]
    if kind == "claude":
        assert judged_run["judgeCostUsd"] > 0
    assert judged_run["costUsd"] == pytest.approx(judged_run["judgeCostUsd"])
    api = judge_env.message_requests if kind == "claude" else judge_env.chat_requests
    assert len(api) == 3, f"the {kind} judge's three votes did not reach its own API"
    result.assert_outcomes(passed=1)


def test_a_failing_judge_or_an_unreadable_verdict_is_an_error_not_a_fail(
    pytester: pytest.Pytester, scripted_agent: Any, judge_env: ScriptedModel
) -> None:
    """A judge that fails (HTTP 500: the criteria case) and a verdict that is neither PASS nor
    FAIL (the judged case) make the run an error, not a fail; what was computed is kept."""
    make_suite(pytester)
    judge_env.add(
        Rule(when_prompt="Names version 1.4.1", reply=error(500)),
        Rule(reply=text("I am not sure.")),
    )
    result, doc = run(pytester, scripted_agent, "--eval-judge", "anthropic")
    result.assert_outcomes(errors=2)
    assert doc["partial"] is True
    assert doc["errors"] == {"judge": 2}
    runs = {c["name"]: c["arms"]["with"][0] for c in doc["cases"]}
    assert runs["criteria"]["infraError"] == "judge"
    assert "judge call failed" in runs["criteria"]["error"], runs["criteria"]["error"]
    # Nothing computed is dropped: the free grader's verdict stays, the judged ones say why.
    verdicts = {g["name"]: g for g in runs["judged"]["graders"]}
    assert verdicts["answer"]["passed"] is True
    assert verdicts["rubric"]["passed"] is None and verdicts["rubric"]["error"] == "judge"
    assert "neither PASS nor FAIL" in verdicts["rubric"]["explanation"]


def test_no_judge_skips_paid_graders_and_keeps_free_ones(
    pytester: pytest.Pytester, scripted_agent: Any, judge_env: ScriptedModel
) -> None:
    make_suite(pytester)
    result, doc = run(pytester, scripted_agent, "--eval-no-judge")
    verdicts = graders_of(doc, "judged")
    assert verdicts["answer"]["passed"] is True and verdicts["answer"]["scored"] is True
    assert verdicts["rubric"]["skipped"] == "--eval-no-judge"
    assert verdicts["rubric"]["scored"] is False
    run_ = doc["cases"][0]["arms"]["with"][0]
    assert run_["skippedPaidGraders"] is True and run_["score"] == 1.0
    assert judge_env.message_requests == [] and judge_env.chat_requests == []
    result.stdout.fnmatch_lines(["*paid graders skipped on purpose (--eval-no-judge)*"])
    result.assert_outcomes(passed=2)


def test_cost_ceiling_skips_paid_graders_while_free_ones_score(
    pytester: pytest.Pytester, scripted_agent: Any, judge_env: ScriptedModel
) -> None:
    pytester.makefile(".md", **{"evals/judged/prompt": "---\nruns: 1\n---\nWhich version next?\n"})
    pytester.makefile(
        ".md",
        **{
            "evals/judged/graders/rubric": "---\ntype: llm\n---\nPASS if it names 1.4.1.\n",
            "evals/judged/graders/answer": "---\ntype: regex\npattern: '1\\.4\\.1'\n---\n",
        },
    )
    agent = [
        {
            "match": "version",
            "reply": "Ship 1.4.1.",
            "usage": {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.5},
        }
    ]
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--eval-agent",
        scripted_agent(agent),
        "--eval-json",
        "out.json",
        "--eval-judge",
        "anthropic",
        "--eval-max-cost-usd",
        "0.25",
    )
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    run_ = doc["cases"][0]["arms"]["with"][0]
    verdicts = {g["name"]: g for g in run_["graders"]}
    assert verdicts["rubric"]["skipped"] == "cost ceiling"
    assert verdicts["answer"]["passed"] is True
    assert run_["skippedPaidGraders"] is True
    assert judge_env.message_requests == []
    result.assert_outcomes(passed=1)
