"""What an agent produced is hostile input: it never loses a run, never breaks a file the session
writes, never lowers the cost ceiling, never grows the controller without bound, and never
carries the operator's credentials into anything the session writes."""

from __future__ import annotations

import json
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_tree

AGENT = Path(__file__).parents[1] / "agents" / "scripted_agent.py"


def strict_json(path: Path) -> Any:
    """Read ``path`` as JSON any reader accepts: no NaN or infinities, valid UTF-8."""

    def refuse(name: str) -> None:
        raise AssertionError(f"{path.name} holds {name}, which is not JSON")

    return json.loads(path.read_bytes().decode("utf-8"), parse_constant=refuse)


def case(name: str, prompt: str, pattern: str = "done", runs: int = 1) -> dict[str, str]:
    return {
        f"evals/{name}/prompt.md": f"---\nruns: {runs}\n---\n{prompt}\n",
        f"evals/{name}/graders/done.md": f"---\ntype: regex\npattern: '{pattern}'\n---\n",
    }


def rules_file(pytester: pytest.Pytester, text: str) -> str:
    """The ``--eval-agent`` of the scripted agent, its rules given as raw JSON text (so they
    can hold what ``json.dumps`` would not write: NaN, a lone surrogate escape)."""
    path = pytester.path / "agent-rules.json"
    path.write_text(text, encoding="utf-8")
    return "cmd:" + shlex.join([sys.executable, str(AGENT), str(path)])


def test_hostile_traces_and_output_are_recorded_and_graded(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    write_tree(pytester.path, case("hostile", "Be hostile."))
    deep = "[" * 100_000 + "]" * 100_000
    huge = "9" * 5000
    agent = rules_file(
        pytester,
        json.dumps(
            [
                {
                    "match": "hostile",
                    "reply": "done \x1b[31mred\x1b[0m \x1b]0;title\x07 and a NUL \x00 here",
                    "reply_latin1": " invalid utf-8: \xff\xfe",
                    "tool_calls": [
                        {"name": "Read", "input": {"path": "x"}, "output": "PLACEHOLDER"}
                    ],
                    "raw_events": [
                        '{"type": "tool_call", "name": "Deep", "input": {"v": ' + deep + "}}",
                        '{"type": "tool_call", "name": "Huge", "input": {"n": ' + huge + "}}",
                        '{"type": "tool_call", "name": "Nested", "input": '
                        + "".join('{"a": ' for _ in range(200))
                        + "1"
                        + "}" * 200
                        + "}",
                        '{"type": "usage", "input_tokens": 99999999999999999999}',
                    ],
                }
            ]
        ).replace("PLACEHOLDER", "lone \\ud800 half"),  # the JSON escape of a lone surrogate
    )
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-json", "out.json",
        "--junitxml", "junit.xml", "--eval-output-dir", "kept",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    doc = strict_json(pytester.path / "out.json")
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["passed"] is True and run["infraError"] is None
    # Read, and Nested with its deep end cut; Deep and Huge could not be read at all.
    assert run["toolCalls"] == 2
    assert "\x00" in run["answer"] and "\ufffd" in run["answer"]  # kept as text, escaped
    meta = strict_json(next((pytester.path / "kept").rglob("meta.json")))
    calls = {c["name"]: c for c in meta["toolCalls"]}
    assert calls["Read"]["output"] == "lone \ufffd half"
    assert "nested too deep" in json.dumps(calls["Nested"]["input"])
    assert meta["inputTokens"] is None  # a count of 10**20 tokens is not believed
    strict_json(pytester.path / "kept" / "aggregate-result.json")
    ET.parse(pytester.path / "junit.xml")  # well-formed XML, whatever the answer held
    assert (pytester.path / "kept" / "report.html").is_file()
    assert "\x1b" not in result.stdout.str()


INVALID_COSTS = {"negative": "-1000", "nan": "NaN", "infinite": "Infinity", "huge": "9" * 400}


def test_a_cost_that_is_not_a_price_is_refused(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    files: dict[str, str] = {}
    rules = []
    for name, cost in INVALID_COSTS.items():
        files.update(case(name, f"Report {name}."))
        rules.append(f'{{"match": "{name}", "reply": "done", "usage": {{"cost_usd": {cost}}}}}')
    files.update(case("honest", "Report honest."))
    rules.append('{"match": "honest", "reply": "done", "usage": {"cost_usd": 0.25}}')
    write_tree(pytester.path, files)
    agent = rules_file(pytester, "[" + ",".join(rules) + "]")
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-json", "out.json",
        "--eval-output-dir", "kept",
    )  # fmt: skip
    result.assert_outcomes(passed=1, errors=4)
    result.stdout.fnmatch_lines(["*agent reported an invalid cost (-1000.0 USD)*"])
    doc = strict_json(pytester.path / "out.json")
    assert doc["errors"] == {"invalid_cost": 4}
    assert doc["partial"] is True
    runs = {c["name"]: c["arms"]["with"][0] for c in doc["cases"]}
    for name in INVALID_COSTS:
        assert runs[name]["infraError"] == "invalid_cost"
        assert runs[name]["costUsd"] == 0
        assert runs[name]["error"].startswith("agent reported an invalid cost")
    assert runs["honest"]["costUsd"] == 0.25
    assert doc["costUsd"] == 0.25
    for meta in (pytester.path / "kept").rglob("meta.json"):
        strict_json(meta)


def test_a_negative_cost_does_not_lift_the_cost_ceiling(pytester: pytest.Pytester) -> None:
    files = {**case("a-refund", "Refund."), **case("b-spend", "Spend.", runs=4)}
    write_tree(pytester.path, files)
    agent = rules_file(
        pytester,
        '[{"match": "Refund", "reply": "done", "usage": {"cost_usd": -1000}},'
        ' {"match": "Spend", "reply": "done", "usage": {"cost_usd": 0.4}}]',
    )
    result = pytester.runpytest(
        "evals", "-n0", "-p", "no:cacheprovider", "--eval-agent", agent,
        "--eval-max-cost-usd", "1", "--eval-json", "out.json",
    )  # fmt: skip
    # 0.4 + 0.4 + 0.4 reaches the ceiling: the fourth run is not started.
    result.assert_outcomes(passed=3, errors=1, skipped=1)
    result.stdout.fnmatch_lines(["*cost ceiling $1 reached*"])


MEASURE_PEAK = """
import pathlib

def pytest_unconfigure(config):
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            pathlib.Path("peak-kb").write_text(line.split()[1])
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_flood_of_output_is_cut_and_the_controller_stays_small(
    pytester: pytest.Pytester,
) -> None:
    write_tree(pytester.path, {**case("flood", "Flood."), "conftest.py": MEASURE_PEAK})
    peaks = {}
    for flood_mb in (0, 200):
        agent = rules_file(
            pytester, json.dumps([{"match": "Flood", "reply": "done", "flood_mb": flood_mb}])
        )
        result = pytester.runpytest_subprocess(
            "evals", "-n0", "-p", "no:cacheprovider", "--eval-agent", agent,
            "--eval-json", f"out-{flood_mb}.json", "--eval-output-dir", f"kept-{flood_mb}",
        )  # fmt: skip
        result.assert_outcomes(passed=1)
        peaks[flood_mb] = int((pytester.path / "peak-kb").read_text())
    extra_mb = (peaks[200] - peaks[0]) / 1024
    assert extra_mb < 50, f"a 200 MB answer cost {extra_mb:.0f} MB of controller memory"
    doc = strict_json(pytester.path / "out-200.json")
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["passed"] is True  # the end of the answer was kept: "done" is there
    assert any("output of 200.0 MB kept within 10.0 MB" in note for note in run["notes"])
    kept = pytester.path / "kept-200"
    sizes = {p.name: p.stat().st_size for p in kept.rglob("*") if p.is_file()}
    assert max(sizes.values()) < 12 * 1024 * 1024, sizes
    assert "kept within 10.0 MB" in (kept / "report.html").read_text(encoding="utf-8")


SECRET = "sk-ant-test-0123456789abcdefSECRET"


def test_credentials_an_agent_prints_are_written_nowhere(
    pytester: pytest.Pytester, plugin_args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    write_tree(pytester.path, {**case("leak", "Leak.", pattern="leak"), **case("fail", "Fail.")})
    agent = rules_file(
        pytester,
        json.dumps(
            [
                {
                    "match": "Leak",
                    "reply": "leak:",
                    "env": ["ANTHROPIC_API_KEY"],
                    "stderr": f"key {SECRET}",
                    "files": {"notes.txt": f"the key is {SECRET}\n"},
                    "tool_calls": [
                        {"name": "Bash", "input": {"command": f"echo {SECRET}"}, "output": SECRET}
                    ],
                },
                {"match": "Fail", "reply": f"no {SECRET}", "stderr": SECRET, "exit": 3},
            ]
        ),
    )
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-json", "out.json",
        "--junitxml", "junit.xml", "--eval-output-dir", "kept", "-rA",
        "--html", "pytest-html.html", "--self-contained-html",
        # A cmd: agent gets no credential it does not ask for: this one is given the key.
        "--eval-env-pass", "ANTHROPIC_API_KEY",
    )  # fmt: skip
    result.assert_outcomes(passed=1, failed=1)
    assert SECRET not in result.stdout.str()
    written = [pytester.path / name for name in ("out.json", "junit.xml", "pytest-html.html")]
    written += [p for p in (pytester.path / "kept").rglob("*") if p.is_file()]
    assert any(p.name == "notes.txt" for p in written)
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path
    for name in ("junit.xml", "pytest-html.html"):  # the failure is there, redacted
        assert b"[redacted ANTHROPIC_API_KEY]" in (pytester.path / name).read_bytes(), name
    doc = strict_json(pytester.path / "out.json")
    runs = {c["name"]: c["arms"]["with"][0] for c in doc["cases"]}
    assert "ANTHROPIC_API_KEY=[redacted ANTHROPIC_API_KEY]" in runs["leak"]["answer"]
    assert "[redacted ANTHROPIC_API_KEY]" in runs["fail"]["error"]
    kept_file = next(p for p in written if p.name == "notes.txt")
    assert kept_file.read_text() == "the key is [redacted ANTHROPIC_API_KEY]\n"
