"""``--eval-agents``: every case runs on each of several agents, scored per agent."""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

import pytest
from scipy import stats as scipy_stats

PLUGIN_JSON = '{"name": "probe-kit", "version": "1.0.0"}'

PROMPT = "---\nruns: 2\n---\nSay the words.\n"

#: Two graders of weight 1: a run scores 0, 0.5 or 1 by the words it says.
GRADERS = {
    "alpha": "---\ntype: regex\npattern: ALPHA\n---\n",
    "beta": "---\ntype: regex\npattern: BETA\n---\n",
}

#: An agent whose answer is looked up in a table by agent, case, arm and run (``EVAL_*``);
#: it writes its name into the run's folder so the test can see which agent ran.
AGENT = """\
import json, os, sys
sys.stdin.read()
table = json.loads(open(sys.argv[1], encoding="utf-8").read())
env = os.environ
key = "/".join([sys.argv[2], env["EVAL_CASE"], env["EVAL_ARM"], env["EVAL_RUN"]])
print(table.get(key, "nothing") + " by " + sys.argv[2])
"""

#: Answers: ``agent/case/arm/run`` -> the words said. ``fast`` is helped by the plugin, ``slow``
#: barely.
ANSWERS = {
    "fast/one/with/1": "ALPHA BETA",
    "fast/one/with/2": "ALPHA BETA",
    "fast/one/without/1": "",
    "fast/one/without/2": "ALPHA",
    "fast/two/with/1": "ALPHA BETA",
    "fast/two/with/2": "",
    "fast/two/without/1": "",
    "fast/two/without/2": "",
    "slow/one/with/1": "ALPHA",
    "slow/one/with/2": "ALPHA",
    "slow/one/without/1": "ALPHA",
    "slow/one/without/2": "",
    "slow/two/with/1": "ALPHA BETA",
    "slow/two/with/2": "ALPHA BETA",
    "slow/two/without/1": "ALPHA BETA",
    "slow/two/without/2": "ALPHA BETA",
}


def _score(words: str) -> float:
    return (("ALPHA" in words) + ("BETA" in words)) / 2


def _suite(pytester: pytest.Pytester) -> tuple[str, str]:
    """Two cases, a plugin, and the specs of two agents (``fast`` and ``slow``)."""
    pytester.makefile(".json", **{".claude-plugin/plugin": PLUGIN_JSON})
    for name in ("one", "two"):
        pytester.makefile(".md", **{f"evals/{name}/prompt": PROMPT})
        for grader, text in GRADERS.items():
            pytester.makefile(".md", **{f"evals/{name}/graders/{grader}": text})
    script = pytester.path / "table_agent.py"
    script.write_text(AGENT, encoding="utf-8")
    table = pytester.path / "answers.json"
    table.write_text(json.dumps(ANSWERS), encoding="utf-8")

    def spec(name: str) -> str:
        return "cmd:" + shlex.join([sys.executable, str(script), str(table), name])

    return spec("fast"), spec("slow")


def _ids(result: pytest.RunResult) -> list[str]:
    return sorted(
        line.split("::", 1)[1].split()[0]
        for line in result.outlines
        if line.startswith("evals/") and "::" in line
    )


@pytest.mark.workers  # what crosses from the workers is tested
def test_every_case_runs_on_each_agent_and_delta_is_per_agent(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    fast, slow = _suite(pytester)
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agents", f"fast={fast}", "--eval-agents", f"slow={slow}",
        "--eval-threshold", "0", "--eval-json", "o.json", "-rA",
    )  # fmt: skip
    result.assert_outcomes(passed=16)
    doc = read_doc("o.json")
    # Each case on each agent is a case of the document, with its own arms.
    assert [(c["name"], c["agent"]) for c in doc["cases"]] == [
        ("one", "fast"), ("one", "slow"), ("two", "fast"), ("two", "slow"),
    ]  # fmt: skip
    deltas: dict[str, list[float]] = {"fast": [], "slow": []}
    for case in doc["cases"]:
        agent = case["agent"]
        for arm in ("with", "without"):
            runs = case["arms"][arm]
            assert [r["nodeid"].rpartition("[")[2] for r in runs] == [
                f"{agent}-{arm}-1]", f"{agent}-{arm}-2]",
            ]  # fmt: skip
            for run in runs:
                words = ANSWERS[f"{agent}/{case['name']}/{arm}/{run['run']}"]
                assert run["answer"].strip() == f"{words} by {agent}".strip()
                assert run["score"] == _score(words)
        with_mean = sum(r["score"] for r in case["arms"]["with"]) / 2
        without_mean = sum(r["score"] for r in case["arms"]["without"]) / 2
        assert case["aggregates"]["delta"] == pytest.approx(with_mean - without_mean)
        deltas[agent].append(with_mean - without_mean)
    # Each run's folder names its agent (runs/<case>/<agent>-<arm>-<run>).
    (results,) = (pytester.path / "evals" / "results").iterdir()
    folders = sorted(p.name for p in (results / "runs").glob("*/*") if (p / "meta.json").is_file())
    assert folders == sorted(
        f"{agent}-{arm}-{run}"
        for agent in ("fast", "slow")
        for arm in ("with", "without")
        for run in (1, 2)
        for _ in ("one", "two")
    )
    # The HTML report: a row per agent, and each case on each agent named so.
    html = (results / "report.html").read_text(encoding="utf-8")
    assert html.count('class="agent-row"') == 2
    assert '<tr class="agent-row" data-agent="slow"><td>slow <span' in html
    assert "<h2>two on fast</h2>" in html
    # The per-agent summary: its cases' means, and the mean Δ's cluster-robust interval.
    assert [a["agent"] for a in doc["agents"]] == ["fast", "slow"]
    assert doc["suite"]["agent"] == "fast, slow"
    for summary in doc["agents"]:
        own = [c for c in doc["cases"] if c["agent"] == summary["agent"]]
        assert summary["cases"] == 2
        assert summary["runsTotal"] == 8
        assert summary["overallScore"] == pytest.approx(
            sum(c["aggregates"]["score"] for c in own) / 2
        )
        assert summary["overallScoreWithout"] == pytest.approx(
            sum(c["aggregates"]["scoreWithout"] for c in own) / 2
        )
        values = deltas[summary["agent"]]
        assert summary["meanDelta"] == pytest.approx(sum(values) / len(values))
        low, high = scipy_stats.t.interval(
            0.95, len(values) - 1, loc=sum(values) / 2, scale=scipy_stats.sem(values)
        )
        # Cluster-robust by case, widened on each side to the cases' own intervals
        # (combined as Newcombe combines two) when that is wider.
        centre, half = sum(values) / len(values), (high - low) / 2
        bounds = [c["aggregates"]["deltaInterval"] for c in own]
        below = sum((d - b[0]) ** 2 for d, b in zip(values, bounds, strict=True)) ** 0.5 / 2
        above = sum((b[1] - d) ** 2 for d, b in zip(values, bounds, strict=True)) ** 0.5 / 2
        assert summary["meanDeltaInterval"] == pytest.approx(
            [max(centre - max(half, below), -1), min(centre + max(half, above), 1)]
        )
        # How the agents compare beside the scores: latency over the agent's graded runs, and
        # tokens unknown (None, not 0) for an agent that reports none.
        durations = sorted(
            r["durationSeconds"] for c in own for arm in c["arms"].values() for r in arm
        )
        assert summary["latency"]["meanSeconds"] == pytest.approx(sum(durations) / len(durations))
        assert summary["latency"]["p50Seconds"] == pytest.approx(
            (durations[3] + durations[4]) / 2, abs=1e-3
        )
        assert summary["tokens"]["input"] is None and "costUnknown" not in summary
    assert doc["agents"][0]["meanDelta"] == pytest.approx(0.625)  # fast: (0.75 + 0.5) / 2
    assert doc["agents"][1]["meanDelta"] == pytest.approx(0.125)  # slow: (0.25 + 0) / 2
    # The terminal: an AGENT column, and each agent's mean Δ on one line.
    out = result.stdout.str()
    assert "CASE AGENT WITH" in " ".join(out.split())
    interval = doc["agents"][0]["meanDeltaInterval"]
    slow_interval = doc["agents"][1]["meanDeltaInterval"]
    result.stdout.fnmatch_lines(
        [
            "2 case(s) × 2 agent(s) · mean Δ *",
            f"fast: mean Δ +0.62 [{interval[0]:+.2f}, {interval[1]:+.2f}] · slow: mean Δ +0.12 "
            f"[{slow_interval[0]:+.2f}, {slow_interval[1]:+.2f}]",
        ]
    )
    assert any(line.split()[:2] == ["one", "fast"] for line in result.outlines)


def test_markers_and_keywords_name_the_agent(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    """-m "evals(agent=...)" and -k with the label select one agent's runs: the others are
    not run, and one that cannot start, deselected, is not checked."""
    fast, slow = _suite(pytester)
    chosen = pytester.runpytest(
        "evals", *plugin_args, "--eval-agents", f"fast={fast}", "--eval-agents", f"slow={slow}",
        "--eval-agents", "gone=cmd:./no-such-agent", "-m", "evals(agent='slow', arm='with')",
        "-k", "slow and one", "--eval-threshold", "0", "--eval-json", "m.json",
    )  # fmt: skip
    chosen.assert_outcomes(passed=2)
    doc = read_doc("m.json")
    assert [(c["name"], c["agent"]) for c in doc["cases"]] == [("one", "slow")]
    assert all(r["answer"].endswith("by slow") for c in doc["cases"] for r in c["arms"]["with"])
    assert [a["agent"] for a in doc["agents"]] == ["fast", "slow", "gone"]
    for other in (doc["agents"][0], doc["agents"][2]):
        assert other["cases"] == 0 and other["meanDelta"] is None, other["agent"]


def test_default_labels_the_ini_file_and_one_agent_in_item_ids(pytester: pytest.Pytester) -> None:
    """The labels reach the items' ids: given and made (cmd1), from the ini file, and none with
    one agent (the command line's --eval-agent wins over the ini file's --eval-agents)."""
    fast, slow = _suite(pytester)
    listed = pytester.runpytest(
        "evals", "--collect-only", "-q", "--eval-agents", f"fast={fast}", "--eval-agents", slow
    )
    ids = sorted(line.split("::", 1)[1] for line in listed.outlines if "::" in line)
    assert ids == sorted(
        f"{case}[{agent}-{arm}-{run}]"
        for case in ("one", "two")
        for agent in ("fast", "cmd1")
        for arm in ("with", "without")
        for run in (1, 2)
    )
    pytester.makeini(f"[pytest]\neval_agents =\n    quick={fast}\n    steady={slow}\n")
    listed = pytester.runpytest("evals", "--collect-only", "-q")
    assert "evals/two::two[steady-with-2]" in listed.outlines
    one = pytester.runpytest("evals", "--collect-only", "-q", "--eval-agent", fast)
    assert "evals/two::two[with-2]" in one.outlines
    assert "evals/one::one[without-2]" in one.outlines
    assert not any(label in line for line in one.outlines for label in ("fast", "quick"))


def test_a_bad_agent_is_one_usage_line(pytester: pytest.Pytester) -> None:
    """A wrong --eval-agents value stops the session with its one line (each wrong value's
    line: tests/unit/test_agents_roster.py)."""
    pytester.makefile(".md", **{"evals/x/prompt": "hi"})
    result = pytester.runpytest("evals", "--eval-agents", "claude,claude")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: *two agents are labelled 'claude'*"])
    assert "Traceback" not in result.stderr.str()


def test_an_agent_that_cannot_start_is_one_usage_line(pytester: pytest.Pytester) -> None:
    fast, _ = _suite(pytester)
    result = pytester.runpytest(
        "evals", "--eval-agents", f"fast={fast}", "--eval-agents", "gone=cmd:./no-such-agent"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --eval-agents gone: *cannot start './no-such-agent'*"])
    # Deselected, it is not checked: test_markers_and_keywords_name_the_agent.


def test_infra_errors_stay_with_their_agent_and_replay_regrades_each_agents_runs(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    """An agent whose every run fails to start: its errors are its own, the others' Δ stand.
    Then the recorded runs of the two others, replayed each under its label, give the same
    Δ again."""
    fast, slow = _suite(pytester)
    # There and executable, so the check before the session passes, but no program at all:
    # every run of this agent fails to start.
    broken = pytester.path / "broken-agent"
    broken.write_bytes(b"\x00\x01 not a program")
    broken.chmod(0o755)
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agents", f"fast={fast}", "--eval-agents", f"slow={slow}",
        "--eval-agents", f"bad=cmd:{broken}", "--eval-threshold", "0", "--eval-json", "o.json",
        "--eval-output-dir", "recorded",
    )  # fmt: skip
    result.assert_outcomes(passed=16, errors=8)
    before = read_doc("o.json")
    fast_summary, slow_summary, bad_summary = before["agents"]
    assert fast_summary["errors"] == {} and fast_summary["runsGraded"] == 8
    assert fast_summary["meanDelta"] == pytest.approx(0.625)
    assert slow_summary["errors"] == {} and slow_summary["meanDelta"] == pytest.approx(0.125)
    assert bad_summary["errors"] == {"agent_start": 8} and bad_summary["runsGraded"] == 0
    assert bad_summary["meanDelta"] is None
    assert before["errors"] == {"agent_start": 8}
    result.stdout.fnmatch_lines(
        [
            "fast: mean Δ +0.62 * · slow: mean Δ +0.12 * · bad: mean Δ —",
            "bad: 8 run(s) could not be made (agent_start 8)",
        ]
    )

    recorded = pytester.path / "recorded"
    again = pytester.runpytest(
        "evals", *plugin_args, "--eval-agents", f"fast=replay:{recorded}",
        "--eval-agents", f"slow=replay:{recorded}", "--eval-threshold", "0",
        "--eval-json", "again.json",
    )  # fmt: skip
    again.assert_outcomes(passed=16)
    after = read_doc("again.json")
    assert [(a["agent"], a["meanDelta"]) for a in after["agents"]] == [
        (a["agent"], a["meanDelta"]) for a in before["agents"][:2]
    ]
    for case in after["cases"]:
        for run in case["arms"]["with"]:
            assert run["answer"].endswith(f"by {case['agent']}")


@pytest.mark.parametrize(
    ("nodeid", "unit"),
    [
        ("evals/a::a[with-1]", ("evals/a::a", None)),
        ("evals/a::a[without-12]", ("evals/a::a", None)),
        ("evals/a::a[3]", ("evals/a::a", None)),
        ("evals/a::a[codex-with-1]", ("evals/a::a", "codex")),
        ("evals/a::a[cmd2-baseline-2]", ("evals/a::a", "cmd2")),
        ("evals/a::a[fast.v2-1]", ("evals/a::a", "fast.v2")),
        ("evals/a::a[with-with-1]", None),  # "with" is never a label
        ("tests/test_x.py::test_x[codex-1]", None),
    ],
)
def test_run_labels_name_the_case_and_agent(
    nodeid: str, unit: tuple[str, str | None] | None
) -> None:
    from pytest_plugin_evals.engine.nodeids import case_group, case_unit

    assert case_unit(nodeid) == unit
    assert case_group(nodeid) == (unit[0] if unit else None)


PRICED_AGENTS = """\
from pytest_plugin_evals.model import Transcript


def priced(request):
    return Transcript(final_message="ALPHA", turns=1, cost_usd=0.01)


def unpriced(request):
    return Transcript(final_message="ALPHA", turns=1, cost_known=False)
"""


def test_the_cost_ceiling_names_the_agents_it_cannot_see(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    pytester.makefile(".json", **{".claude-plugin/plugin": PLUGIN_JSON})
    pytester.makefile(".md", **{"evals/one/prompt": PROMPT})
    pytester.makefile(".md", **{"evals/one/graders/alpha": GRADERS["alpha"]})
    pytester.makepyfile(price_agents=PRICED_AGENTS)
    pytester.makeini("[pytest]\npythonpath = .\n")
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agents", "paid=py:price_agents:priced",
        "--eval-agents", "free=py:price_agents:unpriced", "--eval-max-cost-usd", "5",
        "--eval-threshold", "0", "--eval-json", "o.json",
    )  # fmt: skip
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(
        ["--eval-max-cost-usd could not see the spend of 4 run(s), whose agent reports no "
         "price: free 4"]
    )  # fmt: skip
    doc = read_doc("o.json")
    costs = {a["agent"]: (a["costUsd"], a.get("costUnknown", False)) for a in doc["agents"]}
    assert costs == {"paid": (pytest.approx(0.04), False), "free": (0.0, True)}
    assert doc["costUnknown"] is True
