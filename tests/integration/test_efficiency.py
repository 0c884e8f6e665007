"""Efficiency with/without as users see it: a ``py:`` agent whose with arm costs about twice
as much (more tokens and turns too); the terminal's suite line, the JSON per case and for the
suite, the document read back and written again with its figures recomputed from the runs,
and ``--eval-fail-on-cost-regression`` failing the session above its ratio and passing it
below. (A merge of shards recomputes it from their runs: tests/unit/test_merge.py.)"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_plugin_evals.reporting.document import document_json, read_document

PLUGIN_JSON = '{"name": "probe-kit", "version": "1.0.0"}'

#: The with arm costs 2× (and a little per run), spends 2× the input tokens and one more
#: turn; one with-arm run of beta reports tokens as a string (left out, not a crash).
COSTLY_AGENT = """\
from pytest_plugin_evals.model import Transcript


def agent(request):
    with_arm = request.arm == "with"
    cost = (0.02 if with_arm else 0.01) * (1 + 0.05 * request.run)
    tokens = 2000 if with_arm else 1000
    if request.case.name == "beta" and with_arm and request.run == 2:
        tokens = "lots"
    return Transcript(
        final_message="hi",
        cost_usd=cost,
        input_tokens=tokens,
        output_tokens=100 + request.run,
        turns=3 if with_arm else 2,
        duration_seconds=1.0 + request.run,
    )
"""


def _session(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """Two cases of 3 runs by the costly agent, with ``args``; the JSON document at o.json."""
    pytester.makefile(".json", **{".claude-plugin/plugin": PLUGIN_JSON})
    pytester.makepyfile(costly_agent=COSTLY_AGENT)
    pytester.makeini("[pytest]\npythonpath = .\n")
    for name in ("alpha", "beta"):
        pytester.makefile(".md", **{f"evals/{name}/prompt": "---\nruns: 3\n---\nSay hi\n"})
        grader = "---\ntype: regex\npattern: 'hi'\n---\n"
        pytester.makefile(".md", **{f"evals/{name}/graders/said": grader})
    agent = ["--eval-agent", "py:costly_agent:agent", "--eval-json", "o.json"]
    return pytester.runpytest("evals", *agent, *args)


@pytest.mark.workers
@pytest.mark.parametrize(("most", "fails"), [("1.2", True), ("3", False)])
def test_cost_ratio_in_terminal_json_and_gate(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any, most: str, fails: bool
) -> None:
    result = _session(pytester, *plugin_args, "--eval-fail-on-cost-regression", most)
    out = result.stdout.str()
    assert "Traceback" not in out
    result.stdout.fnmatch_lines(
        ["Efficiency (with vs without): cost ×2* [[]*], input tokens ×2 [[]*, turns ×1.5 [[]*"]
    )
    gate = f"--eval-fail-on-cost-regression {most}: the plugin's runs cost ×2* [[]*] what*"
    if fails:
        assert result.ret == 1
        result.stdout.fnmatch_lines([gate])
    else:
        assert result.ret == 0
        assert "--eval-fail-on-cost-regression" not in out

    doc = read_doc("o.json")
    suite = doc["aggregates"]["efficiency"]
    assert suite["cases"] == 2
    cost = suite["cost"]
    assert cost["with"]["runs"] == cost["without"]["runs"] == 6
    assert cost["ratio"] == pytest.approx(2.0, rel=0.01)
    low, high = cost["ratioInterval"]
    assert 1.2 < low < 2.0 < high < 3
    tokens = {c["name"]: c["aggregates"]["efficiency"]["inputTokens"] for c in doc["cases"]}
    assert tokens["beta"]["with"] == {"mean": 2000.0, "geoMean": 2000.0, "runs": 2, "leftOut": 1}
    assert tokens["alpha"]["with"]["leftOut"] == 0
    assert suite["inputTokens"]["with"]["leftOut"] == 1

    # Read back (as --eval-compare and merge do) and written again: the same figures, from
    # the runs; a document without them reads too.
    path = pytester.path / "o.json"
    again = document_json(read_document(path.read_text(encoding="utf-8")))
    assert again["aggregates"]["efficiency"] == suite
    assert (
        again["cases"][0]["aggregates"]["efficiency"] == doc["cases"][0]["aggregates"]["efficiency"]
    )
    del doc["aggregates"]["efficiency"]
    for case in doc["cases"]:
        del case["aggregates"]["efficiency"]
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert (
        document_json(read_document(path.read_text(encoding="utf-8")))["aggregates"]["efficiency"]
        == suite
    )


def test_one_arm_has_no_efficiency(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    result = _session(
        pytester, *plugin_args, "--eval-ablation", "none", "--eval-fail-on-cost-regression", "1.2"
    )
    assert result.ret == 0
    assert "Efficiency" not in result.stdout.str()
    doc = read_doc("o.json")
    assert "efficiency" not in doc["aggregates"]
    assert all("efficiency" not in c["aggregates"] for c in doc["cases"])


def test_a_cmd_agents_reported_usage_is_compared(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any, read_doc: Any
) -> None:
    """The ``cmd:`` protocol's usage lines (the scripted agent's) reach the ratios."""
    pytester.makefile(".json", **{".claude-plugin/plugin": PLUGIN_JSON})
    pytester.makefile(".md", **{"evals/one/prompt": "---\nruns: 2\n---\nSay hi\n"})
    pytester.makefile(".md", **{"evals/one/graders/said": "---\ntype: regex\npattern: hi\n---\n"})
    rules = [
        {"match": "Say hi", "arm": arm, "reply": "hi", "usage": usage}
        for arm, usage in (
            ("with", {"input_tokens": 1200, "output_tokens": 40, "cost_usd": 0.0056}),
            ("without", {"input_tokens": 1000, "output_tokens": 20, "cost_usd": 0.004}),
        )
    ]
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", scripted_agent(rules), "--eval-json", "o.json",
        "--eval-fail-on-cost-regression", "1.2",
    )  # fmt: skip
    assert result.ret == 1
    result.stdout.fnmatch_lines(["--eval-fail-on-cost-regression 1.2: *cost ×1.4 [[]1.4, 1.4]*"])
    found = read_doc("o.json")["aggregates"]["efficiency"]
    assert found["cost"]["ratio"] == pytest.approx(1.4)
    assert found["inputTokens"]["ratio"] == pytest.approx(1.2)
    assert found["outputTokens"]["ratio"] == pytest.approx(2.0)
