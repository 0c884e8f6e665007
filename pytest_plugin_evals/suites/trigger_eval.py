"""skill-creator's trigger evals, ``trigger_eval.json``: ``[{"query", "should_trigger"}]``.

The file sits in a skill's ``evals/`` folder (the skill is the folder holding it, with its
``SKILL.md``) or in an evals folder beside the skill's ``SKILL.md``. Each query is a case run
in the with arm only (and in the baseline arm under ``--eval-baseline-plugin``), ``runs`` times
(3 unless ``--eval-runs``), graded by one ``skill_fired`` grader: the run is right when the
skill fired as ``should_trigger`` says.
"""

from __future__ import annotations

import re
from pathlib import Path

from pytest_plugin_evals.model import Case, GraderSpec, LoadError
from pytest_plugin_evals.suites import validate as v
from pytest_plugin_evals.suites.json_lines import JSONProblem, load_json

FILE_NAME = "trigger_eval.json"
RUNS = 3
_NAME = re.compile(r"^name:[ \t]*['\"]?([^'\"\n]+?)['\"]?[ \t]*$", re.MULTILINE)


def skill_of(path: Path) -> tuple[str, str] | None:
    """The skill a trigger file tests: (its name, its folder's name), or None."""
    for folder in (path.parent, path.parent.parent):
        skill_md = folder / "SKILL.md"
        if skill_md.is_file():
            try:
                head = skill_md.read_text(encoding="utf-8", errors="replace")[:4000]
            except OSError:
                head = ""
            found = _NAME.search(head.split("\n---", 1)[0]) if head.startswith("---") else None
            return (found.group(1).strip() if found else folder.name), folder.name
    return None


def load(path: Path, suite_root: Path) -> list[Case | LoadError]:
    """The trigger cases of ``path``; a bad entry is one error, the others still run."""
    skill = skill_of(path)
    if skill is None:
        where = f"{path.parent} or {path.parent.parent}"
        raise LoadError(
            path, f"no SKILL.md in {where}: put {FILE_NAME} in its skill's evals/ folder", 1
        )
    try:
        doc = load_json(v.read_source(path))
    except JSONProblem as exc:
        raise LoadError(path, exc.message, exc.line) from None
    if not isinstance(doc.data, list):
        raise LoadError(
            path, f'{FILE_NAME} must be a list of {{"query", "should_trigger"}} '
            f"(got {v.kind(doc.data)})", 1,
        )  # fmt: skip
    name, folder = skill
    found: list[Case | LoadError] = []
    for index, entry in enumerate(doc.data):
        line = doc.line(index) or 1
        where = f"[{index}]"
        if not isinstance(entry, dict):
            found.append(LoadError(path, f"{where} must be a mapping (got {v.kind(entry)})", line))
            continue
        unknown = sorted(set(entry) - {"query", "should_trigger"})
        query, should = entry.get("query"), entry.get("should_trigger")
        if unknown:
            problem = (
                f'{where}: unknown key "{unknown[0]}" (expected one of: query, should_trigger)'
            )
        elif not isinstance(query, str) or not query.strip():
            problem = f"{where}.query must be a non-empty string (got {v.kind(query)})"
        elif not isinstance(should, bool):
            problem = f"{where}.should_trigger must be true or false (got {v.kind(should)})"
        else:
            problem = None
        if problem is not None:
            found.append(LoadError(path, problem, line))
            continue
        assert isinstance(query, str) and isinstance(should, bool)
        config = {"skill": name, "folder": folder, "should_trigger": should}
        found.append(
            Case(
                name=f"trigger-{folder}-{index + 1:02d}",
                prompt=query.strip(),
                source="trigger_eval",
                path=path,
                dir=path.parent,
                suite_root=suite_root,
                graders=(
                    GraderSpec("skill-fired", "skill_fired", config, path=str(path), line=line),
                ),
                runs=RUNS,
                line=line,
                tags=("trigger",),
                allowed_tools=("Skill",),
            )
        )
    return found
