"""``--eval-compare``'s earlier session as the core reads and says it
(``reporting.earlier``): a document that cannot be read is one line, and ``last`` says which
session it took. Called directly, no pytest session."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_plugin_evals.reporting.earlier import EarlierError, Picked, read_earlier
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
        "compare with",
        "passed over 1 newer results folder: 2026-01-02 (it is a replay)",
    ]
    took = Picked(root / "2026-01-01" / "aggregate-result.json", summary([]))
    assert took.notices("--eval-compare", root) == [
        "--eval-compare last: compared with 2026-01-01, the newest comparable session"
    ]
