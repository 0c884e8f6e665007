"""Trigger accuracy before and after a description edit: ``--eval-baseline-plugin git:REF``
runs each trigger query with the plugin as the commit holds it (before) and as the working tree
holds it (after), and reports each number twice with the difference's interval.

The agent reads the description of the SKILL.md its arm loads (``$EVAL_PLUGIN_DIR``) and
calls the skill when the query names one of the words it lists: the edit between the commit
and the working tree changes which queries fire the skill.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from tests.helpers import git, write_tree

pytestmark = pytest.mark.workers

#: A ``py:`` agent (called in the session's process: no interpreter started per run).
AGENT = """\
import re

from pytest_plugin_evals.model import ToolCall, Transcript


def answer(request):
    skill = request.plugin_dir / "skills" / "olympiad" / "SKILL.md"
    words = re.search(r"Use for: ([a-z, ]+)", skill.read_text(encoding="utf-8")).group(1)
    if "reject" in request.prompt and request.arm == "baseline":
        return Transcript(error="API error 500: internal", infra_error="api_error")
    if any(word in request.prompt for word in words.split(", ")):
        call = ToolCall("Skill", {"skill": "kit:olympiad"})
        return Transcript(final_message="done", tool_calls=[call])
    return Transcript(final_message="done")
"""

OLD = "---\nname: olympiad\ndescription: 'Use for: alpha, delta'\n---\nx\n"
NEW = "---\nname: olympiad\ndescription: 'Use for: alpha, gamma, beta'\n---\nx\n"

QUERIES = [
    {"query": "an alpha problem", "should_trigger": True},  # fires before and after
    {"query": "a gamma problem", "should_trigger": True},  # after only
    {"query": "a delta chat", "should_trigger": False},  # before only: a false positive
    {"query": "an omega chat", "should_trigger": False},  # neither
    {"query": "a beta problem, reject", "should_trigger": True},  # before: the API failed
]


@pytest.fixture
def repo(pytester: pytest.Pytester) -> Path:
    """A plugin committed with the old description, edited in the working tree."""
    root = pytester.path
    git(root, "init", "-q")
    write_tree(
        root,
        {
            ".claude-plugin/plugin.json": '{"name": "kit", "version": "1.0.0"}',
            "skills/olympiad/SKILL.md": OLD,
            "skills/olympiad/evals/trigger_eval.json": json.dumps(QUERIES),
            # The agent's module, on the path of the sessions and of their workers.
            "trigger_baseline_agent.py": AGENT,
            "pytest.ini": "[pytest]\npythonpath = .\n",
        },
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "olympiad")
    (root / "skills/olympiad/SKILL.md").write_text(NEW, encoding="utf-8")
    return root


def args(root: Path, *more: str) -> list[str]:
    agent = "py:trigger_baseline_agent:answer"
    return [
        "skills/olympiad/evals", "--eval-agent", agent, "--eval-runs", "1",
        "--eval-baseline-plugin", "git:HEAD", "--eval-json", "o.json", *more,
    ]  # fmt: skip


def f1_of(tp: int, counted: int) -> list[float]:
    low, high = proportion_confint(tp, counted, method="wilson")
    return [2 * low / (1 + low), 2 * high / (1 + high)]


def mover_of(p1: float, a: list[float], p2: float, b: list[float]) -> list[float]:
    """Zou and Donner's interval of p1 − p2 from independent intervals a and b."""
    d = p1 - p2
    return [
        max(-1.0, d - ((p1 - a[0]) ** 2 + (b[1] - p2) ** 2) ** 0.5),
        min(1.0, d + ((a[1] - p1) ** 2 + (p2 - b[0]) ** 2) ** 0.5),
    ]


def newcombe(s1: int, n1: int, s2: int, n2: int) -> list[float]:
    return list(confint_proportions_2indep(s1, n1, s2, n2, method="newcomb", compare="diff"))


def test_each_number_before_and_after_with_the_differences_interval(
    pytester: pytest.Pytester, repo: Path, plugin_args: list[str], read_doc: Any
) -> None:
    result = pytester.runpytest(*args(repo, "-o", "eval_trigger_threshold=0.9"), *plugin_args)
    # 5 queries × 2 arms; the baseline run of the rejected key is an error, not a decision.
    result.assert_outcomes(passed=9, errors=1)
    doc = read_doc("o.json")
    assert doc["suite"]["ablation"] == "with-baseline"
    (skill,) = doc["triggers"]
    after, before = skill, skill["baseline"]
    assert after["matrix"] == {"tp": 3, "fp": 0, "fn": 0, "tn": 2}
    assert before["matrix"] == {"tp": 1, "fp": 1, "fn": 1, "tn": 1}
    assert (after["errors"], before["errors"]) == (0, 1)  # kept out of the counts
    assert [q["triggered"] for q in before["queries"]] == [True, False, True, False, None]
    for name in ("precision", "recall", "f1", "accuracy"):
        assert after[name]["value"] == 1.0 and before[name]["value"] == 0.5
        assert before["difference"][name]["value"] == pytest.approx(0.5)
    # precision 3/3 against 1/2 (the triggered queries differ: independent); recall 3/3
    # against 1/2 and accuracy 5/5 against 2/4 are paired, but a margin of the pairs is
    # empty here (every query decided in both arms is right after): Newcombe's phi is 0.
    diff = before["difference"]
    assert diff["precision"]["interval"] == pytest.approx(newcombe(3, 3, 1, 2))
    assert diff["recall"]["interval"] == pytest.approx(newcombe(3, 3, 1, 2))
    assert diff["accuracy"]["interval"] == pytest.approx(newcombe(5, 5, 2, 4))
    # F1: 2·3 / (2·3) after, 2·1 / (2·1 + 1 + 1) before; each arm's interval from the
    # Wilson interval of TP's share of TP + FP + FN (3 of 3, 1 of 3), independent as precision.
    assert after["f1"]["interval"] == pytest.approx(f1_of(3, 3))
    assert before["f1"]["interval"] == pytest.approx(f1_of(1, 3))
    assert diff["f1"]["interval"] == pytest.approx(mover_of(1.0, f1_of(3, 3), 0.5, f1_of(1, 3)))
    # Each run is in the document, the error too.
    (case,) = [c for c in doc["cases"] if c["name"] == "trigger-olympiad-05"]
    assert [r["arm"] for r in case["arms"]["baseline"]] == ["baseline"]
    # The terminal: before → after, and the difference, in 80 columns.
    out = result.stdout.str()
    block = out[out.index("TRIGGERS olympiad") :].splitlines()[:7]
    assert block == [
        "TRIGGERS olympiad: 5 queries · TP 3 FP 0 FN 0 TN 2",
        "  before (git:HEAD): TP 1 FP 1 FN 1 TN 1 · 1 run(s) not made (errors, not counted)",
        "  before → after, Δ = after − before (95% intervals)",
        *(
            f"  {name:<9} 0.50 [{b[0]:.2f}, {b[1]:.2f}] → 1.00 [{a[0]:.2f}, {a[1]:.2f}] "
            f"Δ +0.50 [{d[0]:+.2f}, {d[1]:+.2f}]"
            for name in ("precision", "recall", "f1", "accuracy")
            for b, a, d in [
                (before[name]["interval"], after[name]["interval"], diff[name]["interval"])
            ]
        ),
    ]
    assert all(len(line) <= 80 for line in block[2:])
    # The gate is the working tree's F1 (1.00): the baseline's 0.50 does not gate. (A working
    # tree worse than the commit fails it: tests/unit/test_trigger_change.py.)
    assert "--eval-trigger-threshold" not in out


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
def test_in_an_80_column_terminal_the_table_fits(pytester: pytest.Pytester, repo: Path) -> None:
    from tests.integration.test_progress import run_in_terminal

    (repo / "skills/olympiad/evals/trigger_eval.json").write_text(
        json.dumps(QUERIES[:4]), encoding="utf-8"
    )
    output = run_in_terminal([*args(repo), "-n0", "-p", "no:cacheprovider"], repo, columns=80)
    assert "\x1b[" in output  # a terminal: colours
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output).replace("\r", "")
    lines = plain.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("TRIGGERS olympiad"))
    block = lines[start : start + 7]
    assert block[:3] == [
        "TRIGGERS olympiad: 4 queries · TP 2 FP 0 FN 0 TN 2",
        "  before (git:HEAD): TP 1 FP 1 FN 1 TN 1",
        "  before → after, Δ = after − before (95% intervals)",
    ]
    assert [line.split()[0] for line in block[3:]] == ["precision", "recall", "f1", "accuracy"]
    assert all(" → " in line and " Δ +0.50 [" in line for line in block[3:]), block
    assert all(len(line) <= 80 for line in block), block


def test_under_eval_runs_auto_every_run_of_a_query_is_made(
    pytester: pytest.Pytester, repo: Path, plugin_args: list[str], read_doc: Any
) -> None:
    """A query's rate needs its runs: sequential rounds (which stop a case once its Δ is
    decided or hopeless) leave trigger queries alone, in both arms."""
    (repo / "skills/olympiad/evals/trigger_eval.json").write_text(
        json.dumps(QUERIES[1:3]), encoding="utf-8"
    )  # each query's Δ is clear (after only, before only): a round would stop it early
    command = [a for a in args(repo) if a not in ("--eval-runs", "1")]
    result = pytester.runpytest(*command, "--eval-runs", "auto", *plugin_args)
    result.assert_outcomes(passed=12)  # 2 queries × 3 runs × 2 arms
    (skill,) = read_doc("o.json")["triggers"]
    assert [q["runs"] for q in skill["queries"]] == [3] * 2
    assert [q["runs"] for q in skill["baseline"]["queries"]] == [3] * 2
