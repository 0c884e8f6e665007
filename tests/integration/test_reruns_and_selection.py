"""Reruns (``--lf``, ``--ff``, ``--sw``, ``--nf``) and selection by node id or case file.

The rerun flags need pytest's cache, so these sessions keep the cacheprovider (in the pytester
folder, the session's rootdir). Which items ran is read from ``-rA``; the order a session runs
its items in is written by a small conftest (on each xdist worker, which all collect alike).
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from tests.helpers import write_tree

GRADER = "---\ntype: regex\npattern: hi\n---\n"

ORDER_PROBE = """
import os
from pathlib import Path


def pytest_collection_finish(session):
    name = "order-" + os.environ.get("PYTEST_XDIST_WORKER", "main") + ".txt"
    text = "\\n".join(item.nodeid for item in session.items)
    Path(session.config.rootpath, name).write_text(text, encoding="utf-8")
"""


def dir_case(where: str, prompt: str, front: str = "runs: 1") -> dict[str, str]:
    return {
        f"{where}/prompt.md": f"---\n{front}\n---\n{prompt}\n",
        f"{where}/graders/hi.md": GRADER,
    }


def suite_json(*cases: tuple[str, str]) -> str:
    return json.dumps(
        {"cases": [{"name": n, "prompt": p, "expect": {"contains": ["hi"]}} for n, p in cases]}
    )


def package_json(name: str, prompt: str) -> str:
    evals = [{"name": name, "input": prompt, "expected": [{"includes": "hi"}]}]
    return json.dumps({"name": "kit", "ai": {"evals": evals}})


OUTCOME = re.compile(r"^(?:PASSED|FAILED|ERROR) (.+?)(?: - .*)?$")


def ran(result: pytest.RunResult) -> list[str]:
    """The items a session ran, from its ``-rA`` summary (with and without xdist)."""
    return sorted(m.group(1) for line in result.stdout.lines if (m := OUTCOME.match(line)))


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stdout.lines if "::" in line]


@pytest.fixture
def xdist_args(plugin_args: list[str]) -> list[str]:
    """``-n0`` / ``-n2`` as ``plugin_args`` has them, with the cache these flags need."""
    return [arg for arg in plugin_args if arg not in ("-p", "no:cacheprovider")]


# -- reruns -----------------------------------------------------------------------------------

#: Single-arm items in collection order: dir cases, an evals.json, a nested case, package.json.
ITEMS = [
    "evals/alpha::alpha[1]",
    "evals/beta::beta[1]",
    "evals/beta::beta[2]",
    "evals/evals.json::delta[1]",
    "evals/evals.json::epsilon[1]",
    "evals/group/gamma::gamma[1]",
    "package.json::pkg[1]",
]
#: With FAILING_RULES: beta's two runs and delta fail their graders.
FAILED = ["evals/beta::beta[1]", "evals/beta::beta[2]", "evals/evals.json::delta[1]"]
PASSED = [nodeid for nodeid in ITEMS if nodeid not in FAILED]

SAY_HI = [{"match": "", "reply": "hi"}]
FAILING_RULES = [{"match": "Beta", "reply": "nope"}, {"match": "Delta", "reply": "nope"}, *SAY_HI]


#: A ``py:`` agent (called in the session's process: no interpreter started per run): the
#: first rule of ``agent-rules.json`` beside it whose ``match`` is in the prompt gives the reply.
RULES_AGENT = """\
import json
from pathlib import Path

RULES = Path(__file__).with_name("agent-rules.json")


def answer(request):
    for rule in json.loads(RULES.read_text(encoding="utf-8")):
        if rule["match"] in request.prompt:
            return rule["reply"]
    return "no rule matched"
"""


class Suite:
    """The rerun suite in a pytester folder, run with one rules agent."""

    def __init__(self, pytester: pytest.Pytester):
        self.pytester = pytester
        write_tree(
            pytester.path,
            {
                "conftest.py": ORDER_PROBE,
                "package.json": package_json("pkg", "Pkg: say"),
                "rules_agent.py": RULES_AGENT,
                "pytest.ini": "[pytest]\npythonpath = .\n",
            },
        )
        write_tree(pytester.path, dir_case("evals/alpha", "Alpha: say"))
        write_tree(pytester.path, dir_case("evals/beta", "Beta: say", "runs: 2"))
        write_tree(pytester.path, dir_case("evals/group/gamma", "Gamma: say"))
        write_tree(
            pytester.path,
            {"evals/evals.json": suite_json(("delta", "Delta: say"), ("epsilon", "Epsilon: say"))},
        )

    def run(self, rules: list[dict[str, Any]], *args: str) -> pytest.RunResult:
        for old in self.pytester.path.glob("order-*.txt"):
            old.unlink()
        (self.pytester.path / "agent-rules.json").write_text(json.dumps(rules), encoding="utf-8")
        return self.pytester.runpytest("-rA", "--eval-agent", "py:rules_agent:answer", *args)

    def order(self) -> list[str]:
        """The items the last session ran, in its order (the same on every xdist worker)."""
        orders = [
            p.read_text(encoding="utf-8").splitlines()
            for p in self.pytester.path.glob("order-*.txt")
        ]
        assert orders, "the session collected nothing"
        assert all(o == orders[0] for o in orders), orders
        return orders[0]


@pytest.fixture
def suite(pytester: pytest.Pytester) -> Suite:
    return Suite(pytester)


def lastfailed(suite: Suite) -> list[str]:
    path = suite.pytester.path / ".pytest_cache" / "v" / "cache" / "lastfailed"
    return sorted(json.loads(path.read_text(encoding="utf-8")))


@pytest.mark.workers
def test_last_failed_reruns_only_the_failed_runs(suite: Suite, xdist_args: list[str]) -> None:
    """The runs that failed (reported by the workers, kept by the controller) run alone under
    ``--lf``."""
    first = suite.run(FAILING_RULES, *xdist_args)
    assert ran(first) == sorted(ITEMS)
    first.assert_outcomes(passed=len(PASSED), failed=len(FAILED))
    assert lastfailed(suite) == FAILED
    again = suite.run(FAILING_RULES, "--lf", *xdist_args)
    assert ran(again) == FAILED
    assert suite.order() == FAILED
    assert "not in selected tests" not in again.stdout.str()


def test_failed_first_new_first_and_last_failed_with_a_node_id(
    suite: Suite, xdist_args: list[str]
) -> None:
    """``--ff`` runs the runs that failed first; ``--lf`` with a node id runs that run, of those
    that failed, and once they pass none is known to fail; ``--nf`` runs a case the cache has
    not seen first, however old its files.
    (What crosses from xdist workers for these flags: the test above; pytest-xdist's
    controller stores no node ids for ``--nf``: these sessions run alone.)"""
    suite.run(FAILING_RULES, *xdist_args)
    first_failed = suite.run(FAILING_RULES, "--ff", *xdist_args)
    assert ran(first_failed) == sorted(ITEMS), "--ff"
    assert suite.order() == FAILED + PASSED, "--ff"
    assert lastfailed(suite) == FAILED
    one = suite.run(FAILING_RULES, "--lf", "evals/beta::beta[2]", *xdist_args)
    assert ran(one) == ["evals/beta::beta[2]"], "--lf with a node id"
    fixed = suite.run(SAY_HI, "--lf", *xdist_args)
    assert ran(fixed) == FAILED, "--lf once they pass"
    assert lastfailed(suite) == [], "--lf once they pass"

    write_tree(suite.pytester.path, dir_case("evals/zeta", "Zeta: say"))
    # Older than every other case: ordered by time alone, the new case would run last.
    for path in (
        "evals/zeta/graders/hi.md",
        "evals/zeta/graders",
        "evals/zeta/prompt.md",
        "evals/zeta",
    ):
        os.utime(suite.pytester.path / path, (1_000_000_000, 1_000_000_000))
    new_first = suite.run(SAY_HI, "--nf", *xdist_args)
    assert ran(new_first) == sorted([*ITEMS, "evals/zeta::zeta[1]"]), "--nf"
    order = suite.order()
    assert order[0] == "evals/zeta::zeta[1]", "--nf"
    assert sorted(order[1:]) == sorted(ITEMS), "--nf"


def test_stepwise_starts_again_at_the_run_that_failed(suite: Suite, xdist_args: list[str]) -> None:
    """``--sw`` stops at the run that failed and starts there again (under xdist workers the
    failed runs cross the same way as under ``--lf``, above)."""
    # One run fails (so which one stopped the session does not depend on the workers' timing).
    only_beta = [{"match": "Beta", "reply": "nope"}, *SAY_HI]
    one_run = ["--eval-runs", "1"]
    first = suite.run(only_beta, "--sw", *one_run, *xdist_args)
    assert "evals/beta::beta[1]" in ran(first)
    fixed = suite.run(SAY_HI, "--sw", *one_run, *xdist_args)
    after_beta = [i for i in ITEMS if i not in ("evals/alpha::alpha[1]", "evals/beta::beta[2]")]
    assert ran(fixed) == sorted(after_beta)
    assert suite.order() == after_beta
    fixed.assert_outcomes(passed=len(after_beta))


# -- selection by node id and by case file ----------------------------------------------------

#: A plugin (so two arms) with every suite format: dir cases (one renamed, one in case.yaml,
#: one in a group), an evals.json, an sy suite and a package.json.
KIT = {
    ".claude-plugin/plugin.json": '{"name": "kit", "version": "0.1.0"}',
    **dir_case("evals/alpha", "Alpha: say", "runs: 2"),
    **dir_case("evals/named", "Named: say", "name: renamed\nruns: 1"),
    "evals/group/beta/case.yaml": (
        'schema_version: "1.1"\nname: beta\nruns: 1\nexecution:\n  prompt: "Beta: say"\n'
        "graders:\n  - name: hi\n    type: regex\n    pattern: hi\n"
    ),
    "evals/evals.json": suite_json(("suggests version", "Json: say")),
    "evals/golden/weather.yaml": (
        "name: weather\ncases:\n  - name: current-conditions\n    input: 'Weather: say'\n"
        "    expected_contains: [hi]\n"
    ),
    "package.json": package_json("pkg", "Pkg: say"),
}

#: Every item of KIT, as ``--collect-only -q`` prints them.
KIT_ITEMS = [
    "evals/alpha::alpha[with-1]",
    "evals/alpha::alpha[with-2]",
    "evals/alpha::alpha[without-1]",
    "evals/alpha::alpha[without-2]",
    "evals/evals.json::suggests version[with-1]",
    "evals/evals.json::suggests version[without-1]",
    "evals/golden/weather.yaml::current-conditions[with-1]",
    "evals/golden/weather.yaml::current-conditions[without-1]",
    "evals/group/beta::beta[with-1]",
    "evals/group/beta::beta[without-1]",
    "evals/named::renamed[with-1]",
    "evals/named::renamed[without-1]",
    "package.json::pkg[with-1]",
    "package.json::pkg[without-1]",
]


@pytest.fixture
def kit(pytester: pytest.Pytester) -> pytest.Pytester:
    write_tree(pytester.path, KIT)
    return pytester


def collect(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", *args)


def test_the_kit_collects_these_items(kit: pytest.Pytester) -> None:
    assert collected(collect(kit)) == KIT_ITEMS


@pytest.mark.parametrize("half", [0, 1])
def test_node_ids_select_their_items(kit: pytest.Pytester, half: int) -> None:
    """Every item's node id, of every suite format, selects that item and no other run of its
    case: given half the items (every other one, so some runs of each case and not others),
    the session collects exactly them."""
    picked = KIT_ITEMS[half::2]
    result = collect(kit, *picked)
    assert collected(result) == picked
    assert result.ret == pytest.ExitCode.OK


GROUPS = sorted({nodeid.partition("[")[0] for nodeid in KIT_ITEMS})


@pytest.mark.parametrize("half", [0, 1])
def test_a_node_id_without_its_label_selects_every_run(kit: pytest.Pytester, half: int) -> None:
    """A case's node id without a run label selects every run of that case and none of the
    cases not named (half of the cases, of every format, in each session)."""
    groups = GROUPS[half::2]
    result = collect(kit, *groups)
    assert collected(result) == [i for i in KIT_ITEMS if i.partition("[")[0] in groups]


ALPHA = KIT_ITEMS[:4]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["evals/group/beta/case.yaml"], KIT_ITEMS[8:10]),
        # Case files and node ids together, in any order; each item once.
        (["evals/named::renamed[without-1]", "evals/alpha/graders/hi.md"], [KIT_ITEMS[11], *ALPHA]),
        (["evals/alpha::alpha[with-2]", "evals/alpha::alpha[with-2]"], ALPHA[1:2]),
        # A folder given whole collects every run of its cases.
        (["evals/alpha::alpha[with-2]", "evals"], KIT_ITEMS[:12]),
    ],
)
def test_case_files_select_their_case(
    kit: pytest.Pytester, args: list[str], expected: list[str]
) -> None:
    """What pytest collects of the arguments a case's files and node ids become (which
    arguments those are, for every combination: tests/unit/test_case_picks.py)."""
    assert collected(collect(kit, *args)) == expected


def test_node_ids_from_inside_an_evals_folder(
    kit: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without an ini file the rootdir is where pytest starts, and the ids are relative to it."""
    monkeypatch.chdir(kit.path / "evals" / "group")
    assert collected(collect(kit)) == ["beta::beta[with-1]", "beta::beta[without-1]"]
    assert collected(collect(kit, "beta::beta[without-1]")) == ["beta::beta[without-1]"]
    monkeypatch.chdir(kit.path / "evals" / "group" / "beta")
    assert collected(collect(kit, ".::beta[with-1]")) == [".::beta[with-1]"]


def test_a_run_that_is_not_there_is_a_usage_error(kit: pytest.Pytester) -> None:
    result = collect(kit, "evals/alpha::alpha[with-3]")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: not found: evals/alpha::alpha[with-3]",
            "(the case's runs: alpha[with-1], alpha[with-2], alpha[without-1], alpha[without-2])",
        ]
    )
    # A folder that is no case is still refused by pytest itself.
    refused = collect(kit, "evals/group::beta[with-1]")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*directory argument cannot contain :: selection parts*"])


def test_a_case_that_does_not_load_is_said_whatever_run_is_named(
    kit: pytest.Pytester,
) -> None:
    write_tree(kit.path, {"evals/alpha/graders/broken.md": "no frontmatter\n"})
    result = collect(kit, "evals/alpha::alpha[with-1]")
    assert collected(result) == ["evals/alpha::alpha"]


def test_the_ids_a_session_prints_select_their_runs(
    kit: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    """What ``-rA`` and JUnit say, given back, runs exactly those runs. (Under xdist each
    worker collects the same way; the ids crossing to the controller: the ``--lf`` test.)"""
    agent = scripted_agent(SAY_HI)
    first = kit.runpytest(*plugin_args, "-rA", "--eval-agent", agent, "--junitxml", "all.xml")
    assert ran(first) == sorted(KIT_ITEMS)
    junit = ET.parse(kit.path / "all.xml").getroot()
    recorded = [
        json.loads(prop.get("value", ""))["nodeid"]
        for prop in junit.iter("property")
        if prop.get("name") == "plugin_evals"
    ]
    assert sorted(recorded) == sorted(KIT_ITEMS)
    picked = [
        "evals/alpha::alpha[without-2]",
        "evals/named::renamed",
        "evals/evals.json::suggests version[with-1]",
        "evals/golden/weather.yaml::current-conditions[without-1]",
        "evals/group/beta/case.yaml",
        "package.json::pkg[with-1]",
    ]
    again = kit.runpytest(*plugin_args, "-rA", "--eval-agent", agent, *picked)
    assert ran(again) == sorted(
        [
            "evals/alpha::alpha[without-2]",
            "evals/named::renamed[with-1]",
            "evals/named::renamed[without-1]",
            "evals/evals.json::suggests version[with-1]",
            "evals/golden/weather.yaml::current-conditions[without-1]",
            "evals/group/beta::beta[with-1]",
            "evals/group/beta::beta[without-1]",
            "package.json::pkg[with-1]",
        ]
    )
    again.assert_outcomes(passed=8)
