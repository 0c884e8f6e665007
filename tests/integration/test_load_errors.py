"""Every kind of bad case file is one clear line naming the file and line; the rest still runs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_tree

# What crosses from the workers to the controller is tested: -n 0 and -n 2.
pytestmark = pytest.mark.workers

GRADER = "---\ntype: regex\npattern: hi\n---\n"
PROMPT = "---\nruns: 1\n---\nSay hi\n"

#: folder/file -> text; each case folder below holds exactly one problem.
BAD_FILES: dict[str, str] = {
    "evals/bad-yaml/prompt.md": "---\nruns: [1\n---\nSay hi\n",
    "evals/bad-yaml/graders/hi.md": GRADER,
    "evals/unknown-key/prompt.md": "---\nruns: 1\nretries: 2\n---\nSay hi\n",
    "evals/unknown-key/graders/hi.md": GRADER,
    "evals/unterminated/prompt.md": "---\nruns: 1\nSay hi\n",
    "evals/unterminated/graders/hi.md": GRADER,
    "evals/no-type/prompt.md": PROMPT,
    "evals/no-type/graders/g.md": "---\npattern: hi\n---\n",
    "evals/no-frontmatter/prompt.md": PROMPT,
    "evals/no-frontmatter/graders/g.md": "just say hi\n",
    "evals/bad-regex/prompt.md": PROMPT,
    "evals/bad-regex/graders/g.md": "---\ntype: regex\npattern: '([a-z'\n---\n",
    "evals/bad-env/prompt.md": "---\nruns: 1\nenv:\n  FOO: bar\n---\nSay hi\n",
    "evals/bad-env/graders/hi.md": GRADER,
    "evals/runs-zero/prompt.md": "---\nruns: 0\n---\nSay hi\n",
    "evals/runs-zero/graders/hi.md": GRADER,
    "evals/bad-case-yaml/case.yaml": 'schema_version: "1.1"\nname: [unclosed\n',
    "evals/evals.json": '{"cases": [\n  {"name": "x", "prompt": "Say hi",}\n]}\n',
    "evals/golden/mixed.yaml": (
        "cases:\n"
        "  - name: sy-good\n"
        "    input: Say hi\n"
        "    expected_contains: [hi]\n"
        "  - name: sy-bad\n"
        "    input: Say hi\n"
        "    expected_contain: [hi]\n"
    ),
    "package.json": json.dumps({"name": "x", "ai": {"evals": "oops"}}, indent=2),
    # Names pytest would print raw, a NUL no environment can carry, a weight that is no number.
    "evals/escape-name/prompt.md": '---\nruns: 1\nname: "wipe\\e[2J\\rgone"\n---\nSay hi\n',
    "evals/escape-name/graders/hi.md": GRADER,
    "evals/bidi-tag/prompt.md": '---\nruns: 1\ntags: ["txt\\u202Eexe"]\n---\nSay hi\n',
    "evals/bidi-tag/graders/hi.md": GRADER,
    "evals/nul-env/prompt.md": '---\nruns: 1\nenv:\n  EVAL_X: "a\\0b"\n---\nSay hi\n',
    "evals/nul-env/graders/hi.md": GRADER,
    "evals/inf-weight/prompt.md": PROMPT,
    "evals/inf-weight/graders/g.md": "---\ntype: regex\npattern: hi\nweight: .inf\n---\n",
}

GOOD_FILES = {"evals/good/prompt.md": PROMPT, "evals/good/graders/hi.md": GRADER}

#: The one line each bad file gives: ``path:line: message`` (fnmatch patterns).
EXPECTED: dict[str, str] = {
    "evals/bad-yaml/prompt.md": "evals/bad-yaml/prompt.md:2: invalid YAML frontmatter: *",
    "evals/unknown-key/prompt.md": (
        'evals/unknown-key/prompt.md:3: unknown frontmatter key "retries" (expected one of: *)'
    ),
    "evals/unterminated/prompt.md": (
        "evals/unterminated/prompt.md:1: unterminated frontmatter "
        '(opening "---" with no closing "---")'
    ),
    "evals/no-type/graders/g.md": (
        'evals/no-type/graders/g.md:2: frontmatter must include "type:" (regex | tool_order *)'
    ),
    "evals/no-frontmatter/graders/g.md": (
        "evals/no-frontmatter/graders/g.md:1: a grader file must start with a frontmatter *"
    ),
    "evals/bad-regex/graders/g.md": (
        'evals/bad-regex/graders/g.md:3: invalid pattern "([a-z": Invalid regular expression*'
    ),
    "evals/bad-env/prompt.md": (
        'evals/bad-env/prompt.md:4: env key "FOO" is not allowed: only EVAL_* keys *'
    ),
    "evals/runs-zero/prompt.md": (
        "evals/runs-zero/prompt.md:2: runs must be a whole number from 1 to 50 (got 0)"
    ),
    "evals/bad-case-yaml/case.yaml": "evals/bad-case-yaml/case.yaml:2: invalid YAML: *",
    "evals/evals.json": "evals/evals.json:2: invalid JSON: *",
    "evals/golden/mixed.yaml": (
        'evals/golden/mixed.yaml:7: unknown key "cases[[]1].expected_contain" — did you mean '
        "expected_contains? (expected one of: *)"
    ),
    "package.json": "package.json:4: ai.evals must be a list of evals (got a string)",
    "evals/escape-name/prompt.md": (
        'evals/escape-name/prompt.md:3: name "wipe\\u001b[[]2J\\u000dgone" holds an escape '
        "character (U+001B): a name must be printable text"
    ),
    "evals/bidi-tag/prompt.md": (
        'evals/bidi-tag/prompt.md:3: tags[[]0] "txt\\u202eexe" holds a bidirectional control '
        "(U+202E): a name must be printable text"
    ),
    "evals/nul-env/prompt.md": (
        "evals/nul-env/prompt.md:4: env.EVAL_X holds a NUL character, which no environment can "
        "carry"
    ),
    "evals/inf-weight/graders/g.md": (
        "evals/inf-weight/graders/g.md:4: weight must be a finite number above 0 (got inf)"
    ),
}


def test_every_bad_file_is_one_line_and_the_rest_runs(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any, read_doc: Any
) -> None:
    write_tree(pytester.path, {**BAD_FILES, **GOOD_FILES})
    agent = scripted_agent([{"match": "Say hi", "reply": "hi"}])
    result = pytester.runpytest(".", *plugin_args, "--eval-agent", agent, "--eval-json", "o.json")
    # The good case and the good case of the sy file run and pass, with no extra flag.
    result.assert_outcomes(passed=2, errors=len(EXPECTED))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    output = result.stdout.str()
    assert "Traceback" not in output and "Traceback" not in result.stderr.str()
    assert "Interrupted" not in output
    for raw in ("\x1b", "\r", "\u202e", "\0"):  # shown escaped, never raw
        assert raw not in output and raw not in result.stderr.str(), repr(raw)
    for rel, pattern in EXPECTED.items():
        result.stdout.fnmatch_lines([pattern])
        # One line for the file (the short summary line starts with "ERROR ").
        assert sum(line.startswith(f"{rel}:") for line in result.stdout.lines) == 1, rel
    result.stdout.fnmatch_lines([f"{len(EXPECTED)} case files could not be loaded*"])

    doc = read_doc("o.json")
    assert sorted(c["name"] for c in doc["cases"]) == ["good", "sy-good"]
    assert all(c["aggregates"]["score"] == 1.0 for c in doc["cases"])
    listed = {
        (Path(e["path"]).relative_to(pytester.path).as_posix(), e["line"])
        for e in doc["loadErrors"]
    }
    assert listed == {(rel, int(pattern.split(":")[1])) for rel, pattern in EXPECTED.items()}
    assert all(e["message"] and "\n" not in e["message"] for e in doc["loadErrors"])


def test_case_filter_keeps_load_errors_visible(
    pytester: pytest.Pytester, scripted_agent: Any
) -> None:
    write_tree(
        pytester.path,
        {**GOOD_FILES, "evals/bad-env/prompt.md": BAD_FILES["evals/bad-env/prompt.md"]},
    )
    write_tree(pytester.path, {"evals/bad-env/graders/hi.md": GRADER})
    agent = scripted_agent([{"match": "Say hi", "reply": "hi"}])
    result = pytester.runpytest(
        "evals", "-p", "no:cacheprovider", "--eval-agent", agent, "--eval-case", "good"
    )
    # As the reference: a case file that cannot be loaded still fails the session.
    result.assert_outcomes(passed=1, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_an_evals_folder_without_cases_says_so_in_one_line(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    (pytester.path / "evals" / "drafts").mkdir(parents=True)
    (pytester.path / "evals" / "README.md").write_text("notes\n", encoding="utf-8")
    result = pytester.runpytest("evals", *plugin_args)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(
        [f"no eval cases found in evals{os.sep}: a case is a folder there holding a prompt.md "
         "or a case.yaml, or a suite file (evals.json, a .yaml suite); see "
         "docs/reference/case-formats.md"]
    )  # fmt: skip
    assert "Traceback" not in result.stdout.str()


def test_a_case_folder_without_prompt_md_is_a_load_error_naming_it(
    pytester: pytest.Pytester, plugin_args: list[str], scripted_agent: Any, read_doc: Any
) -> None:
    """The reference skips such a folder without a word (observed: ``claude plugin eval`` runs
    the other cases and lists nothing); here the case cannot vanish."""
    write_tree(
        pytester.path,
        {
            **GOOD_FILES,
            "evals/forgot/graders/hi.md": GRADER,
            "evals/group/misnamed/Prompt.md": PROMPT,
            "evals/group/misnamed/graders/hi.md": GRADER,
        },
    )
    agent = scripted_agent([{"match": "Say hi", "reply": "hi"}])
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-json", "o.json"
    )
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(
        [
            "evals/forgot: a case folder without prompt.md: it holds graders/ but neither "
            "prompt.md nor case.yaml; write the prompt to test in forgot/prompt.md",
            "evals/group/misnamed: a case folder without prompt.md: it holds Prompt.md (did you "
            "mean prompt.md?) but neither prompt.md nor case.yaml; *",
        ],
        consecutive=False,
    )
    assert "Traceback" not in result.stdout.str()
    doc = read_doc("o.json")
    listed = {Path(e["path"]).relative_to(pytester.path).as_posix() for e in doc["loadErrors"]}
    assert listed == {"evals/forgot", "evals/group/misnamed"}
