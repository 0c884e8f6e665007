"""skill-creator's trigger evals, ``trigger_eval.json``: ``[{"query", "should_trigger"}]``.

The file sits in a skill's ``evals/`` folder (the skill is the folder holding it, with its
``SKILL.md``) or in an evals folder beside the skill's ``SKILL.md``; or in the root ``evals/``
of a skill collection (``<skill>/SKILL.md`` folders), where it names its skill:
``{"skill_name": "<skill>", "queries": [{"query", "should_trigger"}, …]}`` (``evals`` for
``queries`` too; a collection of one skill needs no name). It may be named for its skill:
``<skill>_trigger_eval.json``. Each query is a case run
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
from pytest_plugin_evals.suites.manifest import collection_skills

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


def _named(path: Path, data: object) -> tuple[str, str] | None:
    """The skill a collection's trigger file names (``skill_name``), or its only skill; None
    when the file is not in a collection's root ``evals/``. A name that names no skill of the
    collection raises."""
    root = path.parent.parent
    skills = {md.parent.name: md for md in collection_skills(root)}
    if path.parent.name != "evals" or not skills:
        return None
    wanted = data.get("skill_name") if isinstance(data, dict) else None
    if wanted is None and len(skills) == 1:
        (only,) = skills.values()
        return skill_of(only.parent / FILE_NAME)
    for md in skills.values():
        found = skill_of(md.parent / FILE_NAME)
        if found is not None and wanted in found:
            return found
    listed = ", ".join(sorted(skills))
    if wanted is None:
        message = (
            f'name the skill it tests: {{"skill_name": "<skill>", "queries": [...]}} '
            f"(the skills of {root.name}: {listed})"
        )
    else:
        message = f"skill_name {v.show(wanted)} names no skill of {root.name} ({listed})"
    raise LoadError(path, message, 1)


def _queries(path: Path, data: object) -> list[object]:
    """The list of queries: the file itself, or a mapping's ``queries`` (or ``evals``)."""
    if isinstance(data, dict):
        unknown = sorted(set(data) - {"skill_name", "queries", "evals"})
        listed = data.get("queries", data.get("evals"))
        if not unknown and isinstance(listed, list):
            return listed
    if isinstance(data, list):
        return data
    raise LoadError(
        path, f'{path.name} must be a list of {{"query", "should_trigger"}}, or '
        f'{{"skill_name", "queries": [...]}} (got {v.kind(data)})', 1,
    )  # fmt: skip


def load(path: Path, suite_root: Path) -> list[Case | LoadError]:
    """The trigger cases of ``path``; a bad entry is one error, the others still run."""
    try:
        doc = load_json(v.read_source(path))
    except JSONProblem as exc:
        raise LoadError(path, exc.message, exc.line) from None
    skill = _named(path, doc.data) or skill_of(path)
    if skill is None:
        where = f"{path.parent} or {path.parent.parent}"
        raise LoadError(
            path, f"no SKILL.md in {where}: put {FILE_NAME} in its skill's evals/ folder", 1
        )
    name, folder = skill
    found: list[Case | LoadError] = []
    data = doc.data
    held: tuple[str, ...] = ()
    if isinstance(data, dict):
        held = ("queries",) if "queries" in data else ("evals",)
    for index, entry in enumerate(_queries(path, data)):
        line = doc.line(*held, index) or 1
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
