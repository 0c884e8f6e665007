"""The judge ``init`` drafts with: its command line, else the plugin's pytest ini.

The ini keys are the session's own (``eval_judge``, ``eval_judge_model``, ``eval_claude_bin``),
read from the first configuration file pytest would take in the plugin's folder or above it:
``pytest.ini``, ``.pytest.ini``, ``pyproject.toml`` with ``[tool.pytest.ini_options]``,
``tox.ini`` with ``[pytest]``, ``setup.cfg`` with ``[tool:pytest]``. So ``init`` drafts with
the judge that will grade the cases it writes.
"""

from __future__ import annotations

import configparser
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_plugin_evals.judges import DEFAULT_JUDGE, JUDGE_KINDS

KEYS = ("eval_judge", "eval_judge_model", "eval_claude_bin")


@dataclass(frozen=True)
class JudgeChoice:
    """Which judge, which model, which ``claude`` binary; and where each came from."""

    kind: str
    model: str | None
    claude_bin: str | None
    #: The ini file the values not given on the command line came from, if any.
    ini: Path | None = None


def choose(root: Path, kind: str | None, model: str | None, claude_bin: str | None) -> JudgeChoice:
    """The judge for ``init``; ValueError (one line) for a judge kind that is not one."""
    ini, values = read_ini(root)
    chosen = (kind or values.get("eval_judge") or DEFAULT_JUDGE).strip().lower()
    if chosen not in JUDGE_KINDS:
        where = "--eval-judge" if kind else f"ini eval_judge ({ini})"
        raise ValueError(f"{where} must be one of {', '.join(JUDGE_KINDS)} (got {chosen!r})")
    return JudgeChoice(
        kind=chosen,
        model=model or values.get("eval_judge_model") or None,
        claude_bin=claude_bin or values.get("eval_claude_bin") or None,
        ini=ini if values else None,
    )


def read_ini(root: Path) -> tuple[Path | None, dict[str, str]]:
    """The first pytest configuration at or above ``root``, and its ``eval_*`` judge keys."""
    for folder in (root, *root.parents):
        for name in ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
            path = folder / name
            if not path.is_file():
                continue
            found = _read(path)
            if found is not None:
                return path, {k: v for k, v in found.items() if k in KEYS and v}
    return None, {}


def _read(path: Path) -> dict[str, str] | None:
    """The pytest section of ``path``, or None when it has none (pytest.ini always counts)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if path.suffix == ".toml":
        return _toml(text)
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text, str(path))
    except configparser.Error:
        return {} if path.name.endswith("pytest.ini") else None
    section = "tool:pytest" if path.name == "setup.cfg" else "pytest"
    if not parser.has_section(section):
        return {} if path.name.endswith("pytest.ini") else None
    return {k: v.strip() for k, v in parser.items(section)}


def _toml(text: str) -> dict[str, str] | None:
    toml: Any = None
    for module in ("tomllib", "tomli"):  # tomllib is new in 3.11; pytest needs tomli before
        try:
            toml = importlib.import_module(module)
            break
        except ImportError:  # pragma: no cover - one of them is there wherever pytest is
            continue
    if toml is None:  # pragma: no cover
        return None
    try:
        doc = toml.loads(text)
    except ValueError:  # TOMLDecodeError is a ValueError
        return None
    if not isinstance(doc, dict):
        return None
    options = doc.get("tool", {}).get("pytest", {}).get("ini_options")
    if not isinstance(options, dict):
        return None
    return {str(k): str(v) for k, v in options.items() if isinstance(v, (str, int, float))}
