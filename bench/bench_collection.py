"""Time case discovery and loading on a large directory suite (2,000 cases by default).

Run it directly (it is not a test)::

    python bench/bench_collection.py [--cases 2000] [--repeat 3]

Each generated case has a prompt.md with frontmatter, a regex grader with a pattern in its body,
a tool_used grader with an ``input_match`` (both compiled at load), and an llm grader; every fifth
case is a case.yaml + prompt.md mix, and cases sit in groups of 50. It prints the least CPU
time of ``--repeat`` runs for ``walk`` alone and for ``walk`` + ``load_case`` of every case,
and what importing the loaders cost (once per process: pydantic and the models built on it).

To compare two versions, pass ``--package DIR``: a folder holding another version's
``pytest_plugin_evals`` (``git archive <commit> pytest_plugin_evals | tar -x -C DIR``), imported
instead of the installed one.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

PROMPT = """\
---
description: generated case {i}
tags: [bench, group-{group}]
runs: 2
max_turns: 20
timeout_seconds: 120
allowed_tools: [Read, Skill]
env:
  EVAL_CASE: "{i}"
---

Case {i}: summarise the release notes and suggest the next version.
"""

CASE_YAML = """\
schema_version: "1.1"
name: mixed-{i}
context:
  add_dirs: [fixtures]
execution:
  prompt: overridden by prompt.md
graders:
  - name: yaml-file
    type: file_exists
    path: "out/*.md"
"""

GRADERS = {
    "answer.md": "---\ntype: regex\nflags: i\n---\n\\b1\\.4\\.{digit}\\b\n",
    "skill-fired.md": (
        "---\ntype: tool_used\ntool: Skill\n"
        'input_match: \'"skill"\\s*:\\s*"(?:[\\w-]+:)?skill-{digit}"\'\n---\n'
    ),
    "criteria.md": "---\ntype: llm\nweight: 2\n---\nPASS if the answer names 1.4.{digit}.\n",
}


def generate(root: Path, count: int) -> Path:
    evals = root / "evals"
    for i in range(count):
        group = i // 50
        case_dir = evals / f"group-{group:03d}" / f"case-{i:05d}"
        (case_dir / "graders").mkdir(parents=True)
        (case_dir / "prompt.md").write_text(PROMPT.format(i=i, group=group), encoding="utf-8")
        if i % 5 == 0:
            (case_dir / "case.yaml").write_text(CASE_YAML.format(i=i), encoding="utf-8")
        for name, text in GRADERS.items():
            (case_dir / "graders" / name).write_text(text.format(digit=i % 10), encoding="utf-8")
    (evals / "results" / "old-run").mkdir(parents=True)
    (evals / "mocks" / "tracker").mkdir(parents=True)
    return evals


def best_of(repeat: int, action: object) -> tuple[float, object]:
    """The least CPU time of ``repeat`` calls (steadier than wall time on a busy machine)."""
    times, result = [], None
    for _ in range(repeat):
        start = time.process_time()
        result = action()  # type: ignore[operator]
        times.append(time.process_time() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--package", type=Path, help="import pytest_plugin_evals from here")
    args = parser.parse_args()
    if args.package is not None:  # ahead of the installed (editable) package's finder
        sys.path.insert(0, str(args.package.resolve()))
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__]
    start = time.process_time()
    from pytest_plugin_evals.suites import directory, discover

    import_s = time.process_time() - start
    print(f"package: {Path(directory.__file__).parents[1]}")
    with tempfile.TemporaryDirectory() as tmp:
        evals = generate(Path(tmp), args.cases)

        def walk() -> list[discover.Source]:
            return discover.walk(evals)

        def walk_and_load() -> int:
            loaded = [directory.load_case(s.path, evals) for s in discover.walk(evals)]
            return sum(len(case.graders) for case in loaded)

        walk_s, sources = best_of(args.repeat, walk)
        assert len(sources) == args.cases, len(sources)  # type: ignore[arg-type]
        load_s, graders = best_of(args.repeat, walk_and_load)
        per_case_ms = load_s / args.cases * 1000
        print(f"import of the loaders: {import_s * 1000:.0f} ms")
        print(f"walk: {args.cases} cases found in {walk_s * 1000:.0f} ms")
        print(
            f"walk + load_case: {args.cases} cases, {graders} graders in {load_s * 1000:.0f} ms "
            f"({per_case_ms:.2f} ms per case)"
        )


if __name__ == "__main__":
    main()
