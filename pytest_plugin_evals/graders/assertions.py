"""The graders as assertion helpers for ordinary Python tests.

Each helper takes a :class:`~pytest_plugin_evals.model.Transcript` (or a plain string, taken as
the final message) and returns a :class:`~pytest_plugin_evals.model.Verdict`, which is truthy
when it passed::

    verdict = regex(transcript, r"1\\.4\\.1")
    assert verdict                      # or: expect(verdict), which explains the failure

    checks = SoftChecks()
    checks.check(contains(answer, "changelog"))
    checks.check(tool_used(transcript, "Skill", min=1))
    checks.assert_all()                 # one failure listing every failed check

A verdict that did not judge (a judge grader with no judge) is not a pass: ``expect`` and
``SoftChecks.assert_all`` report it as a failure.
"""

from __future__ import annotations

from typing import Any

from pytest_plugin_evals.graders.base import GradeContext
from pytest_plugin_evals.graders.dispatch import grade_in
from pytest_plugin_evals.model import GraderSpec, Transcript, Verdict

Subject = Transcript | str


class GradeFailure(AssertionError):
    """Raised by :func:`expect` and :meth:`SoftChecks.assert_all`: one line per failed verdict."""

    def __init__(self, *verdicts: Verdict) -> None:
        self.verdicts = list(verdicts)
        super().__init__("\n".join(f"{v.name}: {v.explanation}" for v in verdicts))


def _run(
    kind: str, name: str | None, subject: Subject, config: dict[str, Any], dialect: str = "js"
) -> Verdict:
    transcript = Transcript(final_message=subject) if isinstance(subject, str) else subject
    spec = GraderSpec(name=name or kind, type=kind, config=config)
    return grade_in(spec, GradeContext(transcript, dialect=dialect))


def regex(
    subject: Subject,
    pattern: str,
    *,
    flags: str = "",
    match: str | int = "contains",
    target: str | dict[str, str] = "last_message",
    dialect: str = "js",
    name: str | None = None,
) -> Verdict:
    """The pattern is found in the target (``match="not_contains"``: absent; an int N or
    ``"count:N"``: found exactly N times). ``dialect="python"`` for Python patterns."""
    if isinstance(match, int):
        match = f"count:{match}"
    config = {"pattern": pattern, "flags": flags, "match": match, "target": target}
    return _run("regex", name or f"regex /{pattern}/{flags}", subject, config, dialect)


def tool_used(
    subject: Subject,
    tool: str,
    *,
    input_match: str | None = None,
    min: int = 1,
    max: int | None = None,
    name: str | None = None,
) -> Verdict:
    """``tool`` was called between ``min`` and ``max`` times (inputs matching ``input_match``)."""
    config = {"tool": tool, "input_match": input_match, "min": min, "max": max}
    return _run("tool_used", name, subject, config)


def tool_order(
    subject: Subject,
    before: str | dict[str, str],
    after: str | dict[str, str],
    *,
    name: str | None = None,
) -> Verdict:
    """The first call matching ``before`` precedes the first matching ``after``."""
    return _run("tool_order", name, subject, {"before": before, "after": after})


def file_exists(
    subject: Subject, path: str, *, exists: bool = True, name: str | None = None
) -> Verdict:
    """A file created during the run matches the glob ``path`` (none does with ``exists=False``)."""
    return _run("file_exists", name, subject, {"path": path, "exists": exists})


def contains(subject: Subject, text: str, *, name: str | None = None) -> Verdict:
    """The final message contains ``text`` (case-sensitive)."""
    return _run("contains", name, subject, {"value": text})


def not_contains(subject: Subject, text: str, *, name: str | None = None) -> Verdict:
    """The final message does not contain ``text`` (case-sensitive)."""
    return _run("not_contains", name, subject, {"value": text})


def includes(subject: Subject, text: str, *, name: str | None = None) -> Verdict:
    """The final message contains ``text``, ignoring case."""
    return _run("includes", name, subject, {"value": text})


def matches(subject: Subject, pattern: str, *, name: str | None = None) -> Verdict:
    """The final message matches a JavaScript pattern."""
    return _run("matches", name, subject, {"pattern": pattern})


def min_chars(subject: Subject, n: int, *, name: str | None = None) -> Verdict:
    """The final message has at least ``n`` characters."""
    return _run("min_chars", name, subject, {"min": n})


def max_tokens(subject: Subject, n: int, *, name: str | None = None) -> Verdict:
    """The reply used at most ``n`` tokens (skipped when the agent reported none)."""
    return _run("max_tokens", name, subject, {"max": n})


def max_latency_ms(subject: Subject, ms: float, *, name: str | None = None) -> Verdict:
    """The answer came within ``ms`` milliseconds."""
    return _run("max_latency_ms", name, subject, {"max": ms})


def tool_succeeded(subject: Subject, tool: str, *, name: str | None = None) -> Verdict:
    """``tool`` was called and none of its calls failed."""
    return _run("expect_tool_success", name or "tool_succeeded", subject, {"tool": tool})


def calls_tool(
    subject: Subject, tool: str, arguments: Any = None, *, name: str | None = None
) -> Verdict:
    """A call of ``tool`` has arguments satisfying the matcher tree ``arguments``."""
    return _run("callsTool", name or "calls_tool", subject, {"name": tool, "arguments": arguments})


def expect(verdict: Verdict) -> Verdict:
    """Return the verdict if it passed; raise :class:`GradeFailure` with its explanation if not."""
    __tracebackhide__ = True
    if verdict.passed is not True:
        raise GradeFailure(verdict)
    return verdict


class SoftChecks:
    """Collect verdicts and fail once, at the end, listing every failed one."""

    def __init__(self) -> None:
        self.verdicts: list[Verdict] = []

    def check(self, verdict: Verdict) -> Verdict:
        """Record a verdict and return it."""
        self.verdicts.append(verdict)
        return verdict

    @property
    def failures(self) -> list[Verdict]:
        """The recorded verdicts that did not pass."""
        return [v for v in self.verdicts if v.passed is not True]

    def failed_too(self) -> str | None:
        """What a test that failed on its own adds to its error: the checks that failed before
        (None when none did)."""
        failed = self.failures
        if not failed:
            return None
        listed = "\n".join(f"{v.name}: {v.explanation}" for v in failed)
        return f"and {len(failed)} soft check(s) failed:\n{listed}"

    def assert_all(self) -> None:
        """Raise one :class:`GradeFailure` naming every failed verdict, one per line."""
        __tracebackhide__ = True
        failed = self.failures
        if failed:
            raise GradeFailure(*failed)
