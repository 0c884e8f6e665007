"""JSON/YAML suite files: evals.json-style cases (``prompt``), sy suites (``input``) and
skill-creator's evals.json (``evals``)."""

from __future__ import annotations

from pathlib import Path

from pytest_plugin_evals.model import Case, LoadError
from pytest_plugin_evals.suites import evals_json, skill_creator, sy, trigger_eval
from pytest_plugin_evals.suites import validate as v
from pytest_plugin_evals.suites.discover import is_trigger_file
from pytest_plugin_evals.suites.json_lines import JSONProblem, load_json
from pytest_plugin_evals.util.frontmatter import Located, YAMLProblem, load_yaml

#: A suite file in no format this plugin reads, and the formats it tried.
NEITHER = (
    "not a suite in a known format: tried evals.json / sy suites (a cases: list) and "
    "skill-creator's evals.json (an evals list)"
)


def _keys(data: dict[object, object]) -> str:
    keys = [str(k)[:40] for k in list(data)[:5]]
    return "keys: " + ", ".join(keys) + ("…" if len(data) > 5 else "") if keys else "no keys"


def parse_suite(path: Path) -> Located:
    """Read a suite file (JSON by suffix, else YAML), check it holds a ``cases:`` list."""
    text = v.read_source(path)
    try:
        doc = load_json(text) if path.suffix.lower() == ".json" else load_yaml(text)
    except JSONProblem as exc:
        raise LoadError(path, exc.message, exc.line) from None
    except YAMLProblem as exc:
        raise LoadError(path, f"invalid YAML: {exc.message}", exc.line) from None
    if not isinstance(doc.data, dict):
        got = "an empty file" if doc.data is None else v.kind(doc.data)
        raise LoadError(path, f"a suite must be a mapping with a cases: list (got {got})", 1)
    if skill_creator.is_skill_creator(doc.data):
        return doc
    if "cases" not in doc.data:
        raise LoadError(path, f"{NEITHER} (found {_keys(doc.data)})", 1)
    cases = doc.data["cases"]
    if not isinstance(cases, list):
        raise LoadError(path, f"cases must be a list (got {v.kind(cases)})", doc.line("cases"))
    return doc


def load_suite_file(path: Path, suite_root: Path) -> list[Case | LoadError]:
    """The cases of a suite file: evals.json-style (``prompt``) or sy (``input``).

    A whole-file problem raises LoadError; a bad case is a LoadError item, so the others run.
    """
    if is_trigger_file(path.name):
        return trigger_eval.load(path, suite_root)
    doc = parse_suite(path)
    if skill_creator.is_skill_creator(doc.data):
        return skill_creator.load(path, suite_root, doc)
    cases = [c for c in doc.data["cases"] if isinstance(c, dict)]
    has_input = any("input" in c for c in cases)
    has_prompt = any("prompt" in c for c in cases)
    if has_input and not has_prompt:
        return sy.load(path, suite_root, doc)
    if has_prompt and not has_input:
        return evals_json.load(path, suite_root, doc)
    if has_input and has_prompt:
        raise LoadError(
            path,
            'cases mix "prompt" (evals.json format) and "input" (sy format), '
            "so the file's format is unclear: use one format per file",
            doc.line("cases"),
        )
    # No case says which: sy suites carry suite-level keys, evals.json files are JSON.
    if set(doc.data) & {"name", "tags"} or path.suffix.lower() != ".json":
        return sy.load(path, suite_root, doc)
    return evals_json.load(path, suite_root, doc)
