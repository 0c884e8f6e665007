"""The directory format: ``<case>/prompt.md``, ``<case>/case.yaml`` and ``<case>/graders/*.md``.

prompt.md: YAML frontmatter (run limits) and a body (the prompt, trimmed). case.yaml
(``schema_version: "1.x"``): the same fields, execution ones under ``execution:``, plus
``context:`` and ``graders:``. When both exist, prompt.md's frontmatter overrides case.yaml and its
body replaces ``execution.prompt``; graders are case.yaml's, then the files sorted by name.

Stricter than the reference: a grader file without frontmatter, a bad ``env`` key, an escaping
path, ``min > max`` and a pattern that does not compile are load errors here, not run failures.

A case only uses files inside its folder: prompt.md, case.yaml, a grader file, a ``context`` path
or a ``baseline_file`` that is (or goes through) a symbolic link leading outside the case folder
is a load error, and so is an ``add_dirs`` folder holding such a link. Links that stay inside are
fine.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_plugin_evals.model import Case, GraderSpec, LoadError, SourceKind
from pytest_plugin_evals.suites import grader_schema
from pytest_plugin_evals.suites import validate as v
from pytest_plugin_evals.suites.discover import (
    CASE_FILE,
    GRADERS_DIR,
    PROMPT_FILE,
    looks_like_case,
)
from pytest_plugin_evals.suites.validate import Spot, Value
from pytest_plugin_evals.util import frontmatter

#: prompt.md frontmatter keys, in the order the unknown-key message lists them.
PROMPT_KEYS = (
    "schema_version",
    "name",
    "description",
    "tags",
    "plugins",
    "runs",
    "expected_outcome",
    "model",
    "max_turns",
    "timeout_seconds",
    "allowed_tools",
    "disallowed_tools",
    "artifact_publish",
    "growthbook_overrides",
    "append_system_prompt",
    "env",
)
CASE_KEYS = (*PROMPT_KEYS[:7], "context", "execution", "graders")
EXECUTION_KEYS = ("prompt", *PROMPT_KEYS[7:])
CONTEXT_KEYS = ("scaffold_script", "history_file", "add_dirs")
#: Accepted and kept in ``Case.extra`` for reports.
EXTRA_KEYS = ("schema_version", "expected_outcome", "artifact_publish", "growthbook_overrides")

SUPPORTED_MAJOR = 1
VERSION = re.compile(r"^(\d+)(?:\.\d+)*$")
TODO = "TODO: describe what the agent should do"
MISSING_PROMPT = "execution.prompt is required (a prompt.md body, or execution.prompt in case.yaml)"
BLANK_TEMPLATE = (
    'the prompt is still the blank `init` template — replace the "TODO: describe what the agent '
    'should do" line with the user prompt to test (in prompt.md, or in execution.prompt if the '
    "case is written in case.yaml)"
)


def is_case_dir(path: Path) -> bool:
    return (path / PROMPT_FILE).is_file() or (path / CASE_FILE).is_file()


@dataclass
class _Whole:
    """Which parts of a case were read whole: the checks of the case as a whole (no prompt, no
    graders) are made only then, so they never repeat another problem in other words."""

    prompt: bool = True
    graders: bool = True


def load_case(case_dir: Path, suite_root: Path) -> Case:
    """Load the case in ``case_dir``; raises :class:`LoadError` naming the file and line.

    Every problem of the case is found before it raises: several are one
    :class:`~pytest_plugin_evals.suites.validate.LoadErrors`, a ``file:line: message`` line each.
    """
    prompt_path, yaml_path = case_dir / PROMPT_FILE, case_dir / CASE_FILE
    has_prompt, has_yaml = prompt_path.is_file(), yaml_path.is_file()
    if not (has_prompt or has_yaml):
        raise LoadError(case_dir, _no_prompt(case_dir))
    real, root = Path(os.path.realpath(case_dir)), Path(os.path.realpath(suite_root))
    if not real.is_relative_to(root):  # a linked folder: its files are not the suite's
        raise LoadError(
            case_dir,
            f"the case folder is a link to {real}, outside the suite ({suite_root}): "
            "a case folder must be inside it (copy the case instead)",
        )
    problems = v.Problems()
    whole = _Whole()
    # A case file that is a link leading out is never read.
    read_prompt = has_prompt and _inside(case_dir, prompt_path, problems, whole)
    read_yaml = has_yaml and _inside(case_dir, yaml_path, problems, whole)
    fields: dict[str, Value] = {}
    graders: list[GraderSpec] = []
    prompt, prompt_file, prompt_line = "", yaml_path, None
    if read_yaml:
        try:
            prompt, prompt_line, graders = _read_case_yaml(
                yaml_path, fields, case_dir, problems, whole
            )
        except LoadError as error:  # the file as a whole: its YAML, its top level
            problems.add(error)
            whole.prompt = whole.graders = False
    if read_prompt:
        try:
            body, body_line = _read_prompt_md(prompt_path, fields, problems)
        except LoadError as error:
            problems.add(error)
            whole.prompt = whole.graders = False
        else:
            if body.strip():
                prompt, prompt_file, prompt_line = body.strip(), prompt_path, body_line
    main_file = prompt_path if has_prompt else yaml_path
    if not prompt and whole.prompt:
        problems.add(LoadError(main_file, MISSING_PROMPT))
    if TODO in prompt:
        line = prompt_line
        if line is not None and prompt_file == prompt_path:  # body lines are exact
            line += prompt[: prompt.index(TODO)].count("\n")
        problems.add(LoadError(prompt_file, BLANK_TEMPLATE, line))
    graders += _read_grader_files(case_dir, problems, whole)
    if not graders and whole.graders:
        problems.add(
            LoadError(
                main_file,
                "the case has no graders (add graders/*.md files, or graders: in case.yaml)",
            )
        )
    _check_unique(graders, problems)
    source: SourceKind = (
        "mixed" if has_prompt and has_yaml else "prose" if has_prompt else "case_yaml"
    )
    case = _build(case_dir, suite_root, main_file, source, prompt, fields, graders, problems)
    problems.raise_any(case_dir)
    return case


def _no_prompt(case_dir: Path) -> str:
    """Why a folder holding neither prompt.md nor case.yaml is no case (the reference skips
    such a folder without a word; here it is a load error, so a case never vanishes)."""
    try:
        with os.scandir(case_dir) as scan:
            seen = looks_like_case(list(scan))
    except OSError:
        seen = None
    if seen is None:
        return "not a case directory: it holds neither prompt.md nor case.yaml"
    hint = f" (did you mean {PROMPT_FILE}?)" if seen.lower().startswith("prompt.") else ""
    return (
        f"a case folder without {PROMPT_FILE}: it holds {seen}{hint} but neither {PROMPT_FILE} "
        f"nor {CASE_FILE}; write the prompt to test in {case_dir.name}/{PROMPT_FILE}"
    )


def _inside(case_dir: Path, path: Path, problems: v.Problems, whole: _Whole) -> bool:
    """Whether a case file may be read (:func:`_check_inside`); its problem is kept if not."""
    try:
        _check_inside(case_dir, path)
    except LoadError as error:
        problems.add(error)
        whole.prompt = whole.graders = False
        return False
    return True


def _build(
    case_dir: Path,
    suite_root: Path,
    path: Path,
    source: SourceKind,
    prompt: str,
    fields: dict[str, Value],
    graders: list[GraderSpec],
    problems: v.Problems,
) -> Case:
    """The case from its fields, each checked on its own (a failed check keeps its problem
    and gives the default)."""
    get, check = fields.get, problems.check
    name = (
        check(case_dir.name, v.name, fields["name"]).strip()
        if "name" in fields
        else check(
            case_dir.name, v.name, Value(case_dir.name, Spot(path), "the case folder's name")
        )
    )
    return Case(
        name=name,
        prompt=prompt,
        source=source,
        path=path,
        dir=case_dir,
        suite_root=suite_root,
        graders=tuple(graders),
        description=check(None, v.optional_string, get("description")),
        tags=check((), v.names, get("tags")),
        runs=_or(problems, get("runs"), 3, lambda x: v.whole_number(x, 1, 50)),
        model=_or(problems, get("model"), None, v.string),
        max_turns=_or(problems, get("max_turns"), 10, lambda x: v.whole_number(x, 1, 200)),
        timeout_seconds=_or(
            problems, get("timeout_seconds"), 300, lambda x: v.number_between(x, 1, 3600)
        ),
        allowed_tools=check((), v.string_list, get("allowed_tools")),
        disallowed_tools=check((), v.string_list, get("disallowed_tools")),
        env=check({}, v.env, get("env")),
        plugins=check((), v.string_list, get("plugins")),
        scaffold_script=_or(
            problems, get("scaffold_script"), None, lambda x: v.inside_folder(x, case_dir)
        ),
        history_file=_or(
            problems, get("history_file"), None, lambda x: v.inside_folder(x, case_dir)
        ),
        add_dirs=_add_dirs(get("add_dirs"), case_dir, problems),
        append_system_prompt=check(None, v.optional_string, get("append_system_prompt")),
        extra={key: fields[key].raw for key in EXTRA_KEYS if key in fields},
    )


def _or(problems: v.Problems, value: Value | None, default: Any, check: Any) -> Any:
    if value is None or value.raw is None:
        return default
    return problems.check(default, check, value)


def _add_dirs(value: Value | None, case_dir: Path, problems: v.Problems) -> tuple[str, ...]:
    items = problems.check(None, v.string_list, value)
    if value is None or items is None:
        return ()
    inner = value.spot.child(value.key, f"{value.label}.")
    found = (
        problems.check(None, v.folder_inside, Value(item, inner, index), case_dir)
        for index, item in enumerate(items)
    )
    return tuple(folder for folder in found if folder is not None)


def _check_inside(case_dir: Path, path: Path) -> None:
    """A case file (prompt.md, case.yaml, a grader file) must not be a link leading out of the
    case folder; checked before the file is read.

    The error is the case folder's, and names the file: a LoadError's path is shown resolved, so
    the link itself would be shown as where it leads.
    """
    rel = path.relative_to(case_dir).as_posix()
    found = v.link_leaving(case_dir, rel)
    if found is not None:
        message = f"{rel} {v.describe_link(rel, found)} — it must be a file inside it"
        raise LoadError(case_dir, message)


# -- case.yaml --------------------------------------------------------------------------------


def _read_case_yaml(
    path: Path, fields: dict[str, Value], case_dir: Path, problems: v.Problems, whole: _Whole
) -> tuple[str, int | None, list[GraderSpec]]:
    """Read case.yaml into ``fields``; return its prompt, the prompt's line, and its graders.

    A file that cannot be read as a mapping (or asks for a newer schema) raises; any other
    problem is kept in ``problems`` and the rest is read.
    """
    try:
        doc = frontmatter.load_yaml(v.read_source(path))
    except frontmatter.YAMLProblem as exc:
        raise LoadError(path, f"invalid YAML: {exc.message}", exc.line) from None
    data = doc.data
    if not isinstance(data, dict):
        got = "an empty file" if data is None else v.kind(data)
        raise LoadError(path, f"case.yaml must be a YAML mapping (got {got})", doc.first_line)
    spot = Spot(path, doc, (), "", 1)
    _versioned(spot.value(data, "schema_version"), spot, problems, required=True)
    problems.check(None, v.check_keys, data, spot, CASE_KEYS, "key")
    if "name" not in data:
        problems.add(
            LoadError(path, "name is required (the case's name, a non-empty string)", spot.line())
        )
    for key in CASE_KEYS[:7]:
        if key in data:
            fields[key] = Value(data[key], spot, key)
    prompt, prompt_line = "", None
    for section, keys in (("execution", EXECUTION_KEYS), ("context", CONTEXT_KEYS)):
        holder = spot.value(data, section)
        if holder is None or holder.raw is None:
            continue
        block = problems.check(None, v.mapping, holder)
        if block is None:
            whole.prompt = whole.prompt and section != "execution"
            continue
        inner = spot.child(section, f"{section}.")
        problems.check(None, v.check_keys, block, inner, keys, "key")
        for key, raw in block.items():
            if key == "prompt":
                prompt_value = Value(raw, inner, key)
                text = problems.check(None, v.string, prompt_value, empty=True)
                if text is None and raw is not None:
                    whole.prompt = False
                prompt = (text or "").strip()
                prompt_line = prompt_value.line
            elif key in keys:
                fields[key] = Value(raw, inner, key)
    graders = _yaml_graders(spot.value(data, "graders"), spot, case_dir, problems, whole)
    return prompt, prompt_line, graders


def _versioned(value: Value | None, spot: Spot, problems: v.Problems, *, required: bool) -> None:
    """:func:`_check_version`, its problem kept; a file for a newer major version raises: the
    rest of it is written for a schema this version does not know."""
    raw = value.raw if value is not None else None
    found = VERSION.match(raw.strip()) if isinstance(raw, str) else None
    if found is not None and int(found.group(1)) > SUPPORTED_MAJOR:
        _check_version(value, spot, required=required)
    problems.check(None, _check_version, value, spot, required=required)


def _check_version(value: Value | None, spot: Spot, *, required: bool) -> None:
    if value is None:
        if required:
            spot.fail('schema_version is required (a quoted string such as "1.1")')
        return
    raw = value.raw
    if not isinstance(raw, str):
        value.fail(f'must be a quoted string such as "1.1" (got {v.kind(raw)}: {v.show(raw)})')
    found = VERSION.match(raw.strip())
    if found is None:
        value.fail(f'must be a version string such as "1.1" (got {v.show(raw)})')
    if int(found.group(1)) > SUPPORTED_MAJOR:
        value.fail(
            f"{v.show(raw)} requires a newer pytest-plugin-evals "
            f"(this version supports up to {SUPPORTED_MAJOR}.x)"
        )


def _yaml_graders(
    value: Value | None, spot: Spot, case_dir: Path, problems: v.Problems, whole: _Whole
) -> list[GraderSpec]:
    """case.yaml's graders, each checked on its own."""
    if value is None or value.raw is None:
        return []
    if not isinstance(value.raw, list):
        problems.add(
            LoadError(
                spot.path, f"{value.label} must be a list of graders (got {v.kind(value.raw)})",
                value.line,
            )
        )  # fmt: skip
        whole.graders = False
        return []
    found = []
    for index, raw in enumerate(value.raw):
        item = Spot(spot.path, spot.doc, ("graders", index), f"graders[{index}].", 1)
        if not isinstance(raw, dict):
            message = f"graders[{index}] must be a mapping (got {v.kind(raw)})"
            problems.add(LoadError(spot.path, message, item.line()))
            whole.graders = False
            continue
        built = problems.check(None, grader_schema.build, raw, item, folder=case_dir)
        if built is None:
            whole.graders = False
        else:
            found.append(built)
    return found


# -- prompt.md --------------------------------------------------------------------------------


def _read_markdown(path: Path) -> tuple[frontmatter.Frontmatter, frontmatter.Located | None]:
    try:
        split = frontmatter.split(v.read_source(path))
    except frontmatter.Unterminated as exc:
        raise LoadError(path, str(exc), 1) from None
    if split.yaml_text is None:
        return split, None
    try:
        doc = frontmatter.load_yaml(split.yaml_text, split.yaml_line)
    except frontmatter.YAMLProblem as exc:
        raise LoadError(path, f"invalid YAML frontmatter: {exc.message}", exc.line) from None
    if doc.data is not None and not isinstance(doc.data, dict):
        raise LoadError(
            path, f"frontmatter must be a YAML mapping (got {v.kind(doc.data)})", doc.first_line
        )
    return split, doc


def _read_prompt_md(path: Path, fields: dict[str, Value], problems: v.Problems) -> tuple[str, int]:
    """Read prompt.md's frontmatter into ``fields`` (overriding); return its body and line.

    A file that cannot be read raises; a problem in its frontmatter is kept in ``problems``.
    """
    split, doc = _read_markdown(path)
    data = doc.data if doc is not None and doc.data is not None else {}
    spot = Spot(path, doc, (), "", 1)
    _versioned(spot.value(data, "schema_version"), spot, problems, required=False)
    problems.check(None, v.check_keys, data, spot, PROMPT_KEYS, "frontmatter key")
    for key, raw in data.items():
        if key in PROMPT_KEYS:
            fields[key] = Value(raw, spot, key)
    return split.body, _content_line(split.body, split.body_line)


def _content_line(body: str, body_line: int) -> int:
    """The line of the first non-blank character of ``body``."""
    lead = len(body) - len(body.lstrip())
    return body_line + body[:lead].count("\n")


# -- graders/*.md -----------------------------------------------------------------------------


def _read_grader_files(case_dir: Path, problems: v.Problems, whole: _Whole) -> list[GraderSpec]:
    """The graders of ``graders/*.md``, each file on its own (a problem is kept, and that
    grader left out)."""
    folder = case_dir / GRADERS_DIR
    if not folder.is_dir():
        return []
    files = sorted((p for p in folder.iterdir() if p.suffix == ".md" and p.is_file()), key=_name)
    if files and v.link_leaving(case_dir, GRADERS_DIR) is not None:
        # The folder itself leads out: one problem (named by its first file), nothing read.
        _inside(case_dir, files[0], problems, whole)
        return []
    # Every file is checked before any is read; a link leading out is never read.
    readable = [path for path in files if _inside(case_dir, path, problems, whole)]
    found = []
    for path in readable:
        built = problems.check(None, _read_grader_file, path, case_dir)
        if built is None:
            whole.graders = False
        else:
            found.append(built)
    return found


def _name(path: Path) -> str:
    return path.name


def _read_grader_file(path: Path, case_dir: Path) -> GraderSpec:
    split, doc = _read_markdown(path)
    if split.yaml_text is None:
        raise LoadError(
            path,
            'a grader file must start with a frontmatter block ("---" lines) that sets type:',
            1,
        )
    data = doc.data if doc is not None and doc.data is not None else {}
    return grader_schema.build(
        data,
        Spot(path, doc, (), "", 1),
        default_name=path.stem,
        body=split.body,
        body_line=_content_line(split.body, split.body_line),
        line=1,
        folder=case_dir,
    )


def _check_unique(graders: list[GraderSpec], problems: v.Problems) -> None:
    seen: dict[str, GraderSpec] = {}
    for grader in graders:
        first = seen.setdefault(grader.name, grader)
        if first is not grader:
            where = Path(first.path or "").name
            problems.add(
                LoadError(
                    Path(grader.path or ""),
                    f'duplicate grader name "{grader.name}" (also defined in {where})',
                    grader.line,
                )
            )
