"""Targets: the trace as one text, and a focus file kept inside the run directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_plugin_evals.graders import grade
from pytest_plugin_evals.graders.base import GradeContext
from pytest_plugin_evals.graders.targets import MAX_FILE_BYTES, clear_trace_cache, trace_text
from pytest_plugin_evals.model import Case, GraderSpec, Transcript, Verdict


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    clear_trace_cache()


def _case(tmp_path: Path, name: str = "write-report") -> Case:
    return Case(
        name=name, prompt="p", source="prose", path=tmp_path, dir=tmp_path, suite_root=tmp_path
    )


def _file_regex(
    cwd: Path | None, path: str, pattern: str = "x", case: Case | None = None
) -> Verdict:
    spec = GraderSpec(
        "g", "regex", {"pattern": pattern, "target": {"source": "file", "path": path}}
    )
    return grade(spec, Transcript(cwd=cwd), case=case)


# -- trace ------------------------------------------------------------------------------------

TRACES = [
    "",
    "\n",
    '{"a":1}',
    '{"a":1}\n',
    '{"a":1}\n{"b":2}\n',
    '{"a":1}\n\n{"b":2}\n\n',
    '\n\n{"a":1}\n   \n{"b":2}',
    '{"a":1}\r\n{"b":2}\r\n',
    '{"a":1}\n\t \n{"b":"é"}\n \n',
    "only\x0c\n\x0c\nlast ",
]


@pytest.mark.parametrize("content", TRACES)
def test_trace_text_equals_the_joined_trace_lines(tmp_path: Path, content: str) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_bytes(content.encode("utf-8"))
    t = Transcript(trace_path=path)
    assert trace_text(t) == "\n".join(t.trace_lines())


def test_missing_or_absent_trace_is_empty(tmp_path: Path) -> None:
    assert trace_text(Transcript()) == ""
    assert trace_text(Transcript(trace_path=tmp_path / "nope.jsonl")) == ""


def test_trace_target_has_no_trailing_newline(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text('{"type":"a"}\n{"type":"result"}\n', encoding="utf-8")
    spec = GraderSpec("g", "regex", {"pattern": r'"result"}$', "target": "trace"})
    assert grade(spec, Transcript(trace_path=path)).passed is True


def test_trace_is_reread_when_the_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text('{"n":"first"}\n', encoding="utf-8")
    t = Transcript(trace_path=path)
    assert trace_text(t) == '{"n":"first"}'
    path.write_text('{"n":"second, longer"}\n', encoding="utf-8")
    assert trace_text(t) == '{"n":"second, longer"}'


def test_trace_is_read_once_per_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_plugin_evals.graders.targets as targets

    path = tmp_path / "trace.jsonl"
    path.write_text('{"name":"Skill"}\n', encoding="utf-8")
    reads: list[Path] = []
    real = targets._read_trace

    def counting(p: Path) -> str:
        reads.append(p)
        return real(p)

    monkeypatch.setattr(targets, "_read_trace", counting)
    ctx = GradeContext(Transcript(trace_path=path))
    assert ctx.trace_text() == ctx.trace_text() == '{"name":"Skill"}'
    assert len(reads) == 1


def test_a_transcript_with_its_own_trace_lines_is_respected() -> None:
    class Memory(Transcript):
        def trace_lines(self) -> list[str]:
            return ['{"a":1}', '{"b":2}']

    assert trace_text(Memory()) == '{"a":1}\n{"b":2}'


# -- focus file -------------------------------------------------------------------------------


def test_file_target_reads_the_file(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.md").write_text("# Summary\nall ok\n", encoding="utf-8")
    v = _file_regex(tmp_path, "out/report.md", "^all ok$")
    assert v.passed is False  # no m flag: ^ and $ are the text's ends
    spec = GraderSpec(
        "g",
        "regex",
        {
            "pattern": "^all ok$",
            "flags": "m",
            "target": {"source": "file", "path": "./out/report.md"},
        },
    )
    assert grade(spec, Transcript(cwd=tmp_path)).passed is True


def test_missing_file_names_case_and_path(tmp_path: Path) -> None:
    v = _file_regex(tmp_path, "out/missing.md", case=_case(tmp_path))
    assert v.passed is False
    assert v.explanation == (
        'grader threw: case "write-report" grader focus file "out/missing.md": '
        'path "out/missing.md" does not exist'
    )


@pytest.mark.parametrize("path", ["../secret.txt", "out/../../secret.txt", "/etc/hostname"])
def test_paths_leaving_the_directory_are_refused(tmp_path: Path, path: str) -> None:
    cwd = tmp_path / "cwd"
    (cwd / "out").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("x", encoding="utf-8")
    v = _file_regex(cwd, path, case=_case(tmp_path, "c"))
    assert v.passed is False
    assert v.explanation == (
        f'grader threw: case "c" grader focus file "{path}": path "{path}" escapes the run '
        "directory (`..` or an absolute path) — it must name something inside it"
    )


def test_symlink_escape_is_refused(tmp_path: Path) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (tmp_path / "secret.txt").write_text("x", encoding="utf-8")
    (cwd / "link.txt").symlink_to(tmp_path / "secret.txt")
    (cwd / "dirlink").symlink_to(tmp_path)
    for path in ("link.txt", "dirlink/secret.txt"):
        v = _file_regex(cwd, path)
        assert v.passed is False
        assert v.explanation == (
            f'grader threw: grader focus file "{path}": path "{path}" leads outside the run '
            "directory through a symbolic link"
        )


def test_symlink_inside_the_directory_is_fine(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("x marks", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    assert _file_regex(tmp_path, "link.txt", "marks").passed is True


def test_ten_mebibytes_is_the_limit(tmp_path: Path) -> None:
    with (tmp_path / "exact.log").open("wb") as fh:
        fh.truncate(MAX_FILE_BYTES)
    assert _file_regex(tmp_path, "exact.log", "x").explanation == (
        "pattern not found in file exact.log"
    )
    with (tmp_path / "big.log").open("wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)
    v = _file_regex(tmp_path, "big.log")
    assert v.passed is False
    assert v.explanation == (
        f'grader threw: grader focus file "big.log": path "big.log" is {MAX_FILE_BYTES + 1} '
        "bytes, over the 10 MiB limit for a focus file"
    )


def test_hard_link_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    os.link(tmp_path / "a.txt", tmp_path / "b.txt")
    v = _file_regex(tmp_path, "b.txt")
    assert v.explanation.startswith('grader threw: grader focus file "b.txt": path "b.txt" has 2')


def test_directory_and_image_are_refused(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    assert _file_regex(tmp_path, "out").explanation.endswith('path "out" is not a regular file')
    (tmp_path / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"x" * 20)
    assert "is an image" in _file_regex(tmp_path, "shot.png").explanation


def test_no_working_directory(tmp_path: Path) -> None:
    v = _file_regex(None, "out/report.md")
    assert v.explanation == (
        'grader threw: grader focus file "out/report.md": the run has no working directory '
        "to read it from"
    )


def test_non_utf8_file_is_read_with_replacement(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_bytes(b"caf\xe9 ok")
    assert _file_regex(tmp_path, "x.txt", "ok$").passed is True
