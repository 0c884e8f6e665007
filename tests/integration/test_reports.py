"""Where the reports go and what they hold: report.html, --eval-report / --eval-output-dir,
and the pytest-html columns and extras."""

from __future__ import annotations

import base64
import html
import json
import re
import subprocess
from typing import Any
from urllib.parse import unquote

import pytest

# What crosses from the workers to the controller is tested: -n 0 and -n 2.
pytestmark = pytest.mark.workers

GRADERS = {
    "hi": "---\ntype: regex\npattern: hi\n---\n",
    "missing": "---\ntype: regex\npattern: nope\nweight: 2\n---\n",
}


def make_case(pytester: pytest.Pytester, name: str = "greets", runs: int = 1) -> None:
    pytester.makefile(".md", **{f"evals/{name}/prompt": f"---\nruns: {runs}\n---\nSay hi\n"})
    for grader, text in GRADERS.items():
        pytester.makefile(".md", **{f"evals/{name}/graders/{grader}": text})


def pytest_html_data(page: str) -> dict[str, Any]:
    """The JSON pytest-html embeds in its report."""
    found = re.search(r'data-jsonblob="([^"]*)"', page)
    assert found, "a pytest-html report"
    data: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return data


def data_uri_text(uri: str) -> str:
    head, _, body = uri.partition(",")
    return base64.b64decode(body).decode() if head.endswith(";base64") else unquote(body)


def test_pytest_html_columns_and_extras(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    make_case(pytester, runs=2)
    agent = scripted_agent([{"match": "Say hi", "reply": "hi <b>there</b>"}])
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--html", "ph.html", "--self-contained-html"
    )
    result.assert_outcomes(failed=2)
    page = (pytester.path / "ph.html").read_text(encoding="utf-8")
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", page)
    assert headers[:6] == ["Result", "Test", "Arm", "Run", "Score", "Duration"]
    tests = pytest_html_data(page)["tests"]
    assert sorted(tests) == ["evals/greets::greets[1]", "evals/greets::greets[2]"]
    for nodeid, (entry,) in tests.items():
        run = nodeid[-2]
        cells = [re.sub(r"<[^>]+>", "", cell) for cell in entry["resultsTableRow"]]
        assert cells[2:5] == ["single", run, "0.33"]
        verdicts, answer = entry["extras"]
        assert verdicts["format_type"] == "html"
        assert "score 0.33" in verdicts["content"]
        assert "✓ <b>hi</b>: matched hi" in verdicts["content"]
        assert "✗ <b>missing</b>: pattern not found in last_message" in verdicts["content"]
        assert answer["name"] == "Answer"
        assert data_uri_text(answer["content"]) == "hi <b>there</b>"


def test_report_paths_are_honoured(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    make_case(pytester)
    agent = scripted_agent([{"match": "Say hi", "reply": "hi"}])
    result = pytester.runpytest(
        "evals",
        *plugin_args,
        "--eval-agent",
        agent,
        "--eval-output-dir",
        "out/dir",
        "--eval-report",
        "pages/eval.html",
    )
    result.assert_outcomes(failed=1)
    out = pytester.path / "out" / "dir"
    doc = json.loads((out / "aggregate-result.json").read_text(encoding="utf-8"))
    assert doc["cases"][0]["name"] == "greets"
    report = pytester.path / "pages" / "eval.html"
    assert "greets" in report.read_text(encoding="utf-8")
    assert not (out / "report.html").exists()
    assert not (pytester.path / "evals" / "results").exists()
    result.stdout.fnmatch_lines(
        [f"JSON: {out / 'aggregate-result.json'}", f"HTML: {report}"], consecutive=True
    )


def test_results_are_written_once_on_the_controller(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    make_case(pytester, "first", runs=2)
    make_case(pytester, "second", runs=2)
    agent = scripted_agent([{"match": "Say hi", "reply": "hi nope"}])
    result = pytester.runpytest("evals", *plugin_args, "--eval-agent", agent)
    result.assert_outcomes(passed=4)
    (stamp,) = (pytester.path / "evals" / "results").iterdir()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z", stamp.name)
    assert (stamp / "aggregate-result.json").is_file()
    assert (stamp / "report.html").is_file()
    doc = json.loads((stamp / "aggregate-result.json").read_text(encoding="utf-8"))
    assert [c["name"] for c in doc["cases"]] == ["first", "second"]
    assert doc["aggregates"]["runsTotal"] == 4
    assert sorted(p.name for p in pytester.path.rglob("aggregate-result.json")) == [
        "aggregate-result.json"
    ]
    assert len(list(pytester.path.rglob("report.html"))) == 1


def test_answer_is_cut_at_4000_characters(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    make_case(pytester)
    long_answer = "hi " + "x" * 4997 + "TAIL"
    agent = scripted_agent([{"match": "Say hi", "reply": long_answer}])
    result = pytester.runpytest(
        "evals",
        *plugin_args,
        "--eval-agent",
        agent,
        "--eval-output-dir",
        "res",
        "--html",
        "ph.html",
        "--self-contained-html",
    )
    result.assert_outcomes(failed=1)
    doc = json.loads((pytester.path / "res" / "aggregate-result.json").read_text())
    run = doc["cases"][0]["arms"]["with"][0]
    assert run["answer"] == long_answer[:4000] and run["answerTruncated"] is True
    page = (pytester.path / "res" / "report.html").read_text(encoding="utf-8")
    assert "(cut at 4,000 characters)" in page
    shown = re.search(r"<pre>(hi x+)…</pre>", page)
    assert shown and len(shown.group(1)) == 4000
    assert "TAIL" not in page
    (entry,) = pytest_html_data((pytester.path / "ph.html").read_text())["tests"].values()
    answer = data_uri_text(entry[0]["extras"][1]["content"])
    assert answer == long_answer[:4000] + "\n[… cut at 4,000 characters]"


def test_git_ignores_every_results_folder(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    """As pytest's own cache folder: no line in the plugin's .gitignore is needed."""
    make_case(pytester)
    agent = scripted_agent([{"match": "Say hi", "reply": "hi nope"}])
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=pytester.path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=pytester.path, check=True)
    subprocess.run([*git, "commit", "-qm", "suite"], cwd=pytester.path, check=True)
    result = pytester.runpytest("evals", *plugin_args, "--eval-agent", agent)
    result.assert_outcomes(passed=1)
    (stamp,) = (pytester.path / "evals" / "results").iterdir()
    assert (stamp / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=pytester.path, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert status.stdout == ""


def test_a_session_that_made_no_runs_writes_no_results_folder(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    """Collection only (a session of load errors only: tests/unit/test_engine_session.py)."""
    make_case(pytester)
    agent = scripted_agent([{"match": "Say hi", "reply": "hi"}])
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-json", "out.json", "--co"
    )
    assert not (pytester.path / "evals" / "results").exists(), result.stdout.str()


def test_pytest_html_shows_the_run_duration_of_runs_made_ahead(
    pytester: pytest.Pytester, scripted_agent: Any
) -> None:
    make_case(pytester, runs=3)
    agent = scripted_agent([{"match": "Say hi", "reply": "hi nope", "sleep": 1.2}])
    result = pytester.runpytest(
        "evals", "-n0", "-p", "no:cacheprovider", "--eval-agent", agent, "--eval-run-ahead",
        "always", "--html", "ph.html", "--self-contained-html",
    )  # fmt: skip
    result.assert_outcomes(passed=3)
    tests = pytest_html_data((pytester.path / "ph.html").read_text(encoding="utf-8"))["tests"]
    for nodeid, (entry,) in tests.items():
        cells = [re.sub(r"<[^>]+>", "", cell) for cell in entry["resultsTableRow"]]
        assert re.fullmatch(r"00:00:\d\d", cells[5]), (nodeid, cells)  # not "1 ms"


def test_a_long_prompt_is_in_junit_once_per_case(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any, read_doc: Any
) -> None:
    prompt = "Say hi. " + "padding " * 50_000  # 400 kB
    pytester.makefile(".md", **{"evals/long/prompt": f"---\nruns: 3\n---\n{prompt}\n"})
    pytester.makefile(".md", **{"evals/long/graders/hi": GRADERS["hi"]})
    agent = scripted_agent([{"match": "Say hi", "reply": "hi"}])
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--junitxml", "junit.xml",
        "--eval-json", "out.json",
    )  # fmt: skip
    result.assert_outcomes(passed=3)
    junit = (pytester.path / "junit.xml").read_text(encoding="utf-8")
    assert junit.count("Say hi. padding") == 1
    assert len(junit) < 1.5 * len(prompt)
    (case,) = read_doc()["cases"]
    assert case["promptMarkdown"] == prompt.strip()  # the document has it whole
