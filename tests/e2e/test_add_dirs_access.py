"""A case's ``add_dirs`` folder is readable where it is, inside the evals folder (as in the
reference), and in the run's copy; nothing else of the case or the evals folder is: not its
graders, its prompt, its case.yaml, another case. Neither for Read nor for a confined shell."""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from tests.helpers import write_tree

DATA = "fixture-data-5a1c"
SECRETS = ("grader-secret-77", "prompt-secret-88", "yaml-secret-99", "other-secret-66")


def make_suite(pytester: pytest.Pytester, allowed_tools: str = "[]") -> Path:
    """Case ``peek`` (case.yaml and prompt.md) with ``add_dirs: [fixtures]``, and case
    ``other`` (not selected: its files are there all the same); each private file holds one
    of :data:`SECRETS`. Returns the case folder."""
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": '{"name": "kit"}',
            "evals/peek/case.yaml": (
                'schema_version: "1.1"\nname: peek\n# yaml-secret-99\n'
                "context:\n  add_dirs: [fixtures]\n"
            ),
            "evals/peek/prompt.md": (
                f"---\nruns: 1\nallowed_tools: {allowed_tools}\n---\n"
                "Peek at the fixtures. <!-- prompt-secret-88 -->\n"
            ),
            "evals/peek/graders/x.md": "---\ntype: regex\npattern: done\n---\ngrader-secret-77\n",
            "evals/peek/fixtures/data.txt": f"{DATA}\n",
            "evals/other/prompt.md": "---\nruns: 1\n---\nSay hello. other-secret-66\n",
            "evals/other/graders/hello.md": "---\ntype: regex\npattern: hello\n---\n",
        },
    )
    return pytester.path / "evals" / "peek"


def tool_results(doc: dict[str, Any], case: str) -> list[tuple[bool, str]]:
    """Each tool result of the case's one run, in order: (is_error, its text)."""
    (entry,) = [c for c in doc["cases"] if c["name"] == case]
    (run,) = entry["arms"]["with"]
    results = []
    for line in Path(run["tracePath"]).read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("type") != "user":
            continue
        for block in event["message"]["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block["content"]
                shown = content if isinstance(content, str) else json.dumps(content)
                results.append((bool(block.get("is_error")), shown))
    return results


def script(model: ScriptedModel, *calls: tuple[str, dict[str, Any]]) -> None:
    """The ``peek`` model makes these calls one per turn, then says done."""
    model.add(
        *(Rule(when_prompt="Peek at", reply=tool_use(name, args), times=1) for name, args in calls),
        Rule(when_prompt="Peek at", reply=text("done")),
    )


def test_read_reaches_the_add_dir_where_it_is_and_nothing_else_of_the_evals_folder(
    pytester: pytest.Pytester, run_evals: Any, scripted_model: ScriptedModel
) -> None:
    case = make_suite(pytester)
    evals = case.parent
    script(
        scripted_model,
        ("Read", {"file_path": str(case / "fixtures" / "data.txt")}),
        # the copy, at <run>/context/fixtures (the working directory is <run>/home/cwd)
        ("Read", {"file_path": "../../context/fixtures/data.txt"}),
        ("Read", {"file_path": str(case / "graders" / "x.md")}),
        ("Read", {"file_path": str(case / "prompt.md")}),
        ("Read", {"file_path": str(case / "case.yaml")}),
        ("Read", {"file_path": str(evals / "other" / "prompt.md")}),
        ("Read", {"file_path": str(case / "fixtures" / ".." / "graders" / "x.md")}),
    )
    result, doc = run_evals("--eval-ablation", "none", "-k", "peek")
    result.assert_outcomes(passed=1)
    results = tool_results(doc, "peek")
    assert [error for error, _ in results] == [False, False, True, True, True, True, True]
    original, copy = results[0][1], results[1][1]
    assert DATA in original and DATA in copy
    refused = "\n".join(shown for _, shown in results[2:])
    assert not any(secret in refused for secret in SECRETS)
    assert (case / "fixtures" / "data.txt").read_text(encoding="utf-8") == f"{DATA}\n"


@pytest.fixture
def sandbox_backend() -> None:
    """bubblewrap and socat, as .ci/run installs them (skipped elsewhere, a failure in CI)."""
    if shutil.which("bwrap") and shutil.which("socat"):
        return
    reason = "bubblewrap and socat are not installed (apt install bubblewrap socat)"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def test_a_confined_shell_reads_the_add_dir_where_it_is_and_nothing_else(
    pytester: pytest.Pytester,
    run_evals: Any,
    scripted_model: ScriptedModel,
    sandbox_backend: None,
) -> None:
    case = make_suite(pytester, allowed_tools="[Bash]")
    evals = case.parent
    probe = "\n".join(
        [
            f"cat {case / 'fixtures' / 'data.txt'} && echo READ-ORIGINAL",
            *(
                f"cat {path} && echo READ-{n}"
                for n, path in enumerate(
                    [
                        case / "graders" / "x.md",
                        case / "prompt.md",
                        case / "case.yaml",
                        evals / "other" / "prompt.md",
                    ]
                )
            ),
            f"ls {evals} {case}",
            f"echo pwned > {case / 'fixtures' / 'data.txt'} && echo WROTE",
        ]
    )
    # The model writes a script and runs it: what the script touches is the sandbox's to stop
    # (Claude Code's own check sees only "bash probe.sh" in the working directory).
    encoded = base64.b64encode(probe.encode()).decode()
    script(
        scripted_model,
        ("Bash", {"command": f"cat {case / 'fixtures' / 'data.txt'}", "description": "read"}),
        (
            "Bash",
            {"command": f"echo {encoded} | base64 -d > p.sh && bash p.sh", "description": "p"},
        ),
    )
    result, doc = run_evals("--eval-allow-tools", "Bash", "--eval-ablation", "none", "-k", "peek")
    result.assert_outcomes(passed=1)
    (direct_error, direct), (_, output) = tool_results(doc, "peek")
    assert not direct_error and DATA in direct
    assert DATA in output and "READ-ORIGINAL" in output
    assert "READ-" not in output.replace("READ-ORIGINAL", "")
    assert not any(secret in output for secret in SECRETS)
    assert "WROTE" not in output
    assert (case / "fixtures" / "data.txt").read_text(encoding="utf-8") == f"{DATA}\n"
