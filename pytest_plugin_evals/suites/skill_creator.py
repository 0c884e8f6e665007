"""skill-creator's ``evals/evals.json``: ``{"skill_name", "evals": [{id, prompt, ...}]}``.

Each eval is a case named ``eval-<id>`` (its ``name`` when it has one). ``files`` (paths
relative to the skill folder, the folder holding ``evals/``) are copied into the run's working
folder at the same relative paths, and the prompt ends with an ``Input files:`` line, as
skill-creator tells its executor. ``expected_output`` is kept for the reports. Each
``expectations`` entry is an ``llm`` grader (the judge's vote of three), scored in both arms.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from pytest_plugin_evals.model import Case, GraderSpec, LoadError
from pytest_plugin_evals.suites import validate as v
from pytest_plugin_evals.suites.file_case import file_case
from pytest_plugin_evals.suites.manifest import collection_skills
from pytest_plugin_evals.suites.validate import Spot
from pytest_plugin_evals.util.frontmatter import Located

EVAL_KEYS = ("id", "name", "prompt", "expected_output", "files", "expectations", "assertions")
TOP_KEYS = ("skill_name", "evals")


def is_skill_creator(data: object) -> bool:
    """Whether a parsed suite file is skill-creator's: a mapping with an ``evals`` list."""
    return isinstance(data, dict) and isinstance(data.get("evals"), list) and "cases" not in data


def skill_folder(path: Path) -> Path:
    """The folder ``files`` are relative to: the skill's, holding ``evals/evals.json``."""
    return path.parent.parent if path.parent.name == "evals" else path.parent


def load(path: Path, suite_root: Path, doc: Located) -> list[Case | LoadError]:
    """The cases of a parsed skill-creator file; bad evals become errors, the others run."""
    top = Spot(path, doc, (), "", 1)
    try:
        v.check_keys(doc.data, top, TOP_KEYS, "key")
    except LoadError as exc:
        return [exc]
    return v.each_case(
        path,
        doc,
        "evals",
        lambda raw, spot: _case(raw, spot, path, suite_root, _prefix(path, doc.data)),
        duplicate='duplicate eval "{name}" (first on line {first})',
        name_key="id",
    )


def _prefix(path: Path, data: object) -> str:
    """``<skill_name>-`` for a file in a skill collection's root ``evals/`` (each skill's evals
    there count from 1, so an ``eval-1`` of each would clash); ``""`` elsewhere."""
    skill = data.get("skill_name") if isinstance(data, dict) else None
    if not isinstance(skill, str) or not skill.strip() or path.parent.name != "evals":
        return ""
    return f"{skill.strip()}-" if collection_skills(path.parent.parent) else ""


def _case(raw: object, spot: Spot, path: Path, suite_root: Path, prefix: str = "") -> Case:
    if not isinstance(raw, dict):
        spot.fail(f"{spot.prefix.rstrip('.')} must be a mapping (got {v.kind(raw)})")
    v.check_keys(raw, spot, EVAL_KEYS, "key")
    name = prefix + _name(raw, spot)
    prompt_value = spot.value(raw, "prompt")
    if prompt_value is None:
        spot.fail(f"{spot.label('prompt')} is required")
    prompt = v.string(prompt_value).strip()
    expected_value = spot.value(raw, "expected_output")
    expected = None
    if expected_value is not None and expected_value.raw is not None:
        expected = v.string(expected_value, empty=True).strip() or None
    files = _files(raw, spot, path)
    if files:
        prompt += "\n\nInput files: " + ", ".join(dest for _, dest in files)
    graders: list[GraderSpec] = []
    # ``expectations`` (schemas.md); ``assertions`` is the name the skill's own text uses.
    for key in ("expectations", "assertions"):
        items = v.string_list(spot.value(raw, key))
        holder = spot.child(key, f"{spot.label(key)}.")
        for n, text in enumerate(items):
            if not text.strip():
                holder.fail(f"{holder.label(n)} must not be empty", n)
            graders.append(
                GraderSpec(
                    name=f"expectation-{len(graders) + 1}",
                    type="llm",
                    config={"criteria": text.strip()},
                    path=str(path),
                    line=holder.line(n),
                )
            )
    return file_case(
        "skill_creator",
        path,
        suite_root,
        name,
        prompt,
        graders,
        line=spot.line(),
        input_files=tuple(files),
        expected_output=expected,
    )


def _name(raw: dict[str, object], spot: Spot) -> str:
    named = spot.value(raw, "name")
    if named is not None and named.raw is not None:
        return v.string(named).strip()
    ident = spot.value(raw, "id")
    if ident is None or ident.raw is None:
        spot.fail(f"{spot.label('id')} is required (or a name)")
    value = ident.raw
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip():
        ident.fail(f"must be a whole number or a string (got {v.kind(value)})")
    return f"eval-{str(value).strip()}"


def _files(raw: dict[str, object], spot: Spot, path: Path) -> list[tuple[Path, str]]:
    """``files`` as (source, destination in the run's folder); each must be a file inside the
    skill folder."""
    root = skill_folder(path).resolve()
    holder = spot.child("files", f"{spot.label('files')}.")
    found = []
    for n, entry in enumerate(v.string_list(spot.value(raw, "files"))):
        rel = PurePosixPath(entry.strip())
        where = f'{holder.label(n)} "{entry}"'
        if not entry.strip() or rel.is_absolute() or ".." in rel.parts:
            holder.fail(f"{where} must be a path inside the skill folder {root}", n)
        source = (root / rel).resolve()
        if not source.is_relative_to(root) or not source.is_file():
            holder.fail(f"{where} is not a file in the skill folder {root}", n)
        found.append((source, rel.as_posix()))
    return found
