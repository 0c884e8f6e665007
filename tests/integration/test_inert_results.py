"""Nothing an agent produced is ever collected or imported by a later pytest: the kept runs are
marked inert wherever the results go, for every suite format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_tree

PLANTED = {
    # Run by pytest if it ever imported the kept copy: it leaves a mark in the project.
    "conftest.py": "import pathlib\npathlib.Path({mark!r}).write_text('imported')\n",
    "test_x.py": "def test_planted():\n    pass\n",
    "evals/planted/prompt.md": "A case the agent planted.\n",
    "evals/planted/graders/any.md": "---\ntype: regex\npattern: x\n---\n",
}


def planting_agent(scripted_agent: Any, mark: Path) -> str:
    files = {name: text.format(mark=str(mark)) for name, text in PLANTED.items()}
    return str(scripted_agent([{"match": "Plant", "reply": "done", "files": files}]))


def later_sessions_collect_nothing_kept(pytester: pytest.Pytester, mark: Path) -> None:
    """Plain ``pytest``, ``pytest -m "not evals"`` and an eval collection, in the project."""
    listed = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", "-n0")
    assert "test_planted" not in listed.stdout.str()
    assert "planted" not in listed.stdout.str()
    ran = pytester.runpytest("-m", "not evals", "-p", "no:cacheprovider", "-n0")
    assert "test_planted" not in ran.stdout.str() and "passed" not in ran.stdout.str()
    assert not mark.exists(), "a later pytest imported a conftest.py an agent wrote"


def test_kept_runs_of_a_directory_suite_are_inert_wherever_they_go(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    """The default results folder, one beside the suite and one inside it: each session's
    kept runs are marked inert (the sessions after the first collect the suite beside the
    earlier ones' kept runs), and later sessions collect none of them."""
    write_tree(
        pytester.path,
        {
            "evals/plants/prompt.md": "---\nruns: 1\n---\nPlant files.\n",
            "evals/plants/graders/done.md": "---\ntype: regex\npattern: done\n---\n",
        },
    )
    mark = pytester.path / "IMPORTED"
    agent = planting_agent(scripted_agent, mark)
    seen: set[Path] = set()
    for output in (None, "eval-results", "evals/kept"):
        args = ["--eval-output-dir", output] if output else []
        result = pytester.runpytest("evals", *plugin_args, "--eval-agent", agent, *args)
        result.assert_outcomes(passed=1)
        kept = {p for p in pytester.path.rglob("conftest.py") if "runs" in p.parts} - seen
        assert len(kept) == 1, f"the agent's conftest.py is kept for reading ({output})"
        seen |= kept
        runs = next(p for p in kept.pop().parents if p.name == "runs")
        assert (runs / ".pytest-plugin-evals-results").is_file(), output
    later_sessions_collect_nothing_kept(pytester, mark)
    # The next eval session finds the one real case, never the planted ones.
    again = pytester.runpytest("evals", "--collect-only", "-q", "-p", "no:cacheprovider", "-n0")
    again.stdout.fnmatch_lines(["*1 test collected*"])


def test_kept_runs_of_a_package_json_suite_are_inert(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    package = {
        "name": "kit",
        "ai": {"evals": [{"input": "Plant files", "expected": [{"includes": "done"}]}]},
    }
    (pytester.path / "package.json").write_text(json.dumps(package), encoding="utf-8")
    mark = pytester.path / "IMPORTED"
    result = pytester.runpytest(
        "package.json", *plugin_args, "--eval-agent", planting_agent(scripted_agent, mark)
    )
    result.assert_outcomes(passed=1)
    (kept,) = [p for p in pytester.path.rglob("conftest.py") if "runs" in p.parts]
    assert kept.is_relative_to(pytester.path / "results")
    later_sessions_collect_nothing_kept(pytester, mark)


def test_a_kept_run_folder_is_inert_too(pytester: pytest.Pytester, scripted_agent: Any) -> None:
    """``--eval-keep-temp`` with pytest's temporary folder inside the project."""
    write_tree(
        pytester.path,
        {
            "evals/plants/prompt.md": "---\nruns: 1\n---\nPlant files.\n",
            "evals/plants/graders/done.md": "---\ntype: regex\npattern: done\n---\n",
        },
    )
    mark = pytester.path / "IMPORTED"
    result = pytester.runpytest(
        "evals", "-n0", "-p", "no:cacheprovider", "--basetemp", "tmp", "--eval-keep-temp",
        "--eval-agent", planting_agent(scripted_agent, mark),
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    assert any((pytester.path / "tmp").rglob("test_x.py"))
    later_sessions_collect_nothing_kept(pytester, mark)
