"""Hostile suite files — YAML alias bombs, JSON nested 100,000 deep, a file of 6 MiB — are each
one load error naming the file and line; the other cases still run, and collection stays fast."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import pytest

from tests.helpers import write_tree

GRADER = "---\ntype: regex\npattern: hi\n---\n"
PROMPT = "---\nruns: 1\n---\nSay hi\n"


def bomb(levels: int, first: int = 0, prefix: str = "x") -> str:
    """A "billion laughs": each line an anchor of 9 aliases of the line before (9**levels
    nodes once expanded), from key ``<prefix>0``."""
    lines = [f"{prefix}0: &{prefix}0 [" + ", ".join(['"lol"'] * 9) + "]"]
    for n in range(1, levels):
        aliases = ", ".join([f"*{prefix}{n - 1}"] * 9)
        lines.append(f"{prefix}{n}: &{prefix}{n} [{aliases}]")
    return "\n".join(lines) + "\n"


#: 9**6 (half a million) nodes once expanded: the earlier loaders took it (in seconds), and
#: the case ran as if nothing were wrong; the bounded loader refuses it at once. Its aliases
#: pass 10,000 nodes on its fifth line.
SMALL_BOMB = bomb(6)
DEEP_JSON = "[" * 100_000 + "]" * 100_000

BAD_FILES: dict[str, str] = {
    "evals/bomb-case/prompt.md": PROMPT,
    "evals/bomb-case/graders/hi.md": GRADER,
    "evals/bomb-case/case.yaml": SMALL_BOMB,
    "evals/bomb-grader/prompt.md": PROMPT,
    "evals/bomb-grader/graders/hi.md": "---\ntype: regex\npattern: hi\n" + SMALL_BOMB + "---\n",
    "evals/deep/evals.json": (
        '{"cases": [\n  {"name": "deep", "prompt": "Say hi",\n   "x": ' + DEEP_JSON + "}\n]}\n"
    ),
    "evals/sy/suite.yaml": (
        "cases:\n  - name: sy-bomb\n    input: Say hi\n    expected_contains: [hi]\n" + SMALL_BOMB
    ),
    "evals/big/evals.json": json.dumps(
        {"cases": [{"name": "big", "prompt": "Say hi", "x": "a" * (6 * 2**20)}]}
    ),
}

GOOD_FILES = {"evals/good/prompt.md": PROMPT, "evals/good/graders/hi.md": GRADER}

#: The one line each bad file gives (fnmatch patterns).
EXPECTED: dict[str, str] = {
    "evals/bomb-case/case.yaml": (
        "evals/bomb-case/case.yaml:5: invalid YAML: aliases expand to more than 10,000 nodes"
    ),
    "evals/bomb-grader/graders/hi.md": (
        "evals/bomb-grader/graders/hi.md:8: invalid YAML frontmatter: aliases expand to more "
        "than 10,000 nodes"
    ),
    "evals/deep/evals.json": "evals/deep/evals.json:3: invalid JSON: nested more than 100 deep",
    "evals/sy/suite.yaml": (
        "evals/sy/suite.yaml:9: invalid YAML: aliases expand to more than 10,000 nodes"
    ),
    "evals/big/evals.json": (
        "evals/big/evals.json: the file is larger than 5 MiB, the most a suite's file may hold"
    ),
}


def test_each_hostile_file_is_one_line_and_the_rest_runs(
    pytester: pytest.Pytester, scripted_agent: Any, read_doc: Any
) -> None:
    write_tree(pytester.path, {**BAD_FILES, **GOOD_FILES})
    agent = scripted_agent([{"match": "Say hi", "reply": "hi"}])
    result = pytester.runpytest(
        "evals", "-p", "no:cacheprovider", "--eval-agent", agent, "--eval-json", "o.json"
    )
    result.assert_outcomes(passed=1, errors=len(EXPECTED))
    output = result.stdout.str()
    assert "Traceback" not in output and "Traceback" not in result.stderr.str()
    assert "RecursionError" not in output
    for rel, pattern in EXPECTED.items():
        result.stdout.fnmatch_lines([pattern])
        assert sum(line.startswith(f"{rel}:") for line in result.stdout.lines) == 1, rel
    doc = read_doc("o.json")
    assert [c["name"] for c in doc["cases"]] == ["good"]
    assert len(doc["loadErrors"]) == len(EXPECTED)


def test_a_billion_laughs_is_refused_at_once(pytester: pytest.Pytester) -> None:
    """The full bomb (9**9 nodes, 342 bytes) in a case.yaml and a grader's front matter:
    collection used to take gigabytes and minutes. In a process of its own, so that a loader
    that expands it again fails here by the timeout instead of stalling this session."""
    write_tree(
        pytester.path,
        {
            **GOOD_FILES,
            "evals/laughs/prompt.md": PROMPT,
            "evals/laughs/graders/hi.md": GRADER,
            "evals/laughs/case.yaml": bomb(9),
            "evals/laughs-grader/prompt.md": PROMPT,
            "evals/laughs-grader/graders/hi.md": "---\ntype: regex\n" + bomb(9) + "---\n",
        },
    )
    started = time.monotonic()
    # What the session says of them; the good case runs beside them (``true`` says nothing:
    # its grader fails it).
    result = pytester.run(
        sys.executable, "-m", "pytest", "evals", "-p", "no:cacheprovider",
        "--eval-agent", "cmd:true", timeout=60,
    )  # fmt: skip
    assert time.monotonic() - started < 30, "the session stalled"
    refused = "invalid YAML{} aliases expand to more than 10,000 nodes"
    result.stdout.fnmatch_lines(
        [
            "evals/laughs/case.yaml:5: " + refused.format(":"),
            "evals/laughs-grader/graders/hi.md:7: " + refused.format(" frontmatter:"),
        ],
        consecutive=False,
    )
    result.stdout.fnmatch_lines(["collected 3 items", "*1 failed, 2 errors*"], consecutive=False)
