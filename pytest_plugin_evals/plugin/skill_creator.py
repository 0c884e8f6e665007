"""``--eval-skill-creator-workspace DIR``: the session's runs written as the next iteration of a
skill-creator workspace (:mod:`pytest_plugin_evals.reporting.skill_creator_write`), by a
controller-only writer registered only when the option is given.

It runs in ``pytest_sessionfinish`` after the session has computed its result, as the other
writers do, and tells the session where the iteration is so the summary lists it. A workspace
that cannot be written is said once; it never changes the exit status.
"""

from __future__ import annotations

import pytest

from pytest_plugin_evals.plugin.session import EvalSession
from pytest_plugin_evals.recording import run_folder
from pytest_plugin_evals.reporting.skill_creator_write import workspace_files, write_workspace


class SkillCreatorWriter:
    """Writes the iteration folder from the session's result and its kept runs."""

    def __init__(self, session: EvalSession) -> None:
        self.session = session

    @pytest.hookimpl
    def pytest_sessionfinish(self) -> None:
        session, workspace = self.session, self.session.settings.skill_creator_workspace
        if session.result is None or session.results_dir is None or workspace is None:
            return
        runs = session.results_dir / "runs"
        files = workspace_files(
            session.result, lambda r: run_folder(runs, r.case, r.arm, r.run, r.agent)
        )
        if not files:
            return
        try:
            folder = write_workspace(workspace, files)
        except OSError as exc:
            if session.write_error is None:
                session.write_error = f"could not write the skill-creator workspace: {exc}"
            return
        session.paths.append(("skill-creator", folder))
