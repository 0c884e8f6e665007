"""``--eval-compare``: the earlier session this one is compared with.

It is found and read once collection is done and eval items are to run, before any run: a
document that is missing or unreadable is one usage error. ``last`` is the newest results
folder under ``<evals folder>/results/`` that holds a result document, never this session's
own. Under pytest-xdist only the workers collect: each writes its suite root to the session's
shared folder, and the controller reads it when the first worker's collection arrives.

At the end the session compares its result with the earlier one
(:func:`pytest_plugin_evals.reporting.compare.compare`).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_plugin_evals.plugin.keys import shared_key, stamp_key
from pytest_plugin_evals.plugin.loaded import eval_items
from pytest_plugin_evals.plugin.settings import EvalSettings, common_suite_root, results_dir

if TYPE_CHECKING:
    from pytest_plugin_evals.reporting.result import SessionResult

#: config: the earlier session ``--eval-compare`` names (read on the controller).
earlier_key: pytest.StashKey[EarlierSession] = pytest.StashKey()
#: The result document in a results folder.
RESULT_FILE = "aggregate-result.json"
#: The suite root a worker collected, in the session's shared folder (under pytest-xdist).
ROOT_FILE = "compare-suite-root.txt"
#: The ``--eval-compare`` value that names the newest earlier results folder.
LAST = "last"


def newest_earlier(results_root: Path, own: Path) -> Path | None:
    """The result document of the newest results folder under ``results_root`` (the one
    whose document was written last), other than ``own``; None when there is none."""
    try:
        folders = list(results_root.iterdir())
    except OSError:
        return None
    own_resolved = own.resolve()
    found: list[tuple[int, str, Path]] = []
    for folder in folders:
        document = folder / RESULT_FILE
        try:
            if folder.resolve() == own_resolved or not document.is_file():
                continue
            found.append((document.stat().st_mtime_ns, folder.name, document))
        except OSError:
            continue
    return max(found)[2] if found else None


def read_earlier(given: Path, where: str) -> tuple[Path, SessionResult]:
    """The result document ``given`` names (a results folder or its document), read; a
    :class:`pytest.UsageError` of one line when it is missing or unreadable, or holds what a
    result document does not (the field's JSON path said)."""
    from pytest_plugin_evals.reporting.document import DocumentError, read_document

    document = given / RESULT_FILE if given.is_dir() else given
    if not document.is_file():
        raise pytest.UsageError(
            f"{where}: no result document at {given} (expected a results folder holding "
            f"{RESULT_FILE}, or that file)"
        )
    try:
        text = document.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise pytest.UsageError(f"{where}: cannot read {document}: {exc}") from None
    try:
        return document, read_document(text)
    except DocumentError as exc:
        raise pytest.UsageError(f"{where}: {document}: {exc}") from None
    except (ValueError, TypeError, AttributeError, KeyError, ArithmeticError, RecursionError):
        raise pytest.UsageError(
            f"{where}: {document}: not a result document this version can read"
        ) from None


class EarlierSession:
    """Finds and reads the earlier session (registered in every process under
    ``--eval-compare``; only the controller reads, a worker tells it its suite root)."""

    def __init__(self, config: pytest.Config, settings: EvalSettings) -> None:
        self.config = config
        self.settings = settings
        #: The earlier session's document, and its result, once read.
        self.document: Path | None = None
        self.before: SessionResult | None = None
        #: Said in the summary when ``last`` found nothing to compare with.
        self.notice: str | None = None
        self.looked = False

    @property
    def where(self) -> str:
        cli = self.config.getoption("eval_compare", None)
        return "--eval-compare" if cli is not None else "ini eval_compare"

    @pytest.hookimpl(tryfirst=True)  # a worker writes its root before xdist reports its items
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        option = self.config.option
        if getattr(option, "collectonly", False) or getattr(option, "setupplan", False):
            return
        roots = [i.case.suite_root for i in eval_items(session.items)]
        root = common_suite_root(roots)
        if root is None:
            return
        if not hasattr(self.config, "workerinput"):
            self.look(root)
            return
        target = self.config.stash[shared_key] / ROOT_FILE
        draft = target.with_name(f"{target.name}.{os.getpid()}")
        draft.write_text(str(root), encoding="utf-8")
        os.replace(draft, target)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """On the xdist controller: the first worker's collection names the suite root."""
        if self.looked:
            return
        try:
            root = (self.config.stash[shared_key] / ROOT_FILE).read_text(encoding="utf-8")
        except FileNotFoundError:
            return  # that worker collected no eval item
        self.look(Path(root))

    def look(self, suite_root: Path) -> None:
        """Find and read the earlier session (once)."""
        if self.looked:
            return
        self.looked = True
        compare = self.settings.compare
        if compare is None:
            return
        if compare != LAST:
            self.document, self.before = read_earlier(Path(compare), self.where)
            return
        own = results_dir(self.settings, suite_root, self.config.stash[stamp_key])
        found = newest_earlier(suite_root / "results", own)
        if found is None:
            self.notice = (
                f"{self.where} last: no earlier results folder under {suite_root / 'results'}"
                " — nothing to compare with"
            )
            return
        self.document, self.before = read_earlier(found, self.where)

    def compared(self, result: SessionResult) -> SessionResult:
        """``result`` with its comparison with the earlier session (when one was read)."""
        if self.before is None or self.document is None:
            return result
        from pytest_plugin_evals.reporting.compare import compare

        comparison = compare(self.before, result, str(self.document), self.settings.margin)
        return replace(result, comparison=comparison)
