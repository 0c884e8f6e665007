"""What every grader shares: its outcome, the context it grades in, and option readers.

A grader is a function ``(spec, ctx) -> Outcome``. ``grade()`` turns the outcome into a
:class:`~pytest_plugin_evals.model.Verdict` named and weighted after the spec.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.util.jsregex import JSPattern, Pattern, compile_pattern
from pytest_plugin_evals.util.jsvalues import js_json, js_string, show

if TYPE_CHECKING:
    from pytest_plugin_evals.graders.judge import AnyJudge
    from pytest_plugin_evals.model import Case, GraderSpec, Judgement, Transcript


class GraderConfigError(ValueError):
    """A grader whose options cannot be used, in one sentence."""


class GraderError(Exception):
    """A grader that could not reach a verdict: ``kind`` says why (``judge``,
    ``grader_timeout``), the message is the verdict's explanation, ``cost_usd`` what its
    judge calls cost before it stopped."""

    kind = "grader"

    def __init__(self, message: str, *, grader: str | None = None, cost_usd: float = 0.0):
        super().__init__(message)
        self.message = message
        self.grader = grader
        self.cost_usd = cost_usd


class GraderTimeout(GraderError):
    """A grader ran past its time limit."""

    kind = "grader_timeout"


class TargetUnavailable(Exception):
    """The target has nothing to grade; the message is the failing verdict's explanation."""


@dataclass(frozen=True)
class Outcome:
    """What a grader found: ``passed`` is None when it did not judge (``skipped`` says why);
    a judge grader adds what it asked and was answered (``judgement``)."""

    passed: bool | None
    explanation: str
    skipped: str | None = None
    judgement: Judgement | None = None
    error: str | None = None


def presence(found: bool, wanted: bool, lines: tuple[str, str, str, str]) -> Outcome:
    """A check for something wanted present (``wanted``) or absent: passed when ``found`` is
    what was wanted. ``lines``: found as wanted, found though unwanted, missing though wanted,
    absent as wanted."""
    if found:
        return Outcome(wanted, lines[0] if wanted else lines[1])
    return Outcome(not wanted, lines[2] if wanted else lines[3])


def skip(reason: str) -> Outcome:
    """An outcome that is never scored and never counts as a pass."""
    return Outcome(passed=None, explanation=f"skipped: {reason}", skipped=reason)


@dataclass(eq=False)
class GradeContext:
    """One transcript being graded, with what is costly to compute read once.

    The trace text and the JSON text of each tool input are computed on first use and shared by
    every grader graded in the same context (see ``grade_all``).
    """

    transcript: Transcript
    case: Case | None = None
    judge: AnyJudge | None = None
    _: KW_ONLY
    #: The regex dialect, whatever the case says (None: the case's).
    dialect: str | None = None
    #: Seconds each grader may take matching patterns (None: no limit).
    time_limit: float | None = None
    #: A second judge asked the same prompts, its verdicts recorded and never scored.
    second_judge: AnyJudge | None = None
    _trace: str | None = field(default=None, init=False, repr=False)
    _inputs: dict[int, str] = field(default_factory=dict, init=False, repr=False)

    @property
    def case_name(self) -> str | None:
        return self.case.name if self.case is not None else None

    def dialect_for(self, default: str = "js") -> str:
        """The regex dialect: the one given, else the case's; ``default`` (the grader type's
        own) without either."""
        if self.dialect is not None:
            return self.dialect
        return self.case.regex_dialect if self.case is not None else default

    def pattern(self, source: str, flags: str = "", *, default_dialect: str = "js") -> Pattern:
        """Compile in the case's dialect.

        JavaScript's ``d`` flag (match indices) never changes what matches, so it is dropped
        before compiling: the embedded engine does not know it.
        """
        dialect = self.dialect_for(default_dialect)
        if dialect == "js" and "d" in flags and flags.count("d") == 1:
            flags = flags.replace("d", "")
        return compile_pattern(source, flags, dialect)

    def trace_text(self) -> str:
        """The trace, one compact JSON event per line, ``\\n``-joined (read once)."""
        if self._trace is None:
            from pytest_plugin_evals.graders.targets import trace_text

            self._trace = trace_text(self.transcript)
        return self._trace

    def input_text(self, index: int) -> str:
        """``JSON.stringify(input)`` of the tool call at ``index`` (computed once)."""
        text = self._inputs.get(index)
        if text is None:
            text = self._inputs[index] = js_json(self.transcript.tool_calls[index].input)
        return text


GraderFn = Callable[["GraderSpec", GradeContext], Outcome]


# -- searching large texts ------------------------------------------------------------------

_REGEX_SYNTAX = frozenset("\\^$.|?*+()[]{}")
_LITERAL_FLAGS = frozenset("dgmsu")


def literal_text(pattern: Pattern) -> str | None:
    """The text a JavaScript pattern stands for when it is a plain literal, else None.

    A pattern without regex syntax, under flags that cannot change what a literal matches,
    finds exactly what ``str.find`` finds: such patterns skip the engine round trip, which
    matters on a trace of tens of megabytes.
    """
    if not isinstance(pattern, JSPattern) or not pattern.source:
        return None
    if not set(pattern.flags) <= _LITERAL_FLAGS:
        return None
    source = pattern.source
    if any(c in _REGEX_SYNTAX or "\ud800" <= c <= "\udfff" for c in source):
        return None
    return source


def search(pattern: Pattern, text: str) -> bool:
    """``pattern.test(text)``, without the engine for plain literals."""
    literal = literal_text(pattern)
    return pattern.search(text) if literal is None else literal in text


def count(pattern: Pattern, text: str) -> int:
    """Matches of ``pattern`` with the ``g`` flag, without the engine for plain literals."""
    literal = literal_text(pattern)
    return pattern.count(text) if literal is None else text.count(literal)


# -- option readers ---------------------------------------------------------------------------


def required_str(config: dict[str, Any], key: str, kind: str) -> str:
    """A non-empty string option (numbers are taken as their text)."""
    value = config.get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = js_string(value)
    if not isinstance(value, str) or value == "":
        raise GraderConfigError(f'a {kind} grader needs a non-empty "{key}" (got {show(value)})')
    return value


def number(config: dict[str, Any], key: str, kind: str, default: float | None) -> float | None:
    """A numeric option, ``default`` when absent or null."""
    value = config.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GraderConfigError(f'a {kind} grader\'s "{key}" must be a number (got {show(value)})')
    return value
