"""Verdicts people gave (``--eval-labels FILE``), read and checked, then matched to runs.

Two shapes of file:

- JSON lines, one verdict a line:
  ``{"case": "pick-version", "arm": "with", "run": 1, "grader": "rubric", "passed": true}``
  (``arm``: ``with``, ``without`` or ``baseline``; ``run``: from 1). Blank lines and lines
  starting with ``#`` are passed over. A line that is not such an object is one error naming
  the file and the line.
- skill-creator's ``feedback.json`` (its review viewer's file): ``{"reviews": [{"run_id":
  "eval-1-with_skill-run-2", "feedback": "…"}], "status": "complete"}``. A review labels every
  judge grader of its run: empty feedback is a pass (skill-creator reads it as "the user
  thought it was fine"), feedback that starts with the word PASS or FAIL says so, and any other
  text is a complaint, a fail. A line ``GRADER: PASS`` (or ``FAIL``) in it labels that grader
  alone. When ``status`` is ``complete``, a run the viewer showed with no review was fine.

A label names a run of this session by case, arm and run number: label the runs of one
session, then grade those same answers again (``--eval-agent replay:last``) with the labels.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARMS = ("with", "without", "baseline")
#: A labels file larger than this is refused (a file of verdicts is small).
MAX_BYTES = 16 * 1024 * 1024
_RUN_ID = re.compile(
    r"(?:^|-)eval-(\d{1,9})-(with_skill|without_skill|new_skill|old_skill)-run-(\d{1,6})$"
)
_GRADER_LINE = re.compile(r"^\s*([^:\n]{1,200}?)\s*:\s*(PASS|FAIL)\b", re.IGNORECASE | re.MULTILINE)
_FIRST_WORD = re.compile(r"^\W*(PASS|FAIL)\b", re.IGNORECASE)
#: skill-creator's configuration names, as the arm they stand for.
CONFIG_ARMS = {
    "with_skill": "with",
    "new_skill": "with",
    "without_skill": "without",
    "old_skill": "baseline",
}


class LabelsError(ValueError):
    """A labels file that cannot be read: one line, naming the file (and line)."""


@dataclass(frozen=True)
class Review:
    """One review of skill-creator's viewer: a run by eval ID, configuration and number, and
    what the person said of it (``graders``: verdicts of named graders; ``passed``: of all)."""

    eval_id: int
    arm: str
    run: int
    passed: bool | None
    graders: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True)
class Labels:
    """Every verdict people gave: by (case, arm, run, grader), and skill-creator's reviews."""

    verdicts: Mapping[tuple[str, str, int, str], bool]
    reviews: tuple[Review, ...] = ()
    #: Runs skill-creator's viewer showed without a review were fine (``status: complete``).
    complete: bool = False

    @property
    def empty(self) -> bool:
        return not self.verdicts and not self.reviews and not self.complete


def read_labels(paths: Iterable[Path]) -> Labels:
    """Every file's labels; :class:`LabelsError` at the first that cannot be read."""
    verdicts: dict[tuple[str, str, int, str], bool] = {}
    reviews: list[Review] = []
    complete = False
    for path in paths:
        text = _text(path)
        doc = _whole_json(text)
        if isinstance(doc, dict) and "reviews" in doc:
            reviews.extend(_reviews(path, doc))
            complete = complete or doc.get("status") == "complete"
        else:
            verdicts.update(_lines(path, text))
    return Labels(verdicts, tuple(reviews), complete)


def _text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LabelsError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise LabelsError(f"{path}: larger than {MAX_BYTES // (1024 * 1024)} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LabelsError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def _whole_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _lines(path: Path, text: str) -> dict[tuple[str, str, int, str], bool]:
    found: dict[tuple[str, str, int, str], bool] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            key, passed = _label(line)
        except ValueError as exc:
            raise LabelsError(f"{path}:{number}: {exc}") from None
        found[key] = passed
    return found


def _label(line: str) -> tuple[tuple[str, str, int, str], bool]:
    try:
        doc = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg}, column {exc.colno})") from None
    if not isinstance(doc, dict):
        raise ValueError('expected an object like {"case": …, "arm": "with", "run": 1, '
                         '"grader": …, "passed": true}')  # fmt: skip
    for name in ("case", "grader"):
        if not isinstance(doc.get(name), str) or not doc[name].strip():
            raise ValueError(f'"{name}" must be a non-empty string')
    if doc.get("arm") not in ARMS:
        raise ValueError(f'"arm" must be one of {", ".join(ARMS)} (got {_shown(doc.get("arm"))})')
    run = doc.get("run")
    if not isinstance(run, int) or isinstance(run, bool) or run < 1:
        raise ValueError(f'"run" must be a whole number from 1 (got {_shown(run)})')
    if not isinstance(doc.get("passed"), bool):
        raise ValueError(f'"passed" must be true or false (got {_shown(doc.get("passed"))})')
    return (doc["case"], doc["arm"], run, doc["grader"]), doc["passed"]


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else text[:39] + "…"


def _reviews(path: Path, doc: dict[str, Any]) -> list[Review]:
    entries = doc["reviews"]
    if not isinstance(entries, list):
        raise LabelsError(f'{path}: "reviews" must be a list (skill-creator\'s feedback.json)')
    found = []
    for index, entry in enumerate(entries):
        where = f"{path}: reviews[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("run_id"), str):
            raise LabelsError(f'{where}: expected an object with a "run_id" string')
        feedback = entry.get("feedback", "")
        if not isinstance(feedback, str):
            raise LabelsError(f'{where}: "feedback" must be a string')
        run = _RUN_ID.search(entry["run_id"])
        if run is None:
            continue  # not a run of ours (another layout): matches nothing
        eval_id, config, number = int(run.group(1)), run.group(2), int(run.group(3))
        found.append(Review(eval_id, CONFIG_ARMS[config], number, *feedback_verdict(feedback)))
    return found


def feedback_verdict(text: str) -> tuple[bool | None, tuple[tuple[str, bool], ...]]:
    """What a review's text says: a verdict of the whole run (None when it names graders
    only) and verdicts of named graders."""
    named = tuple((m.group(1), m.group(2).upper() == "PASS") for m in _GRADER_LINE.finditer(text))
    if named:
        return None, named
    if not text.strip():
        return True, ()
    first = _FIRST_WORD.match(text)
    return (first.group(1).upper() == "PASS" if first else False), ()
