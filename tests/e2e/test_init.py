"""``python -m pytest_plugin_evals init`` end to end: the real CLI as a subprocess, the real
``claude`` binary as the judge that drafts and as the agent of the pilot, the scripted model
serving both; then ``pytest evals/`` on what it wrote."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Reply, Rule, ScriptedModel, error, text, tool_use

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "release-helper"
ASKED = "Draft eval prompts for the skill"

#: A draft of each kind (what ``init`` does with a draft does not depend on how many there are:
#: each pilot run is two agent runs and two judge runs of ``claude``).
DRAFTS = {
    "should_trigger": [
        {
            "name": "two-bug-fixes",
            "prompt": "We fixed two bugs since v1.4.0 and nothing else. Which version next?",
            "expected": "Names 1.4.1 as the next version: a patch release.",
        },
    ],
    "should_not_trigger": [
        {
            "name": "ship-it",
            "prompt": "Tag and ship version 3.0.0 of the project now.",
            "expected": "Ships 3.0.0 without working out a version.",
        },
    ],
}
CASES = ["next-version-two-bug-fixes", "next-version-ship-it"]


def fire() -> Reply:
    return tool_use("Skill", {"skill": "release-helper:next-version"})


@pytest.fixture
def plugin(pytester: pytest.Pytester) -> Path:
    """The example plugin without its suites: the skill, the command, the manifest."""
    for name in (".claude-plugin", "skills", "commands"):
        shutil.copytree(EXAMPLE / name, pytester.path / name)
    return pytester.path


def init(
    root: Path, model: ScriptedModel, claude_bin: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """``python -m pytest_plugin_evals init`` in ``root``, no terminal, as a user runs it."""
    env = {**os.environ, **model.env()}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_plugin_evals",
            "init",
            "--eval-claude-bin",
            claude_bin,
            *args,
        ],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )


def drafted_requests(model: ScriptedModel) -> list[dict[str, Any]]:
    return [r for r in model.message_requests if ASKED in (r.get("prompt") or "")]


def test_init_drafts_writes_pilots_and_the_suite_then_runs_and_init_again_keeps_it(
    pytester: pytest.Pytester,
    plugin: Path,
    scripted_model: ScriptedModel,
    claude_bin: str,
    run_evals: Any,
) -> None:
    """``init`` drafts, writes, pilots; the suite it wrote loads; ``init --no-pilot`` again
    (:func:`init_again_keeps_what_is_there`) leaves what it wrote, edited, as it is."""
    scripted_model.add(
        Rule(when_prompt=ASKED, reply=text("```json\n" + json.dumps(DRAFTS) + "\n```")),
        Rule(when_tool_result="Launching skill", reply=text("The next version is 1.4.1.")),
        Rule(when_tool_result="Unknown skill", reply=text("I have no such skill.")),
        Rule(when_prompt="Which version next", reply=fire()),
        # A near miss the skill takes all the same: its skill-fired grader fails the with arm.
        Rule(when_prompt="ship version 3.0.0", reply=fire()),
        Rule(when_prompt="Names 1.4.1", reply=text("PASS")),
        Rule(reply=text("PASS")),
    )
    done = init(plugin, scripted_model, claude_bin)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    out = done.stdout.splitlines()
    assert out[:3] == [
        "init: read release-helper: 1 skill (next-version), 1 command (ship), no agents, "
        "no MCP servers",
        "init: drafting with the claude judge",
        "init: skill next-version: wrote 2 case(s)",
    ]
    assert out[3:6] == [
        *(f"  + evals/{name}/" for name in CASES),
        "  + skills/next-version/evals/trigger_eval.json",
    ]
    assert out[6].startswith("init: the judge's drafts cost $0.0")
    assert float(out[6].rsplit("$", 1)[1]) > 0
    out.pop(6)
    assert out[6] == "init: piloting 2 case(s), one run each"
    pilot = sorted(out[7:9])
    assert pilot[0].startswith("  ✓ next-version-two-bug-fixes (with 1.00, without ")
    assert pilot[1].startswith("  ✗ next-version-ship-it (with 0.50, without ")
    assert out[9].startswith("init: pilot: 1 of 2 case(s) passed on one run; its report: evals/")
    assert out[9].endswith("/report.html")
    assert (plugin / out[9].rsplit(": ", 1)[1]).is_file()
    assert out[10:] == [
        "Next: pytest evals/",
        "  and for trigger accuracy: pytest skills/next-version/evals/",
    ]
    # The judge was told the plugin's other parts, and asked once for the one skill.
    (asked,) = drafted_requests(scripted_model)
    assert "command /ship: Ship a release of the project." in asked["prompt"]
    assert "Use when someone asks which version to release next." in asked["prompt"]
    # What was written: a case per draft, the queries as skill-creator's trigger file.
    case = plugin / "evals" / "next-version-ship-it"
    assert sorted(p.name for p in case.rglob("*") if p.is_file()) == [
        "outcome.md", "prompt.md", "skill-fired.md",
    ]  # fmt: skip
    assert (
        case.joinpath("prompt.md")
        .read_text()
        .endswith("---\n\nTag and ship version 3.0.0 of the project now.\n")
    )
    assert "max: 0\narm: both\n" in case.joinpath("graders", "skill-fired.md").read_text()
    trigger = json.loads((plugin / "skills/next-version/evals/trigger_eval.json").read_text())
    assert trigger == [
        {"query": d["prompt"], "should_trigger": kind == "should_trigger"}
        for kind in ("should_trigger", "should_not_trigger")
        for d in DRAFTS[kind]
    ]
    # The pilot above ran the written suite through pytest, in two arms (its lines). The
    # trigger file loads as trigger cases of the skill; what they make of real runs (the
    # confusion matrix) is test_trigger_accuracy.py's.
    result, _ = run_evals(
        "--eval-runs", "1", "skills/next-version/evals", "-k", "trigger", "--collect-only", "-q"
    )
    collected = [line for line in result.outlines if "::" in line]
    trigger_file = "skills/next-version/evals/trigger_eval.json::trigger-next-version-0"
    assert len(collected) == 2, result.outlines
    assert all(line.startswith(trigger_file) for line in collected), collected
    pilot_folder = Path(out[9].rsplit(": ", 1)[1]).relative_to("evals").parts[0]
    init_again_keeps_what_is_there(plugin, scripted_model, claude_bin, pilot_folder)


def init_again_keeps_what_is_there(
    plugin: Path, model: ScriptedModel, claude_bin: str, pilot_folder: str
) -> None:
    """``init --no-pilot`` where ``init`` wrote its cases and trigger file (one edited, the
    other emptied): it writes none, leaves both as they are, pilots nothing, and leaves no
    half-written folder beside the cases (nor beside the first pilot's ``pilot_folder``)."""
    edited = plugin / "evals" / "next-version-ship-it" / "prompt.md"
    edited.write_text("my own prompt\n")
    trigger = plugin / "skills/next-version/evals/trigger_eval.json"
    trigger.write_text("[]\n")
    again = init(plugin, model, claude_bin, "--no-pilot")
    assert again.returncode == 0, again.stderr
    assert "piloting" not in again.stdout
    out = again.stdout.splitlines()
    assert out[2:6] == [
        "init: skill next-version: wrote 0 case(s)",
        *(f"  = evals/{name}/ is already there: left as it is" for name in CASES),
        "  = skills/next-version/evals/trigger_eval.json is already there: left as it is",
    ]
    assert out[-2] == "Next: pytest evals/"
    assert edited.read_text() == "my own prompt\n"
    assert trigger.read_text() == "[]\n"
    left = sorted(p.name for p in (plugin / "evals").iterdir() if p.name != pilot_folder)
    assert left == sorted(CASES)


HOSTILE = {
    **DRAFTS,
    "should_not_trigger": [{"name": "../../escaped", "prompt": "hi", "expected": "hello"}],
}


# Each kind of unusable draft is tested on the parser (tests/unit/test_init_drafts.py); here, on
# a real judge, one skill's draft a hostile reply and the other's a judge that fails: one line
# each, in one ``init``.
def test_a_draft_that_cannot_be_used_is_one_line_and_writes_nothing(
    plugin: Path, scripted_model: ScriptedModel, claude_bin: str
) -> None:
    (plugin / "skills" / "notes").mkdir()
    (plugin / "skills" / "notes" / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes.\n---\nWrite them.\n"
    )
    scripted_model.add(
        Rule(when_prompt="the skill 'next-version'", reply=text(json.dumps(HOSTILE))),
        Rule(when_prompt="the skill 'release-notes'", reply=error(500, message="judge down")),
    )
    done = init(plugin, scripted_model, claude_bin)
    assert done.returncode == 1
    said = {
        "next-version": 'should_not_trigger[0].name "../../escaped" won\'t work — lowercase '
        "letters, digits and '-' only, at most 48 characters",
        "release-notes": "the judge failed: API Error: 500",
    }
    lines = done.stderr.splitlines()
    assert len(lines) == 2, done.stderr
    for skill, why in said.items():
        (line,) = [x for x in lines if x.startswith(f"init: skill {skill}: ")]
        assert why in line, line
        assert line.endswith("; nothing written for it"), line
    assert not (plugin / "evals").exists()
    assert not (plugin / "skills/next-version/evals").exists()
    assert not (plugin / "skills/notes/evals").exists()
    assert not (plugin.parent / "escaped").exists()
    assert "piloting" not in done.stdout
    assert done.stdout.splitlines()[-1] == "Next: pytest evals/"


def test_each_skill_is_drafted_on_its_own_with_the_judge_of_the_pytest_ini(
    plugin: Path, scripted_model: ScriptedModel, claude_bin: str
) -> None:
    # A second skill, whose draft comes back unusable; a pytest.ini that names the judge (the
    # anthropic SDK) and a threshold the pilot's session refuses.
    (plugin / "skills" / "notes").mkdir()
    (plugin / "skills" / "notes" / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes.\n---\nWrite them.\n"
    )
    (plugin / "pytest.ini").write_text("[pytest]\neval_judge = anthropic\neval_threshold = 7\n")
    scripted_model.add(
        Rule(when_prompt="the skill 'release-notes'", reply=text('{"should_trigger": []}')),
        Rule(when_prompt="the skill 'next-version'", reply=text(json.dumps(DRAFTS))),
    )
    done = init(plugin, scripted_model, claude_bin)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert (
        done.stdout.splitlines()[1] == "init: drafting with the anthropic judge (from pytest.ini)"
    )
    assert "init: skill next-version: wrote 2 case(s)" in done.stdout
    err = done.stderr.splitlines()
    assert err[0] == (
        "init: skill release-notes: the judge's draft is not usable: should_trigger must be a "
        "non-empty list (got an empty list); nothing written for it"
    )
    assert err[1].startswith("init: pilot: did not run: pytest exited with status 4 and wrote no ")
    assert "eval_threshold" in err[1]
    assert len(err) == 2
    # The judge was the SDK's: no claude process answered, each skill asked once.
    asked = drafted_requests(scripted_model)
    assert len(asked) == 2
    agents = {str(r["headers"].get("user-agent", "")).split("/")[0] for r in asked}
    assert agents == {"Anthropic"}, agents
    assert (plugin / "skills/next-version/evals/trigger_eval.json").is_file()
    assert not (plugin / "skills/notes/evals").exists()
    assert sorted(p.name for p in (plugin / "evals").iterdir()) == sorted(CASES)
