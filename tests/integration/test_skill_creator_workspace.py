"""``--eval-skill-creator-workspace``: a session of a skill-creator suite (its ``evals.json`` and
``trigger_eval.json``) writes skill-creator's workspace layout, and skill-creator's own scripts
(``tests/fixtures/skill_creator``, verbatim) read it: ``aggregate_benchmark.py``, the review
viewer's static page and ``improve_description.py``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text

SKILL_CREATOR = Path(__file__).resolve().parents[1] / "fixtures" / "skill_creator"

SKILL_MD = """---
name: pdf
description: Fill PDF forms. Use when the user has a PDF form to fill.
---
Fill the form. End with FORM-FILLED.
"""

SUITE = {
    "skill_name": "pdf",
    "evals": [
        {
            "id": 4,
            "prompt": "Fill the PDF form with my name, Ada",
            "expectations": ["The answer says the form was filled"],
        },
        {"id": 9, "prompt": "What is a PDF form?", "expectations": []},
    ],
}

TRIGGERS = [
    {"query": "Please fill my tax form", "should_trigger": True},
    {"query": "Write a haiku about spring", "should_trigger": False},
]

#: A ``py:`` agent (called in the session's process: no interpreter started per run): the
#: with arm fills the form (its answer and two files), the without arm cannot; the trigger
#: query about a form calls the skill.
AGENT = """\
from pathlib import Path

from pytest_plugin_evals.model import ToolCall, Transcript


def answer(request):
    if "Fill the PDF form" in request.prompt:
        if request.arm != "with":
            return "I cannot fill forms."
        Path("filled.txt").write_text("name=Ada\\n")
        Path("notes").mkdir(exist_ok=True)
        Path("notes/steps.md").write_text("1. read\\n2. fill\\n")
        return "FORM-FILLED for Ada"
    if "What is a PDF form" in request.prompt:
        return "A PDF with fields."
    if "tax form" in request.prompt:
        return Transcript(final_message="Filled.", tool_calls=[ToolCall("Skill", {"skill": "pdf"})])
    return "Blossoms fall."
"""


def make_skill(pytester: pytest.Pytester) -> None:
    pytester.makefile(".md", SKILL=SKILL_MD)
    pytester.makepyfile(pdf_agent=AGENT)
    pytester.makeini("[pytest]\npythonpath = .\n")
    pytester.makefile(".json", **{"evals/evals": json.dumps(SUITE)})
    pytester.makefile(".json", **{"evals/trigger_eval": json.dumps(TRIGGERS)})


@pytest.fixture(scope="module", autouse=True)
def _sdk_imported() -> None:
    """Import the judge's SDK once for the module, before any session: the judge imports it
    only when chosen, inside the in-process session, which drops the modules first imported in
    it, so each session would import it again (the OpenAI SDK: its lightest)."""
    import openai  # noqa: F401


@pytest.fixture
def judge(scripted_model: ScriptedModel, monkeypatch: pytest.MonkeyPatch) -> ScriptedModel:
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_model.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    scripted_model.add(
        Rule(when_prompt="FORM-FILLED for Ada", reply=text("PASS")),
        Rule(reply=text("FAIL: no form was filled")),
    )
    return scripted_model


def session(pytester: pytest.Pytester, *args: str) -> Path:
    """One session writing the workspace ``ws``; the iteration folder it made."""
    result = pytester.runpytest(
        "evals",
        "--eval-agent", "py:pdf_agent:answer",
        "--eval-judge", "openai", "--eval-judge-model", "judge",
        "--eval-runs", "2",
        "--eval-skill-creator-workspace", "ws",
        *args,
    )  # fmt: skip
    line = next(x for x in result.outlines if "ws" in x and "iteration-" in x)
    return Path(line.split(": ", 1)[1].strip())


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def scripts(*args: str) -> subprocess.CompletedProcess[str]:
    """Run one of skill-creator's modules from its folder (``python -m scripts.x``)."""
    return subprocess.run(
        [sys.executable, *args], cwd=SKILL_CREATOR, capture_output=True, text=True, timeout=120
    )


IMPROVE = """
import json, sys
from pathlib import Path
import scripts.improve_description as improve
seen = []
improve._call_claude = lambda prompt, model, timeout=300: (
    seen.append(prompt) or "<new_description>Fill any PDF form.</new_description>")
results = json.loads(Path(sys.argv[1]).read_text())
new = improve.improve_description("pdf", "body", results["description"], results, [], "m")
print(json.dumps({"new": new, "prompt": seen[0]}))
"""


@pytest.mark.workers
def test_a_session_writes_skill_creators_layout_and_its_scripts_read_it(
    pytester: pytest.Pytester,
    plugin_args: list[str],
    judge: ScriptedModel,
    tmp_path: Path,
) -> None:
    """The workspace holds skill-creator's folders and files, and its own scripts read them:
    aggregate_benchmark.py, the review viewer and improve_description.py."""
    make_skill(pytester)
    iteration = session(pytester, *plugin_args)
    assert iteration == pytester.path / "ws" / "iteration-1"
    # The eval IDs of the suite, both arms as skill-creator names them, two runs each.
    runs = sorted(p.relative_to(iteration).as_posix() for p in iteration.glob("eval-*/*/run-*"))
    assert runs == [
        f"eval-{i}/{config}/run-{k}"
        for i in (4, 9)
        for config in ("with_skill", "without_skill")
        for k in (1, 2)
    ]
    meta = load(iteration / "eval-4" / "eval_metadata.json")
    assert meta["eval_id"] == 4 and meta["prompt"] == "Fill the PDF form with my name, Ada"
    assert meta["assertions"] == ["The answer says the form was filled"]
    filled = iteration / "eval-4" / "with_skill" / "run-1"
    grading = load(filled / "grading.json")
    (expectation,) = grading["expectations"]
    assert set(expectation) == {"text", "passed", "evidence"}
    assert expectation["text"] == "The answer says the form was filled"
    assert expectation["passed"] is True
    assert grading["summary"] == {"passed": 1, "failed": 0, "total": 1, "pass_rate": 1.0}
    missed = load(iteration / "eval-4" / "without_skill" / "run-2" / "grading.json")
    assert missed["expectations"][0]["passed"] is False
    assert "no form was filled" in missed["expectations"][0]["evidence"]
    timing = load(filled / "timing.json")
    assert timing["total_duration_seconds"] >= 0 and "duration_ms" in timing
    outputs = sorted(p.name for p in (filled / "outputs").iterdir())
    assert outputs == ["answer.md", "filled.txt", "metrics.json", "notes__steps.md"]
    assert (filled / "outputs" / "answer.md").read_text() == "FORM-FILLED for Ada"
    bench = load(iteration / "benchmark.json")
    assert set(bench) == {"metadata", "runs", "run_summary", "notes"}
    assert bench["metadata"]["evals_run"] == [4, 9]
    assert list(bench["run_summary"]) == ["with_skill", "without_skill", "delta"]
    # eval-4: 1.0 against 0.0; eval-9 (no expectation, so nothing fails): 1.0 in both arms
    assert bench["run_summary"]["delta"]["pass_rate"] == "+0.50"
    assert {r["configuration"] for r in bench["runs"]} == {"with_skill", "without_skill"}
    # The trigger queries: run_eval.py's results for the skill, not evals.
    triggers = load(iteration / "triggers" / "pdf.json")
    assert triggers["skill_name"] == "pdf"
    assert triggers["description"].startswith("Fill PDF forms.")
    assert [(r["query"], r["triggers"], r["runs"], r["pass"]) for r in triggers["results"]] == [
        ("Please fill my tax form", 2, 2, True),
        ("Write a haiku about spring", 0, 2, True),
    ]
    assert triggers["summary"] == {"total": 2, "passed": 2, "failed": 0}
    ours = load(iteration / "benchmark.json")
    # aggregate_benchmark.py: every run's grading.json and timing.json read, and the same
    # pass rates per configuration as our benchmark.json.
    out = tmp_path / "aggregated.json"
    done = scripts("-m", "scripts.aggregate_benchmark", str(iteration), "-o", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Warning" not in done.stdout, done.stdout
    theirs = load(out)
    assert len(theirs["runs"]) == len(ours["runs"]) == 8
    for config in ("with_skill", "without_skill"):
        mine, read = ours["run_summary"][config], theirs["run_summary"][config]
        assert read["pass_rate"] == mine["pass_rate"]
        assert read["time_seconds"] == mine["time_seconds"]
    assert theirs["run_summary"]["delta"]["pass_rate"] == ours["run_summary"]["delta"]["pass_rate"]
    # The review viewer, written as a static page: every run, its prompt and its grades.
    page = tmp_path / "review.html"
    viewer = SKILL_CREATOR / "eval-viewer" / "generate_review.py"
    args = [str(iteration), "--benchmark", str(iteration / "benchmark.json"), "--static"]
    done = scripts(str(viewer), *args, str(page), "--skill-name", "pdf")
    assert done.returncode == 0, done.stdout + done.stderr
    html = page.read_text(encoding="utf-8")
    embedded = json.loads(html.split("const EMBEDDED_DATA = ", 1)[1].split(";\n", 1)[0])
    assert len(embedded["runs"]) == 8
    assert "(No prompt found)" not in {r["prompt"] for r in embedded["runs"]}
    filled = next(r for r in embedded["runs"] if r["id"] == "eval-4-with_skill-run-1")
    assert {o["name"] for o in filled["outputs"]} == {"answer.md", "filled.txt", "notes__steps.md"}
    assert filled["grading"]["expectations"][0]["passed"] is True
    assert embedded["benchmark"]["run_summary"] == ours["run_summary"]
    # improve_description.py takes the skill's trigger results as run_eval.py's.
    done = scripts("-c", IMPROVE, str(iteration / "triggers" / "pdf.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    improved = json.loads(done.stdout)
    assert improved["new"] == "Fill any PDF form."
    assert "Fill PDF forms. Use when the user has a PDF form to fill." in improved["prompt"]
    assert "Current scores (Train: 2/2)" in improved["prompt"]
