"""``--eval-reuse`` as the session says it: why a run was made although reuse was asked (the
note each such run keeps), and the summary's notices on what was reused and from where."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pytest_plugin_evals.engine.notices import INFO, WARNING, Notice
from pytest_plugin_evals.model import RunResult
from pytest_plugin_evals.reporting.earlier import Picked, Wanted, agent_kind, pick
from pytest_plugin_evals.reporting.result import SessionResult
from pytest_plugin_evals.reuse import LAST, PARTS, REUSABLE_ARMS, Miss, holds_stamps
from pytest_plugin_evals.stats.operating import top_up_warning

#: How many reasons for runs made although reuse was asked the summary lists.
SHOWN_REASONS = 6
#: The note of a run made although ``--eval-reuse`` was asked, before its reason.
NOT_REUSED = "--eval-reuse: made, not reused"


def miss_note(miss: Miss) -> str | None:
    """The note of a run made because of ``miss`` (none when it was never recorded)."""
    if miss.kind == "absent":
        return None
    if miss.kind == "changed":
        named = ", ".join(PARTS.get(p, p) for p in miss.detail.split(", "))
        return f"{NOT_REUSED}: changed since: {named}"
    if miss.kind == "old":
        return f"{NOT_REUSED}: older than --eval-reuse-max-age"
    if miss.kind == "unstamped":
        return f"{NOT_REUSED}: recorded without a fingerprint"
    if miss.kind == "failed":
        return f"{NOT_REUSED}: the recorded run was not made"
    return f"{NOT_REUSED}: {miss.detail}"


def same_kind(
    agent: str, agents: Sequence[tuple[str, str]], baseline: str | None, aa: bool
) -> Wanted:
    """The kind of session ``--eval-reuse last`` takes for a session of ``agent`` (or of
    ``agents``, ``(label, spec)``), against ``baseline`` (None: the without arm), A/A or not."""
    return Wanted(
        agent_kind=agent_kind(agent),
        agent_labels=tuple(sorted(label for label, _ in agents)),
        same_arms=True,
        baseline=baseline,
        aa=aa,
    )


def last_session(results_root: Path, own: Path, wanted: Wanted) -> Picked:
    """``--eval-reuse last``: the newest earlier session of this session's kind (its arms,
    its baseline, A/A or not, its agents; partial will do, a replay will not) that holds
    reusable runs, and the newer ones passed over with why."""
    same_kind = replace(wanted, same_arms=True, partial=True, replays=False, recorded_runs=False)
    return pick(results_root, own, same_kind, _reusable)


def _reusable(folder: Path) -> str | None:
    return None if holds_stamps(folder) else "it holds no reusable runs"


def last_line(picked: Picked, results_root: Path) -> str:
    """Which session ``--eval-reuse last`` took, or that none would do, and why newer ones
    were passed over."""
    folder = f"{results_root.name}/"
    said = (
        f"--eval-reuse last: no earlier session of this kind with reusable runs under "
        f"{results_root} — every run was made"
        if picked.document is None
        else f"--eval-reuse last: took {folder}{picked.document.parent.name}, the newest "
        "session of this kind with reusable runs"
    )
    passed = picked.passed_over_line(folder)
    return f"{said}; {passed}" if passed else said


def reuse_notices(
    result: SessionResult,
    reuse: str | None,
    suite_root: Path | None,
    own: Path | None,
    wanted: Wanted | None = None,
) -> list[Notice]:
    """How many runs of each reusable arm were reused and from where, what their agents cost
    when they were made, and why the others were made (none without ``--eval-reuse``); under
    ``last``, which session it took (``wanted``: this session's kind)."""
    if reuse is None:
        return []
    runs = [r.result for c in result.cases for r in c.runs]
    said: list[Notice] = []
    for arm in REUSABLE_ARMS:
        of_arm = [r for r in runs if r.arm == arm]
        if not of_arm:
            continue
        reused = [r for r in of_arm if r.reused_from is not None]
        if not reused:
            said.append(
                Notice(INFO, f"--eval-reuse: none of the {len(of_arm)} {arm}-arm run(s) reused")
            )
            continue
        sources = ", ".join(sorted({str(r.reused_from) for r in reused}))
        cost = sum(max(0.0, r.cost_usd - r.judge_cost_usd) for r in reused)
        said.append(
            Notice(
                INFO,
                f"--eval-reuse: {len(reused)} of {len(of_arm)} {arm}-arm run(s) reused from "
                f"{sources} (their agent cost, ${cost:.4f}, was spent when they were made)",
            )
        )
    if reuse == LAST and suite_root is not None and own is not None and wanted is not None:
        results_root = suite_root / "results"
        said.append(Notice(INFO, last_line(last_session(results_root, own, wanted), results_root)))
    return [*said, *top_up_notices(result), *_made_notices(runs)]


def top_up_notices(result: SessionResult) -> list[Notice]:
    """A warning per (reused, now) pair of run counts of the cases whose reused runs were
    topped up: reading a verdict again after more runs is another look (``stats.operating``
    says what it does to the error rate)."""
    pairs: Counter[tuple[int, int]] = Counter()
    for case in result.cases:
        for arm in REUSABLE_ARMS:
            of_arm = [r.result for r in case.runs if r.result.arm == arm]
            reused = sum(1 for r in of_arm if r.reused_from is not None)
            if 0 < reused < len(of_arm):
                pairs[(reused, len(of_arm))] += 1
                break
    return [
        Notice(WARNING, f"--eval-reuse: {top_up_warning(b, n, k)}")
        for (b, n), k in sorted(pairs.items())
    ]


def _made_notices(runs: list[RunResult]) -> list[Notice]:
    """Why runs were made although reuse was asked: the most common reasons, then the rest."""
    said: list[Notice] = []
    notes = Counter(
        n.removeprefix(f"{NOT_REUSED}: ") for r in runs for n in r.notes if n.startswith(NOT_REUSED)
    )
    common = notes.most_common()
    for reason, count in common[:SHOWN_REASONS]:
        said.append(Notice(WARNING, f"--eval-reuse: {count} run(s) made, not reused: {reason}"))
    if len(common) > SHOWN_REASONS:
        rest = sum(count for _, count in common[SHOWN_REASONS:])
        said.append(
            Notice(
                WARNING,
                f"--eval-reuse: {rest} more run(s) made, not reused, for other reasons (each "
                "run's notes in the JSON document say why)",
            )
        )
    return said
