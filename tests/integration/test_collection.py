"""What gets collected, and how eval items are selected."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helpers import needs_marker_arguments, write_tree

# What crosses from the workers to the controller is tested: -n 0 and -n 2.
pytestmark = pytest.mark.workers

GRADER = "---\ntype: regex\npattern: hi\n---\n"


def prompt(runs: int = 1, tags: str = "[]") -> str:
    return f"---\nruns: {runs}\ntags: {tags}\n---\nSay hi\n"


def case_files(where: str, runs: int = 1, tags: str = "[]") -> dict[str, str]:
    return {f"{where}/prompt.md": prompt(runs, tags), f"{where}/graders/hi.md": GRADER}


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stdout.lines if "::" in line]


def test_a_project_without_evals_collects_nothing_extra(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_one():\n    pass\n\ndef test_two():\n    pass\n")
    write_tree(pytester.path, case_files("stray"))
    write_tree(pytester.path, case_files("notevals/case"))
    write_tree(
        pytester.path, {"package.json": json.dumps({"name": "x", "scripts": {"evals": "x"}})}
    )
    write_tree(
        pytester.path, {"docs/evals.json": json.dumps({"cases": [{"name": "a", "prompt": "b"}]})}
    )
    write_tree(pytester.path, {"suite.yaml": "cases:\n  - name: a\n    input: b\n"})
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    assert collected(result) == ["test_x.py::test_one", "test_x.py::test_two"]
    ran = pytester.runpytest("-p", "no:cacheprovider")
    ran.assert_outcomes(passed=2)
    assert "plugin evals" not in ran.stdout.str()
    assert not list(pytester.path.rglob("results"))


def test_eval_paths_makes_another_folder_an_evals_folder(pytester: pytest.Pytester) -> None:
    write_tree(pytester.path, case_files("suites/alpha"))
    write_tree(pytester.path, case_files("other/beta"))
    pytester.makeini("[pytest]\neval_paths = suites\n")
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    assert collected(result) == ["suites/alpha::alpha[1]"]


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    """Four cases: two tagged, one nested in a group, plus results/ and mocks/ that are no cases."""
    write_tree(pytester.path, case_files("evals/suggests-version", tags="[smoke, a]"))
    write_tree(pytester.path, case_files("evals/summarise", tags="[b, needs-net]"))
    write_tree(pytester.path, case_files("evals/other", runs=2, tags="[_private, skip, c, 'a(b)']"))
    write_tree(pytester.path, case_files("evals/group/nested-case"))
    write_tree(pytester.path, case_files("evals/results/2026-01-01T00-00-00-000Z/old"))
    write_tree(
        pytester.path, {"evals/results/x/evals.json": '{"cases": [{"name": "r", "prompt": "p"}]}'}
    )
    # Case-shaped files under mocks/ are mock answers (a tool named "prompt"), never cases.
    write_tree(
        pytester.path,
        {"evals/mocks/server/prompt.md": "Say hi\n", "evals/mocks/server/graders/hi.md": GRADER},
    )
    write_tree(pytester.path, {"evals/mocks/tracker/create_issue.md": "Created #1\n"})
    write_tree(pytester.path, case_files("evals/group/mocks/srv"))
    return pytester


#: Every item, in directory-path order (as the reference orders cases).
ALL = [
    "evals/group/nested-case::nested-case[1]",
    "evals/other::other[1]",
    "evals/other::other[2]",
    "evals/suggests-version::suggests-version[1]",
    "evals/summarise::summarise[1]",
]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-k", "summarise"], ["evals/summarise::summarise[1]"]),
        (["-m", "smoke"], ["evals/suggests-version::suggests-version[1]"]),
        (["-m", "needs-net", "--strict-markers"], ["evals/summarise::summarise[1]"]),
        pytest.param(
            ["-m", "evals(run=2)"], ["evals/other::other[2]"], marks=needs_marker_arguments
        ),
        (["--eval-case", "su*"], ALL[3:]),
        (["--eval-tag", "a", "--eval-tag", "b"], ALL[3:]),
        (["--eval-tag", "b", "--eval-case", "sug*"], []),
        (["evals/group/nested-case"], ["evals/group/nested-case::nested-case[1]"]),
        (["evals/group"], ["evals/group/nested-case::nested-case[1]"]),
        # pytest's own folder collection: its options hold for case folders and groups too.
        (["--ignore=evals/summarise"], [*ALL[:3], ALL[3]]),
        (["--ignore-glob=*/oth*"], [ALL[0], *ALL[3:]]),
        (["--deselect", "evals/other::other[2]"], [ALL[0], ALL[1], *ALL[3:]]),
        (["-o", "norecursedirs=group"], ALL[1:]),
    ],
)
def test_selection(suite: pytest.Pytester, args: list[str], expected: list[str]) -> None:
    """Each way of selecting reaches the collection: pytest's own, and the plugin's options
    (which cases a glob or tags select: tests/unit/test_case_selection.py)."""
    result = suite.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", *args)
    assert collected(result) == expected
    # A selection that matches nothing collects nothing, and only then is exit 5 right.
    expected_ret = pytest.ExitCode.OK if expected else pytest.ExitCode.NO_TESTS_COLLECTED
    assert result.ret == expected_ret
    assert "Traceback" not in result.stdout.str()


@pytest.mark.parametrize(
    ("args", "collected_build"),
    [([], True), (["-o", "norecursedirs=build"], False)],
)
def test_a_case_named_like_a_build_folder_is_collected(
    suite: pytest.Pytester, args: list[str], collected_build: bool
) -> None:
    """pytest's default ``norecursedirs`` passes over ``build``, ``dist`` and ``venv``: a case
    folder so named is still a case (the reference runs it), unless the project says not."""
    write_tree(suite.path, {"evals/build/prompt.md": "---\nruns: 1\n---\nBuild it.\n"})
    result = suite.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", *args)
    assert ("evals/build::build" in collected(result)) is collected_build
    assert len(collected(result)) == len(ALL) + collected_build


def test_a_conftest_in_an_evals_folder_is_pytest_s(suite: pytest.Pytester) -> None:
    """A conftest.py in an evals folder or a group of cases acts there as anywhere: its
    ``collect_ignore`` leaves cases out, as it would leave out tests."""
    write_tree(
        suite.path,
        {
            "evals/conftest.py": "collect_ignore = ['summarise']\n",
            "evals/group/conftest.py": "collect_ignore_glob = ['nested-*']\n",
        },
    )
    result = suite.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    assert collected(result) == [*ALL[1:3], ALL[3]]


def test_results_and_mocks_are_never_collected(suite: pytest.Pytester) -> None:
    result = suite.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    text = result.stdout.str()
    assert "results" not in text and "mocks" not in text and "old" not in text
    assert collected(result) == ALL


def test_a_broken_mock_file_is_one_error_and_the_cases_still_run(
    pytester: pytest.Pytester, scripted_agent: Any
) -> None:
    write_tree(pytester.path, case_files("evals/first"))
    write_tree(pytester.path, case_files("evals/second"))
    # A case's prompt.md dropped under mocks/ is a mock file with keys mocks do not have.
    write_tree(pytester.path, case_files("evals/mocks/server"))
    agent = scripted_agent([{"match": "Say hi", "reply": "hi"}])
    result = pytester.runpytest("evals", "-p", "no:cacheprovider", "--eval-agent", agent)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(['*evals/mocks/server/prompt.md:2: unknown key "runs"*'])
    assert "Traceback" not in result.stdout.str()


def test_tags_that_pytest_reserves_stay_tags(
    suite: pytest.Pytester, scripted_agent: Any, read_doc: Any
) -> None:
    """A ``skip``, ``_private`` or ``a(b)`` tag neither breaks collection nor skips the case."""
    agent = scripted_agent([{"match": "Say hi", "reply": "hi"}])
    result = suite.runpytest(
        "evals/other", "-p", "no:cacheprovider", "--strict-markers", "--eval-agent", agent,
        "--eval-json", "o.json",
    )  # fmt: skip
    result.assert_outcomes(passed=2)
    assert read_doc("o.json")["cases"][0]["tags"] == ["_private", "skip", "c", "a(b)"]
    # ``--eval-tag skip`` selects it (which tags select: tests/unit/test_case_selection.py).
    by_tag = suite.runpytest(
        "--collect-only", "-q", "-p", "no:cacheprovider", "--strict-markers", "--eval-tag", "skip"
    )
    assert collected(by_tag) == ALL[1:3]


def test_tag_selection_runs_only_the_selected(
    suite: pytest.Pytester, plugin_args: list[str], scripted_agent: Any, read_doc: Any
) -> None:
    agent = scripted_agent([{"match": "Say hi", "reply": "hi"}])
    result = suite.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-tag", "smoke", "--eval-json", "o.json"
    )
    result.assert_outcomes(passed=1)  # (xdist workers do not report deselections)
    doc = read_doc("o.json")
    assert [c["name"] for c in doc["cases"]] == ["suggests-version"]
    assert doc["suite"]["tagFilters"] == ["smoke"]


def test_python_tests_in_a_folder_named_evals_are_still_collected(
    pytester: pytest.Pytester,
) -> None:
    """Installing the plugin takes nothing away: test modules beside eval cases still run."""
    write_tree(pytester.path, {"tests/evals/__init__.py": "", "tests/evals/test_model.py": TEST_A})
    write_tree(pytester.path, {"evals/test_beside.py": TEST_A})
    write_tree(
        pytester.path, {"evals/group/test_in_group.py": TEST_A, "evals/helpers/test_h.py": TEST_A}
    )
    write_tree(pytester.path, {"evals/results/test_old.py": TEST_A})
    write_tree(pytester.path, case_files("evals/alpha"))
    write_tree(pytester.path, case_files("evals/group/beta"))
    result = pytester.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    assert collected(result) == [
        "evals/alpha::alpha[1]",
        "evals/group/beta::beta[1]",
        "evals/group/test_in_group.py::test_a",
        "evals/helpers/test_h.py::test_a",
        "evals/test_beside.py::test_a",
        "tests/evals/test_model.py::test_a",
    ]


TEST_A = "def test_a():\n    pass\n"


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("evals/group", ["nested-case::nested-case[1]"]),
        ("evals/group/nested-case", [".::nested-case[1]"]),
        ("evals/results", []),
    ],
)
def test_running_from_inside_an_evals_folder(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, where: str, expected: list[str]
) -> None:
    """Without an ini file the rootdir is the folder itself; its cases still belong to evals/."""
    monkeypatch.chdir(suite.path / where)
    result = suite.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    assert collected(result) == expected
