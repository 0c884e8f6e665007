"""Where the reports go and what they hold: report.html, --eval-report / --eval-output-dir,
and the pytest-html columns and extras."""

from __future__ import annotations

import base64
import html
import json
import re
from typing import Any
from urllib.parse import unquote

import pytest

from tests.helpers import git

GRADERS = {
    "hi": "---\ntype: regex\npattern: hi\n---\n",
    "missing": "---\ntype: regex\npattern: nope\nweight: 2\n---\n",
}

LONG_ANSWER = "hi " + "x" * 4997 + "TAIL"
LONG_PROMPT = "Say hi. " + "padding " * 50_000  # 400 kB


def make_case(
    pytester: pytest.Pytester, name: str = "greets", runs: int = 1, prompt: str = "Say hi"
) -> None:
    pytester.makefile(".md", **{f"evals/{name}/prompt": f"---\nruns: {runs}\n---\n{prompt}\n"})
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


@pytest.mark.workers  # what crosses from the workers to the controller
def test_one_session_writes_every_report_once_on_the_controller(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    """One session, in a git repository, writes the results folder (one stamp, one document,
    one report.html, ignored by git), the pytest-html report (columns, verdicts and answer
    extras, a long answer cut) and the JUnit file (a long prompt once per case)."""
    make_case(pytester, "greets", runs=2, prompt="Greet me")
    make_case(pytester, "rambles", prompt="Ramble")
    pytester.makefile(".md", **{"evals/long/prompt": f"---\nruns: 3\n---\n{LONG_PROMPT}\n"})
    pytester.makefile(".md", **{"evals/long/graders/hi": GRADERS["hi"]})
    agent = scripted_agent(
        [
            {"match": "Greet me", "reply": "hi <b>there</b>"},
            {"match": "Ramble", "reply": LONG_ANSWER},
            {"match": "Say hi", "reply": "hi"},
        ]
    )
    git(pytester.path, "init", "-q")
    git(pytester.path, "add", "-A")
    git(pytester.path, "commit", "-qm", "suite")
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--html", "ph.html",
        "--self-contained-html", "--junitxml", "junit.xml",
    )  # fmt: skip
    result.assert_outcomes(passed=3, failed=3)

    (stamp,) = (pytester.path / "evals" / "results").iterdir()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z", stamp.name), stamp.name
    doc = json.loads((stamp / "aggregate-result.json").read_text(encoding="utf-8"))
    assert [c["name"] for c in doc["cases"]] == ["greets", "long", "rambles"], "every case"
    assert doc["aggregates"]["runsTotal"] == 6, "every worker's runs in the one document"
    found = sorted(p.relative_to(pytester.path) for p in pytester.path.rglob("*"))
    reports = [p for p in found if p.name in ("aggregate-result.json", "report.html")]
    at = stamp.relative_to(pytester.path)
    assert reports == [at / "aggregate-result.json", at / "report.html"], "one of each"
    lines = (stamp / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert lines[-1] == "*", "the results folder ignores itself"
    status = git(pytester.path, "status", "--porcelain", "--untracked-files=all")
    assert sorted(status.splitlines()) == ["?? junit.xml", "?? ph.html"], "git sees no results"

    page = (pytester.path / "ph.html").read_text(encoding="utf-8")
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", page)
    assert headers[:6] == ["Result", "Test", "Arm", "Run", "Score", "Duration"]
    tests = pytest_html_data(page)["tests"]
    assert sorted(tests) == [
        *(f"evals/greets::greets[{n}]" for n in (1, 2)),
        *(f"evals/long::long[{n}]" for n in (1, 2, 3)),
        "evals/rambles::rambles[1]",
    ]
    for n in (1, 2):
        (entry,) = tests[f"evals/greets::greets[{n}]"]
        cells = [re.sub(r"<[^>]+>", "", cell) for cell in entry["resultsTableRow"]]
        assert cells[2:5] == ["single", str(n), "0.33"], "the Arm, Run and Score columns"
        verdicts, answer = entry["extras"]
        assert verdicts["format_type"] == "html"
        assert "score 0.33" in verdicts["content"]
        assert "✓ <b>hi</b>: matched hi" in verdicts["content"]
        assert "✗ <b>missing</b>: pattern not found in last_message" in verdicts["content"]
        assert answer["name"] == "Answer"
        assert data_uri_text(answer["content"]) == "hi <b>there</b>", "the answer, escaped"

    (entry,) = tests["evals/rambles::rambles[1]"]
    answer = data_uri_text(entry["extras"][1]["content"])
    assert answer == LONG_ANSWER[:4000] + "\n[… cut at 4,000 characters]", "pytest-html cut"
    (rambles,) = (c for c in doc["cases"] if c["name"] == "rambles")
    run = rambles["arms"]["with"][0]
    assert run["answer"] == LONG_ANSWER[:4000] and run["answerTruncated"] is True, "JSON cut"
    report = (stamp / "report.html").read_text(encoding="utf-8")
    assert "(cut at 4,000 characters)" in report
    shown = re.search(r"<pre>(hi x+)…</pre>", report)
    assert shown and len(shown.group(1)) == 4000, "report.html cut"
    assert "TAIL" not in report

    junit = (pytester.path / "junit.xml").read_text(encoding="utf-8")
    assert junit.count("Say hi. padding") == 1, "the long prompt once per case in JUnit"
    assert len(junit) < 1.5 * len(LONG_PROMPT)
    (padded,) = (c for c in doc["cases"] if c["name"] == "long")
    assert padded["promptMarkdown"] == LONG_PROMPT.strip(), "the document has it whole"


def test_report_paths_are_honoured(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any
) -> None:
    """The JSON document and report.html go where the options say (option parsing: either
    process alike)."""
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


@pytest.mark.workers
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
