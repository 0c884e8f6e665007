"""A session's trigger queries as skill-creator's ``scripts/run_eval.py`` prints its results,
one document per skill, so ``scripts/improve_description.py --eval-results`` reads them:
``{"skill_name", "description", "results": [{"query", "should_trigger", "trigger_rate",
"triggers", "runs", "pass"}], "summary": {"total", "passed", "failed"}}``.

The counts are the session's (:mod:`.triggers`): a run that could not be made is not a run
here (``run_eval.py`` counts it as not triggered). Each result adds ``errors``, the runs left
out; a query none of whose runs was made is no result, and ``notes`` say so. ``description``
is the one the with arm loaded: its ``SKILL.md``'s, read at the end of the session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_plugin_evals.reporting.result import SessionResult
from pytest_plugin_evals.reporting.triggers import SkillTriggers, trigger_results
from pytest_plugin_evals.util.frontmatter import YAMLProblem, load_yaml, split

#: A ``SKILL.md`` larger than this is not read for its description.
MAX_SKILL_MD = 1024 * 1024


def run_eval_results(skill: SkillTriggers, description: str) -> dict[str, Any]:
    """One skill's queries, as ``run_eval.py`` writes them."""
    results = [
        {
            "query": q.query,
            "should_trigger": q.should_trigger,
            "trigger_rate": q.rate,
            "triggers": q.fired,
            "runs": q.runs,
            "pass": q.right,
            "errors": q.errors,
        }
        for q in skill.queries
        if q.runs
    ]
    passed = sum(1 for r in results if r["pass"])
    notes = []
    if skill.errors:
        notes.append(
            f"{skill.errors} run(s) could not be made (infrastructure errors): not counted as "
            "runs, nor as not triggered"
        )
    if left := len(skill.queries) - len(results):
        notes.append(f"{left} quer(ies) had no run made and are left out of results")
    return {
        "skill_name": skill.skill,
        "description": description,
        "results": results,
        "summary": {"total": len(results), "passed": passed, "failed": len(results) - passed},
        "notes": notes,
    }


def skill_description(trigger_file: Path, folder: str) -> str:
    """The ``description`` of the skill a trigger file tests (its ``SKILL.md`` beside the
    file's ``evals/`` folder, or the collection's ``<folder>/SKILL.md``); "" when unreadable."""
    for skill in (trigger_file.parent, trigger_file.parent.parent):
        for candidate in (skill / "SKILL.md", skill.parent / folder / "SKILL.md"):
            if candidate.parent.name == folder and candidate.is_file():
                return _description(candidate)
    return ""


def _description(path: Path) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            text = fh.read(MAX_SKILL_MD)
        front = split(text).yaml_text
        data = load_yaml(front).data if front is not None else None
    except (OSError, ValueError, YAMLProblem):
        return ""
    value = data.get("description") if isinstance(data, dict) else None
    return " ".join(value.split()) if isinstance(value, str) else ""


def trigger_documents(result: SessionResult) -> list[tuple[str, dict[str, Any]]]:
    """Each skill's name and its ``run_eval.py`` results, from the session's trigger queries."""
    found = []
    for skill in trigger_results(result.cases):
        case = next(
            c.case
            for c in result.cases
            if c.case.source == "trigger_eval"
            and any(str(g.config.get("skill") or "") == skill.skill for g in c.case.graders)
        )
        spec = next(g for g in case.graders if g.type == "skill_fired")
        folder = str(spec.config.get("folder") or skill.skill)
        description = skill_description(Path(case.path), folder)
        found.append((skill.skill, run_eval_results(skill, description)))
    return found
