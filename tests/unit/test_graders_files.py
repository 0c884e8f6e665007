"""``file_exists``: path globs over the files created during the run."""

from __future__ import annotations

import pytest

from pytest_plugin_evals.graders import grade
from pytest_plugin_evals.graders.files import glob_to_regex
from pytest_plugin_evals.model import GraderSpec, Transcript

CREATED = ["data/out.json", "notes.txt", "out/deep/x.md", "out/report.md"]


@pytest.mark.parametrize(
    ("path", "exists", "passed", "explanation"),
    [
        ("out/*.md", True, True, "out/*.md exists as expected"),
        ("nope.txt", False, True, "nope.txt absent as expected"),
        ("report.md", True, False, "report.md missing (expected present)"),
        ("data/out.json", False, False, "data/out.json exists (expected absent)"),
    ],
)
def test_explanations(path: str, exists: bool, passed: bool, explanation: str) -> None:
    spec = GraderSpec("g", "file_exists", {"path": path, "exists": exists})
    v = grade(spec, Transcript(files_created=CREATED))
    assert (v.passed, v.explanation) == (passed, explanation)


def test_exists_defaults_to_true() -> None:
    v = grade(
        GraderSpec("g", "file_exists", {"path": "notes.txt"}), Transcript(files_created=CREATED)
    )
    assert v.passed is True


@pytest.mark.parametrize(
    ("glob", "path", "hit"),
    [
        ("out/*.md", "out/report.md", True),
        ("out/*.md", "out/deep/x.md", False),
        ("out/**/*.md", "out/report.md", True),
        ("out/**/*.md", "out/deep/x.md", True),
        ("**/x.md", "x.md", True),
        ("**/x.md", "out/deep/x.md", True),
        ("out/**", "out/deep/x.md", True),
        ("report.md", "out/report.md", False),  # anchored: the whole path
        ("out/report?md", "out/report.md", True),
        ("out/report.md", "out/reportXmd", False),  # dots are literal
        ("out/[ab].md", "out/[ab].md", True),  # brackets are literal
        ("out/(x).md", "out/(x).md", True),
        ("*.txt", "notes.txt\n", False),
    ],
)
def test_glob(glob: str, path: str, hit: bool) -> None:
    assert (glob_to_regex(glob).fullmatch(path) is not None) is hit


def test_bad_exists_option() -> None:
    spec = GraderSpec("g", "file_exists", {"path": "x", "exists": "yes"})
    v = grade(spec, Transcript())
    assert v.explanation == "grader threw: exists must be true or false (got 'yes')"
