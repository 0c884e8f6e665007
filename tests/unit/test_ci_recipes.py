"""The CI recipes under examples/ci use options that exist, cover every shard, and hand the
merge command the folders the shard jobs keep."""

from __future__ import annotations

import re
import shlex
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_plugin_evals.__main__ import build_parser
from pytest_plugin_evals.plugin.keys import settings_key
from pytest_plugin_evals.settings.options import OPTIONS
from pytest_plugin_evals.settings.parsers import SHARD_VARIABLES
from pytest_plugin_evals.shards import Shard

RECIPES = Path(__file__).resolve().parents[2] / "examples" / "ci"
FLAGS = {option.flag for option in OPTIONS}


def load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((RECIPES / name).read_text(encoding="utf-8"))
    return doc


def commands(job: dict[str, Any]) -> list[str]:
    """Every shell command of a job (GitHub ``steps[].run``, GitLab ``script``)."""
    found = [step["run"] for step in job.get("steps", []) if "run" in step]
    found += job.get("script", [])
    # ``${{ matrix.shard }}`` as one word: ``${{matrix.shard}}``.
    return [re.sub(r"\$\{\{\s*(.*?)\s*\}\}", r"${{\1}}", " ".join(str(c).split())) for c in found]


def command(job: dict[str, Any], program: str) -> list[str]:
    """The arguments of the one command of ``job`` that runs ``program``."""
    (found,) = [c for c in commands(job) if re.search(rf"(^|\s){re.escape(program)}\s", c)]
    words = shlex.split(found)
    return words[words.index(program.split()[-1]) + 1 :]


def option(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def eval_flags(text: str) -> set[str]:
    return set(re.findall(r"--eval-[a-z-]+", text))


@pytest.mark.parametrize("name", ["github-actions.yml", "gitlab-ci.yml"])
def test_every_eval_option_in_a_recipe_exists(name: str) -> None:
    used = eval_flags((RECIPES / name).read_text(encoding="utf-8"))
    assert "--eval-shard" in used
    assert used <= FLAGS, used - FLAGS


def configured(pytester: pytest.Pytester, args: list[str]) -> Any:
    """The settings pytest reads from a recipe's pytest arguments (bad values raise)."""
    (pytester.path / "evals").mkdir(exist_ok=True)
    return pytester.parseconfigure(*args).stash[settings_key]


def test_the_github_matrix_covers_every_shard_and_the_merge_gets_them_all(
    pytester: pytest.Pytester,
) -> None:
    jobs = load("github-actions.yml")["jobs"]
    shards = jobs["evals"]["strategy"]["matrix"]["shard"]
    total = len(shards)
    assert shards == list(range(1, total + 1))
    args = command(jobs["evals"], "pytest")
    assert option(args, "--eval-shard") == f"${{{{matrix.shard}}}}/{total}"
    # The first and the last shard through pytest's own parsing (each a configuration of
    # seconds of CPU); the others are the same template with another number.
    for k in sorted({shards[0], shards[-1]}):
        given = [a.replace("${{matrix.shard}}", str(k)) for a in args]
        settings = configured(pytester, given)
        assert settings.shard == Shard(k, total)
    output = option(args, "--eval-output-dir")
    upload = next(s for s in jobs["evals"]["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == output
    assert upload["if"] == "${{ !cancelled() }}"

    merge = jobs["merge"]
    assert merge["needs"] == "evals"
    assert merge["if"] == "${{ !cancelled() }}"  # a failed shard still gets its merge
    download = next(s for s in merge["steps"] if "download-artifact" in s.get("uses", ""))
    names = [upload["with"]["name"].replace("${{ matrix.shard }}", str(k)) for k in shards]
    assert len(set(names)) == total
    assert all(fnmatch(name, download["with"]["pattern"]) for name in names)
    folders = [f"{download['with']['path']}/{name}" for name in names]  # one folder each
    parsed = merge_arguments(merge)
    assert all(any(fnmatch(f, pattern) for pattern in parsed.folders) for f in folders)
    assert parsed.threshold == float(option(args, "--eval-threshold"))
    report = next(
        s
        for s in merge["steps"]
        if "upload-artifact" in s.get("uses", "") and s["with"]["path"] == parsed.output_dir
    )
    assert report["if"] == "${{ !cancelled() }}"  # the report is published when the gate fails


def merge_arguments(job: dict[str, Any]) -> Any:
    """The merge command's arguments, as the merge command line parses them."""
    args = command(job, "python -m pytest_plugin_evals")
    assert args[0] == "merge"
    return build_parser().parse_args(args)


def test_the_gitlab_jobs_cover_every_shard_and_the_merge_gets_them_all(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = load("gitlab-ci.yml")
    evals, merge = doc["evals"], doc["merge-evals"]
    assert doc["stages"].index(evals["stage"]) < doc["stages"].index(merge["stage"])
    total = evals["parallel"]
    args = command(evals, "pytest")
    for index, count, _ in SHARD_VARIABLES:
        monkeypatch.delenv(index, raising=False)
        monkeypatch.delenv(count, raising=False)
    folders = []
    for k in range(1, total + 1):  # what GitLab sets in each of the parallel jobs
        monkeypatch.setenv("CI_NODE_INDEX", str(k))
        monkeypatch.setenv("CI_NODE_TOTAL", str(total))
        given = [a.replace("$CI_NODE_INDEX", str(k)) for a in args]
        if k in (1, total):  # pytest's own parsing for the first and the last job
            assert configured(pytester, given).shard == Shard(k, total)
        folders.append(option(given, "--eval-output-dir"))
    assert len(set(folders)) == total  # one folder per shard
    kept = evals["artifacts"]
    assert kept["when"] == "always"
    assert all(any(f.startswith(p.rstrip("/") + "/") for p in kept["paths"]) for f in folders)

    assert merge["needs"] == ["evals"]
    assert merge["when"] == "always"  # a failed shard still gets its merge
    parsed = merge_arguments(merge)
    assert all(any(fnmatch(f, pattern) for pattern in parsed.folders) for f in folders)
    assert parsed.threshold == float(option(args, "--eval-threshold"))
    assert f"{parsed.output_dir}/" in merge["artifacts"]["paths"]
    assert merge["artifacts"]["when"] == "always"


@pytest.mark.parametrize("name", ["github-actions.yml", "gitlab-ci.yml", "github-pr-comment.yml"])
def test_the_ci_page_shows_the_recipes_as_they_are(name: str) -> None:
    page = (RECIPES.parents[1] / "docs" / "how-to" / "ci.md").read_text(encoding="utf-8")
    assert f"```yaml\n{(RECIPES / name).read_text(encoding='utf-8')}```" in page


def test_the_pull_request_recipe_comments_the_summary_its_session_writes(
    pytester: pytest.Pytester,
) -> None:
    """The comment step posts the file ``--eval-markdown`` names and finds its own comment by
    the summary's marker (its jq filter run on comments as GitHub's API lists them); the token
    may write pull requests and nothing more; a fork's pull request is left to the job's
    summary."""
    import json
    import shutil
    import subprocess

    from pytest_plugin_evals.reporting.markdown import MARKER

    doc = load("github-pr-comment.yml")
    assert doc["permissions"] == {"contents": "read", "pull-requests": "write"}
    (job,) = doc["jobs"].values()
    assert eval_flags(yaml.safe_dump(doc)) <= FLAGS
    args = command(job, "pytest")
    url = "https://github.com/o/r/actions/runs/7"
    settings = configured(pytester, [a.replace("${{github.server_url}}/${{github.repository}}"
                                               "/actions/runs/${{github.run_id}}", url)
                                     for a in args])  # fmt: skip
    assert settings.step_summary and settings.report_url == url
    assert settings.markdown_path is not None
    (post,) = [s for s in job["steps"] if "gh api" in s.get("run", "")]
    assert f"body=@{settings.markdown_path.name}" in post["run"]
    assert "head.repo.full_name == github.repository" in post["if"]
    program = re.search(r"--jq '(.*?)'", post["run"], re.DOTALL)
    assert program is not None and MARKER in program[1]
    if shutil.which("jq") is None:
        pytest.skip("no jq to run the comment step's filter")
    listed = [
        {"id": 1, "user": {"login": "someone"}, "body": MARKER + "\ncopied"},
        {"id": 2, "user": {"login": "github-actions[bot]"}, "body": "another bot comment"},
        {"id": 3, "user": {"login": "github-actions[bot]"}, "body": MARKER + "\r\n## Plugin"},
    ]
    found = subprocess.run(
        ["jq", program[1]], input=json.dumps(listed), capture_output=True, text=True, check=True
    )
    assert found.stdout.split() == ["3"]
