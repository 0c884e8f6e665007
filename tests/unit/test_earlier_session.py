"""``--eval-compare``'s earlier session as the core reads and says it
(``reporting.earlier``): a document that cannot be read is one line, and ``last`` says which
session it took. Called directly, no pytest session."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_plugin_evals.model import BaselinePlugin
from pytest_plugin_evals.reporting.earlier import (
    EarlierError,
    Picked,
    Wanted,
    read_earlier,
    why_not,
)
from tests.helpers import summary


def test_a_missing_or_unreadable_document_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(EarlierError, match=r"^--eval-compare: no result document at .*missing"):
        read_earlier(tmp_path / "missing", "--eval-compare")
    (tmp_path / "aggregate-result.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(EarlierError) as caught:
        read_earlier(tmp_path, "ini eval_compare")
    assert str(caught.value).startswith(f"ini eval_compare: {tmp_path / 'aggregate-result.json'}")
    assert "\n" not in str(caught.value)


def test_last_says_which_session_it_took_and_what_it_passed_over(tmp_path: Path) -> None:
    root = tmp_path / "results"
    none = Picked(None, None)
    assert none.notices("--eval-compare", root) == [
        f"--eval-compare last: no earlier results folder under {root} — nothing to compare with"
    ]
    passed = Picked(None, None, (("2026-01-02", "it is a replay"),))
    assert passed.notices("--eval-compare", root) == [
        f"--eval-compare last: no earlier comparable session under {root} — nothing to "
        "compare with; passed over results/2026-01-02 (it is a replay)"
    ]
    took = Picked(root / "2026-01-01" / "aggregate-result.json", summary([]))
    assert took.notices("--eval-compare", root) == [
        "--eval-compare last: took results/2026-01-01, the newest comparable session"
    ]


def test_last_wants_the_same_arms_when_asked() -> None:
    """A with/without session and an A/B one are not compared; A/Bs only against one baseline."""
    doc: dict[str, object] = {"loadErrors": []}
    both = summary([])
    both = replace(both, suite=replace(both.suite, ablation="with-without"))
    ab = replace(
        both,
        suite=replace(
            both.suite,
            ablation="with-baseline",
            baseline_plugins=(BaselinePlugin("git:HEAD~1", "demo", "1.0.0", "."),),
        ),
    )
    plain = Wanted(same_arms=True)
    against = Wanted(same_arms=True, baseline="git:HEAD~1")
    assert why_not(doc, both, plain) is None
    assert why_not(doc, ab, plain) == "an A/B session against git:HEAD~1"
    assert why_not(doc, ab, against) is None
    assert why_not(doc, both, against) == "a with/without session"
    assert why_not(doc, ab, Wanted(same_arms=True, baseline="git:main")) == (
        "an A/B session against git:HEAD~1"
    )
    assert why_not(doc, ab, Wanted()) is None  # replay:last and --eval-plan: any arms
