"""``--eval-markdown`` and ``--eval-step-summary`` as a CI job runs them: a real session (a
``py:`` agent), its summary file and the job's summary, hostile case names and notes shown as
text, what got worse since ``--eval-compare``'s session (one line when the job's summary is
asked for outside GitHub Actions: tests/unit/test_engine_session.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.reporting.markdown import MARKER
from pytest_plugin_evals.reporting.markdown_text import ZWSP
from tests.unit.test_reporting_markdown import GITHUB_LINKED, SUMMARY_TAGS, rendered

#: A case name from an evals.json suite: Markdown, HTML, a mention, a reference, an address.
HOSTILE = "x|y `c` <script>alert(1)</script> ![i](http://e.example/i.png) @octocat #12"
#: What the agent raises in the hostile case's with arm: its note, over two lines.
RAISED = "boom | `x` <img src=x onerror=alert(1)> @admin #7\n- item www.evil.example"

#: ``greets`` passes with the plugin only (or, once answers.json says "worse", in no arm).
AGENT = """\
import json, pathlib

HERE = pathlib.Path(__file__).parent  # a run's working folder is its sandbox's


def answer(request):
    worse = (HERE / "worse").exists()
    if request.case.name != "greets":
        if request.arm == "with":
            raise ValueError(json.loads((HERE / "raised.json").read_text()))
        return "no"
    return "ALPHA" if request.arm == "with" and not worse else "no"
"""


def make_suite(pytester: pytest.Pytester) -> None:
    pytester.makefile(".json", **{".claude-plugin/plugin": '{"name": "helper"}'})
    pytester.makefile(".md", **{"evals/greets/prompt": "---\nruns: 3\n---\nSay hi"})
    grader = "---\ntype: regex\npattern: ALPHA\n---\n"
    pytester.makefile(".md", **{"evals/greets/graders/alpha": grader})
    suite = {"cases": [{"name": HOSTILE, "prompt": "hostile", "expect": {"contains": ["ALPHA"]}}]}
    (pytester.path / "evals" / "evals.json").write_text(json.dumps(suite), encoding="utf-8")
    (pytester.path / "raised.json").write_text(json.dumps(RAISED), encoding="utf-8")
    pytester.makepyfile(md_agent=AGENT)
    pytester.makeini("[pytest]\npythonpath = .\n")


def run(pytester: pytest.Pytester, *args: str) -> Any:
    return pytester.runpytest(
        "evals", "--eval-agent", "py:md_agent:answer", "--eval-markdown", "out/summary.md",
        *args,
    )  # fmt: skip


@pytest.mark.workers
def test_the_summary_file_and_the_job_summary_of_a_real_session(
    pytester: pytest.Pytester, plugin_args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    make_suite(pytester)
    step = pytester.path / "step-summary.md"
    step.write_text("# an earlier step's summary\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    result = run(pytester, *plugin_args, "--eval-step-summary")
    assert result.ret == 1  # the hostile case is below the threshold
    summary = pytester.path / "out" / "summary.md"
    result.stdout.fnmatch_lines([f"Markdown: {summary}"])
    text = summary.read_text(encoding="utf-8")
    assert text.startswith(MARKER + "\n## Plugin evals: failed\n")
    page = rendered(text)
    header, *rows = page.rows
    assert header == ["case", "with", "without", "Δ [95% interval]", "verdict"]
    names = {row[0].replace(ZWSP, ""): row for row in rows}
    assert set(names) == {"greets", HOSTILE[:39] + "…"}
    assert names["greets"][1:3] == ["1.00", "0.00"] and names["greets"][3].startswith("+1.00 [")
    (link,) = page.named("a")
    report = summary.parent / str(link["href"])
    assert report.name == "report.html" and report.is_file()
    # The hostile name and the agent's note are text: nothing linked, loaded, tagged or pinged.
    assert {tag for tag, _ in page.tags} <= SUMMARY_TAGS | {"a"}
    body = "".join(page.text)
    assert " ".join(RAISED.split()) in " ".join(body.replace(ZWSP, "").split())
    for pattern in GITHUB_LINKED:
        assert not pattern.search(body), pattern.pattern
    # The job's summary: added after what was there, the same text but the link (the report's
    # path from the job's folder: a step summary has no folder to link from).
    added = step.read_text(encoding="utf-8").removeprefix("# an earlier step's summary\n")
    relative = os.path.relpath(report.resolve(), pytester.path)
    assert added == text.replace(f"[The full HTML report]({link['href']})",
                                 f"The full HTML report: {relative}")  # fmt: skip


def test_what_got_worse_since_the_compared_session_and_the_report_address(
    pytester: pytest.Pytester,
) -> None:
    make_suite(pytester)
    assert run(pytester, "-p", "no:cacheprovider", "-k", "greets").ret == 0
    Path(pytester.path / "worse").touch()
    url = "https://github.com/o/r/actions/runs/1"
    result = run(
        pytester, "-p", "no:cacheprovider", "-k", "greets", "--eval-compare", "last",
        "--eval-report-url", url,
    )  # fmt: skip
    assert result.ret == 1
    text = (pytester.path / "out" / "summary.md").read_text(encoding="utf-8")
    page = rendered(text)
    body = " ".join(page.text)
    assert "Worse: 1 worse." in body
    assert "greets: 1.00 → 0.00, change -1.00 [" in body
    assert [a["href"] for a in page.named("a")] == [url]


def test_the_merge_of_shards_writes_the_summary_of_the_whole_suite(
    pytester: pytest.Pytester,
) -> None:
    """``merge --markdown`` summarizes every shard's cases, linking the merged report."""
    import sys

    make_suite(pytester)
    for k in (1, 2):
        shard = (
            "--eval-shard",
            f"{k}/2",
            "--eval-output-dir",
            f"shard-{k}",
            "--eval-threshold",
            "0",
        )
        assert run(pytester, "-p", "no:cacheprovider", *shard).ret == 0
    merged = pytester.run(
        sys.executable, "-m", "pytest_plugin_evals", "merge", "shard-1", "shard-2",
        "--output-dir", "merged", "--markdown", "pr/merged.md",
    )  # fmt: skip
    assert merged.ret == 0
    target = pytester.path / "pr" / "merged.md"
    merged.stdout.fnmatch_lines([f"Markdown: pr{os.sep}merged.md"])
    text = target.read_text(encoding="utf-8")
    assert text.startswith(MARKER + "\n## Plugin evals: passed\n")
    page = rendered(text)
    assert {row[0].replace(ZWSP, "") for row in page.rows[1:]} == {"greets", HOSTILE[:39] + "…"}
    (link,) = page.named("a")
    assert link["href"] == "../merged/report.html"
    bad = pytester.run(
        sys.executable, "-m", "pytest_plugin_evals", "merge", "shard-1", "--markdown", "x.md",
        "--report-url", "file:///etc/passwd",
    )  # fmt: skip
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "must be an http:// or https:// address (got 'file:///etc/passwd')" in bad.stderr.str()
