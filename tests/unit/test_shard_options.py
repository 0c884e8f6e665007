"""``--eval-shard`` and ``--eval-shard-durations`` read by the core (``settings.options``):
``K/N``, ``auto`` from a CI's parallel-job variables, and the one line a bad value gives. That
such a line is pytest's usage error: ``tests/unit/test_options_declared.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_plugin_evals.settings import EvalSettings
from pytest_plugin_evals.settings.options import OPTIONS, settings_from
from pytest_plugin_evals.settings.parsers import SHARD_VARIABLES, Given, Whole
from pytest_plugin_evals.shards import Shard

BY_FLAG = {o.flag: o for o in OPTIONS}


def read(folder: Path, flags: dict[str, str], ini: dict[str, str] | None = None) -> EvalSettings:
    """The settings of these options given on the command line and in the ini file."""
    given = {BY_FLAG[f].key: Given(v, f, True, folder, folder) for f, v in flags.items()}
    for flag, value in (ini or {}).items():
        option = BY_FLAG[flag]
        given[option.key] = Given(value, f"ini {option.ini}", False, folder, folder)
    return settings_from(given)


@pytest.fixture
def no_ci(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No CI's parallel-job variable set."""
    for index, total, _ in SHARD_VARIABLES:
        monkeypatch.delenv(index, raising=False)
        monkeypatch.delenv(total, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("variables", "shard"),
    [
        ({"CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "2"}, Shard(2, 2)),  # GitLab counts from 1
        ({"BUILDKITE_PARALLEL_JOB": "0", "BUILDKITE_PARALLEL_JOB_COUNT": "3"}, Shard(1, 3)),
        ({"CIRCLE_NODE_INDEX": "2", "CIRCLE_NODE_TOTAL": "3"}, Shard(3, 3)),
        ({"CIRCLE_NODE_INDEX": "2"}, None),  # half a pair names no shard
        ({}, None),  # not a parallel job: the whole suite
    ],
)
def test_auto_reads_the_ci_variables(
    tmp_path: Path, no_ci: pytest.MonkeyPatch, variables: dict[str, str], shard: Shard | None
) -> None:
    """``auto`` (from the ini file or the command line) is the shard the first CI's variables
    name, counted from 0 or 1 as that CI does; none set: no shard."""
    for name, value in variables.items():
        no_ci.setenv(name, value)
    assert read(tmp_path, {}, ini={"--eval-shard": "auto"}).shard == shard
    assert read(tmp_path, {"--eval-shard": "AUTO"}).shard == shard


def test_k_of_n_is_the_shard(tmp_path: Path, no_ci: pytest.MonkeyPatch) -> None:
    no_ci.setenv("CI_NODE_INDEX", "1")  # given K/N, the variables are not read
    no_ci.setenv("CI_NODE_TOTAL", "2")
    assert read(tmp_path, {"--eval-shard": "2/3"}).shard == Shard(2, 3)
    assert read(tmp_path, {}, ini={"--eval-shard": " 3 / 3 "}).shard == Shard(3, 3)
    assert read(tmp_path, {}).shard is None


@pytest.mark.parametrize(
    ("flags", "ini", "line"),
    [
        ({"--eval-shard": "4/3"}, {},
         "--eval-shard must be K/N with 1 <= K <= N, such as 2/3 (got '4/3') or auto"),
        ({}, {"--eval-shard": "half"},
         "ini eval_shard must be K/N with 1 <= K <= N, such as 2/3 (got 'half') or auto"),
        ({"--eval-shard": "1/2", "--eval-shard-durations": "nowhere"}, {},
         "--eval-shard-durations: no recorded runs in {tmp}/nowhere (expected a results "
         "folder holding runs/)"),
    ],
)  # fmt: skip
def test_a_bad_shard_option_is_one_line(
    tmp_path: Path, no_ci: pytest.MonkeyPatch, flags: dict[str, str], ini: dict[str, str], line: str
) -> None:
    with pytest.raises(Whole) as raised:
        read(tmp_path, flags, ini)
    assert str(raised.value) == line.format(tmp=tmp_path)


def test_auto_with_variables_that_name_no_shard_is_one_line(
    tmp_path: Path, no_ci: pytest.MonkeyPatch
) -> None:
    no_ci.setenv("CI_NODE_INDEX", "5")
    no_ci.setenv("CI_NODE_TOTAL", "3")
    with pytest.raises(Whole) as raised:
        read(tmp_path, {"--eval-shard": "auto"})
    assert str(raised.value) == (
        "--eval-shard auto: the CI variables do not name a shard (CI_NODE_INDEX=5, CI_NODE_TOTAL=3)"
    )


def test_the_durations_folder_is_a_results_folder(tmp_path: Path) -> None:
    (tmp_path / "earlier" / "runs").mkdir(parents=True)
    settings = read(tmp_path, {"--eval-shard": "1/2", "--eval-shard-durations": "earlier"})
    assert settings.shard_durations == tmp_path / "earlier"
