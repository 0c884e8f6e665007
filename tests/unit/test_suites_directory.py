"""The directory format: prompt.md, case.yaml, their merge, defaults and load errors."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pytest_plugin_evals.model import LoadError
from pytest_plugin_evals.suites import directory
from tests.helpers import write_tree

GRADER = "---\ntype: regex\n---\nparis\n"


def case(tmp_path: Path, files: dict[str, str], name: str = "my-case") -> Path:
    folder = tmp_path / "evals" / name
    write_tree(folder, {"graders/answer.md": GRADER, **files})
    return folder


def load(folder: Path):
    return directory.load_case(folder, folder.parent)


def error(folder: Path) -> LoadError:
    with pytest.raises(LoadError) as info:
        load(folder)
    return info.value


# -- prompt.md ---------------------------------------------------------------------------------


def test_prompt_only_case_gets_every_default(tmp_path: Path) -> None:
    folder = case(tmp_path, {"prompt.md": "\n  What is the capital of France?  \n\n"})
    loaded = load(folder)
    assert loaded.name == "my-case"
    assert loaded.prompt == "What is the capital of France?"
    assert loaded.source == "prose"
    assert loaded.path == folder / "prompt.md"
    assert loaded.dir == folder
    assert loaded.suite_root == folder.parent
    assert (loaded.runs, loaded.max_turns, loaded.timeout_seconds) == (3, 10, 300)
    assert loaded.tags == () and loaded.allowed_tools == () and loaded.disallowed_tools == ()
    assert loaded.env == {} and loaded.plugins == () and loaded.model is None
    assert loaded.description is None and loaded.append_system_prompt is None
    assert loaded.scaffold_script is None and loaded.history_file is None and loaded.add_dirs == ()
    assert loaded.regex_dialect == "js" and loaded.extra == {}
    assert [g.name for g in loaded.graders] == ["answer"]


def test_prompt_frontmatter_fields(tmp_path: Path) -> None:
    folder = case(
        tmp_path,
        {
            "prompt.md": (
                "---\n"
                "name: renamed\n"
                "description: for humans\n"
                "tags: [smoke, main]\n"
                "runs: 50\n"
                "model: sonnet\n"
                "max_turns: 200\n"
                "timeout_seconds: 3600\n"
                "allowed_tools: [Read, Skill]\n"
                "disallowed_tools: [Grep]\n"
                "env: {EVAL_MODE: fast}\n"
                'plugins: ["../.."]\n'
                'schema_version: "1.1"\n'
                "expected_outcome: pass\n"
                "append_system_prompt: be brief\n"
                "artifact_publish: false\n"
                "growthbook_overrides: {flag: true}\n"
                "---\n"
                "Do it.\n"
            )
        },
    )
    loaded = load(folder)
    assert loaded.name == "renamed"
    assert loaded.description == "for humans"
    assert loaded.tags == ("smoke", "main")
    assert (loaded.runs, loaded.max_turns, loaded.timeout_seconds) == (50, 200, 3600)
    assert loaded.model == "sonnet"
    assert loaded.allowed_tools == ("Read", "Skill")
    assert loaded.disallowed_tools == ("Grep",)
    assert loaded.env == {"EVAL_MODE": "fast"}
    assert loaded.plugins == ("../..",)
    assert loaded.append_system_prompt == "be brief"
    assert loaded.extra == {
        "schema_version": "1.1",
        "expected_outcome": "pass",
        "artifact_publish": False,
        "growthbook_overrides": {"flag": True},
    }
    assert loaded.prompt == "Do it."


def test_unknown_frontmatter_key_names_the_key_and_line(tmp_path: Path) -> None:
    folder = case(tmp_path, {"prompt.md": "---\nruns: 1\nretries: 2\n---\nHi\n"})
    err = error(folder)
    assert err.path == folder / "prompt.md"
    assert err.line == 3
    assert err.message == (
        'unknown frontmatter key "retries" (expected one of: schema_version, name, description, '
        "tags, plugins, runs, expected_outcome, model, max_turns, timeout_seconds, allowed_tools, "
        "disallowed_tools, artifact_publish, growthbook_overrides, append_system_prompt, env)"
    )


def test_unknown_key_suggests_the_nearest_known_one(tmp_path: Path) -> None:
    folder = case(
        tmp_path,
        {
            "prompt.md": "---\nmax_turn: 3\n---\nHi\n",
            "case.yaml": 'schema_version: "1.1"\nname: c\nexecution:\n  timeout: 30\n',
        },
    )
    shown = error(folder).render(folder.parent).splitlines()
    assert shown[0].startswith(
        'my-case/case.yaml:4: unknown key "execution.timeout" — did you mean timeout_seconds? '
        "(expected one of: prompt, model,"
    )
    assert shown[1].startswith(
        'my-case/prompt.md:2: unknown frontmatter key "max_turn" — did you mean max_turns? '
        "(expected one of: schema_version,"
    )


def test_bad_yaml_frontmatter(tmp_path: Path) -> None:
    folder = case(tmp_path, {"prompt.md": "---\nruns: 1\ntags: [a\n---\nHi\n"})
    err = error(folder)
    assert err.message.startswith("invalid YAML frontmatter: ")
    assert err.line is not None and err.line >= 3
    assert "Traceback" not in str(err)


def test_yaml_error_line_points_into_the_file(tmp_path: Path) -> None:
    folder = case(tmp_path, {"prompt.md": "---\nruns: 1\nname: a: b\n---\nHi\n"})
    err = error(folder)
    assert err.message == "invalid YAML frontmatter: mapping values are not allowed in this context"
    assert err.line == 3


def test_duplicate_frontmatter_key(tmp_path: Path) -> None:
    folder = case(tmp_path, {"prompt.md": "---\nruns: 1\nruns: 2\n---\nHi\n"})
    err = error(folder)
    assert err.message == 'invalid YAML frontmatter: duplicate key "runs"'
    assert err.line == 3


def test_unterminated_frontmatter(tmp_path: Path) -> None:
    folder = case(tmp_path, {"prompt.md": "---\nruns: 1\nHi\n"})
    err = error(folder)
    assert err.message == 'unterminated frontmatter (opening "---" with no closing "---")'
    assert err.line == 1


def test_frontmatter_must_be_a_mapping(tmp_path: Path) -> None:
    folder = case(tmp_path, {"prompt.md": "---\n- a\n---\nHi\n"})
    assert error(folder).message == "frontmatter must be a YAML mapping (got a list)"


@pytest.mark.parametrize("text", ["", "---\nruns: 1\n---\n", "---\nruns: 1\n---\n   \n\n"])
def test_missing_prompt(tmp_path: Path, text: str) -> None:
    folder = case(tmp_path, {"prompt.md": text})
    err = error(folder)
    assert err.message == (
        "execution.prompt is required (a prompt.md body, or execution.prompt in case.yaml)"
    )
    assert err.path == folder / "prompt.md"


def test_blank_init_template(tmp_path: Path) -> None:
    body = "---\nruns: 1\n---\n\nTODO: describe what the agent should do\n"
    err = error(case(tmp_path, {"prompt.md": body}))
    assert err.message.startswith("the prompt is still the blank `init` template")
    assert '"TODO: describe what the agent should do"' in err.message
    assert err.line == 5


def test_blank_init_template_in_case_yaml(tmp_path: Path) -> None:
    folder = tmp_path / "evals" / "c"
    text = CASE_YAML.replace("    Fix the bug.", "    TODO: describe what the agent should do")
    write_tree(folder, {"case.yaml": text, "prompt.md": "---\nruns: 1\n---\n"})
    err = error(folder)
    assert err.message.startswith("the prompt is still the blank `init` template")
    assert err.path == folder / "case.yaml"
    assert err.line == 12


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("runs: 0", "runs must be a whole number from 1 to 50 (got 0)"),
        ("runs: 51", "runs must be a whole number from 1 to 50 (got 51)"),
        ("runs: 2.5", "runs must be a whole number from 1 to 50 (got 2.5)"),
        ("runs: true", "runs must be a whole number from 1 to 50 (got true)"),
        ("runs: three", 'runs must be a whole number from 1 to 50 (got "three")'),
        ("max_turns: 201", "max_turns must be a whole number from 1 to 200 (got 201)"),
        ("max_turns: 0", "max_turns must be a whole number from 1 to 200 (got 0)"),
        ("timeout_seconds: 3601", "timeout_seconds must be a number from 1 to 3600 (got 3601)"),
        ("timeout_seconds: 0", "timeout_seconds must be a number from 1 to 3600 (got 0)"),
        ("tags: smoke", "tags must be a list of strings (got a string)"),
        ("tags: [1]", "tags must be a list of strings (got a list holding a number)"),
        ("allowed_tools: Read", "allowed_tools must be a list of strings (got a string)"),
        ("name: ''", "name must not be empty"),
        ("description: [a]", "description must be a string (got a list)"),
        ("model: 3", "model must be a string (got a number)"),
        ("env: [EVAL_A]", "env must be a mapping (got a list)"),
        (
            "env: {FOO: bar}",
            'env key "FOO" is not allowed: only EVAL_* keys (matching ^EVAL_[A-Z0-9_]*$) '
            "can be set from a case",
        ),
        ("env: {eval_x: bar}", 'env key "eval_x" is not allowed'),
        ("env: {EVAL_X: 1}", "env.EVAL_X must be a string (got a number)"),
        ("schema_version: 1.1", 'schema_version must be a quoted string such as "1.1" (got a'),
        ("schema_version: '2.0'", 'schema_version "2.0" requires a newer pytest-plugin-evals'),
    ],
)
def test_frontmatter_value_errors(tmp_path: Path, line: str, message: str) -> None:
    folder = case(tmp_path, {"prompt.md": f"---\nexpected_outcome: x\n{line}\n---\nHi\n"})
    err = error(folder)
    assert err.message.startswith(message)
    assert err.line == 3
    assert err.path == folder / "prompt.md"


def test_timeout_accepts_fractions(tmp_path: Path) -> None:
    loaded = load(case(tmp_path, {"prompt.md": "---\ntimeout_seconds: 1.5\n---\nHi\n"}))
    assert loaded.timeout_seconds == 1.5


def test_no_frontmatter_is_all_body(tmp_path: Path) -> None:
    loaded = load(case(tmp_path, {"prompt.md": "Plain prompt\n---\nwith a rule\n"}))
    assert loaded.prompt == "Plain prompt\n---\nwith a rule"


# -- case.yaml ---------------------------------------------------------------------------------

CASE_YAML = """\
schema_version: "1.1"
name: from-yaml
description: a yaml case
tags: [yaml]
runs: 2
expected_outcome: pass
context:
  scaffold_script: setup.sh
  history_file: history.jsonl
  add_dirs: [fixtures, more/data]
execution:
  prompt: |
    Fix the bug.
  max_turns: 20
  timeout_seconds: 60
  model: haiku
  allowed_tools: [Read]
  env:
    EVAL_A: "1"
graders:
  - name: says-fixed
    type: regex
    pattern: fixed
  - name: judge
    type: llm
    criteria: PASS if fixed
"""


def test_case_yaml_only(tmp_path: Path) -> None:
    folder = tmp_path / "evals" / "yaml-case"
    write_tree(folder, {"case.yaml": CASE_YAML})
    loaded = load(folder)
    assert loaded.source == "case_yaml"
    assert loaded.path == folder / "case.yaml"
    assert loaded.name == "from-yaml"
    assert loaded.prompt == "Fix the bug."
    assert loaded.description == "a yaml case"
    assert loaded.tags == ("yaml",)
    assert (loaded.runs, loaded.max_turns, loaded.timeout_seconds) == (2, 20, 60)
    assert loaded.model == "haiku"
    assert loaded.allowed_tools == ("Read",)
    assert loaded.env == {"EVAL_A": "1"}
    assert loaded.scaffold_script == "setup.sh"
    assert loaded.history_file == "history.jsonl"
    assert loaded.add_dirs == ("fixtures", "more/data")
    assert loaded.extra == {"schema_version": "1.1", "expected_outcome": "pass"}
    assert [(g.name, g.type) for g in loaded.graders] == [("says-fixed", "regex"), ("judge", "llm")]
    assert [g.line for g in loaded.graders] == [21, 24]
    assert {g.path for g in loaded.graders} == {str(folder / "case.yaml")}


def test_merge_prompt_md_overrides_case_yaml(tmp_path: Path) -> None:
    folder = tmp_path / "evals" / "mixed-case"
    write_tree(
        folder,
        {
            "case.yaml": CASE_YAML,
            "prompt.md": "---\nruns: 1\nmax_turns: 5\n---\nThe prompt.md body wins.\n",
            "graders/b-file.md": "---\ntype: file_exists\npath: out.md\n---\n",
            "graders/a-file.md": "---\ntype: tool_used\ntool: Read\n---\n",
        },
    )
    loaded = load(folder)
    assert loaded.source == "mixed"
    assert loaded.path == folder / "prompt.md"
    assert loaded.name == "from-yaml"  # case.yaml's name, prompt.md has none
    assert loaded.runs == 1 and loaded.max_turns == 5
    assert loaded.timeout_seconds == 60  # not overridden
    assert loaded.prompt == "The prompt.md body wins."
    # case.yaml graders first, in order, then graders/*.md sorted by filename
    assert [g.name for g in loaded.graders] == ["says-fixed", "judge", "a-file", "b-file"]


def test_merge_keeps_yaml_prompt_when_prompt_md_body_is_empty(tmp_path: Path) -> None:
    folder = tmp_path / "evals" / "c"
    write_tree(folder, {"case.yaml": CASE_YAML, "prompt.md": "---\nname: over\n---\n"})
    loaded = load(folder)
    assert loaded.prompt == "Fix the bug."
    assert loaded.name == "over"


def test_merge_error_points_at_the_file_that_set_the_value(tmp_path: Path) -> None:
    folder = tmp_path / "evals" / "c"
    write_tree(folder, {"case.yaml": CASE_YAML, "prompt.md": "---\nrequires: 1\n---\nHi\n"})
    assert error(folder).path == folder / "prompt.md"
    write_tree(
        folder,
        {"prompt.md": "Hi\n", "case.yaml": CASE_YAML.replace("max_turns: 20", "max_turns: 0")},
    )
    err = error(folder)
    assert err.path == folder / "case.yaml"
    assert err.message == "execution.max_turns must be a whole number from 1 to 200 (got 0)"
    assert err.line == 14


def _yaml_error(tmp_path: Path, text: str) -> LoadError:
    folder = tmp_path / "evals" / "y"
    write_tree(folder, {"case.yaml": text})
    err = error(folder)
    assert err.path == folder / "case.yaml"
    return err


def test_case_yaml_schema_version_must_be_a_string(tmp_path: Path) -> None:
    err = _yaml_error(tmp_path, CASE_YAML.replace('"1.1"', "1.1"))
    assert err.message == 'schema_version must be a quoted string such as "1.1" (got a number: 1.1)'
    assert err.line == 1


def test_case_yaml_schema_version_major_too_new(tmp_path: Path) -> None:
    err = _yaml_error(tmp_path, CASE_YAML.replace('"1.1"', '"2.0"'))
    assert err.message == (
        'schema_version "2.0" requires a newer pytest-plugin-evals '
        "(this version supports up to 1.x)"
    )


def test_case_yaml_schema_version_required(tmp_path: Path) -> None:
    err = _yaml_error(tmp_path, CASE_YAML.replace('schema_version: "1.1"\n', ""))
    assert err.message == 'schema_version is required (a quoted string such as "1.1")'


def test_case_yaml_name_required(tmp_path: Path) -> None:
    err = _yaml_error(tmp_path, CASE_YAML.replace("name: from-yaml\n", ""))
    assert err.message == "name is required (the case's name, a non-empty string)"


def test_case_yaml_unknown_keys(tmp_path: Path) -> None:
    err = _yaml_error(tmp_path, CASE_YAML + "retries: 2\n")
    assert err.message.startswith('unknown key "retries" (expected one of: schema_version, name,')
    assert err.line == 27
    err = _yaml_error(tmp_path, CASE_YAML.replace("  max_turns: 20", "  runs: 20"))
    assert err.message.startswith('unknown key "execution.runs" (expected one of: prompt, model,')
    assert err.line == 14
    err = _yaml_error(tmp_path, CASE_YAML.replace("  add_dirs:", "  dirs:"))
    assert err.message.startswith('unknown key "context.dirs" (expected one of: scaffold_script,')


def test_case_yaml_not_a_mapping(tmp_path: Path) -> None:
    assert _yaml_error(tmp_path, "- a\n").message == "case.yaml must be a YAML mapping (got a list)"
    assert (
        _yaml_error(tmp_path, "").message == "case.yaml must be a YAML mapping (got an empty file)"
    )


def test_case_yaml_syntax_error(tmp_path: Path) -> None:
    err = _yaml_error(tmp_path, 'schema_version: "1.1"\nname: [a\n')
    assert err.message == "invalid YAML: did not find expected ',' or ']'"
    assert err.line == 2  # where the unclosed list began, not the end of the file
    err = _yaml_error(tmp_path, 'schema_version: "1.1"\nname: a\n  bad: indent\n')
    assert err.message.startswith("invalid YAML: ")
    assert err.line == 3


def test_case_yaml_without_prompt(tmp_path: Path) -> None:
    text = CASE_YAML.replace("  prompt: |\n    Fix the bug.\n", "")
    err = _yaml_error(tmp_path, text)
    assert err.message == (
        "execution.prompt is required (a prompt.md body, or execution.prompt in case.yaml)"
    )


def test_case_yaml_tags_not_a_list(tmp_path: Path) -> None:
    err = _yaml_error(tmp_path, CASE_YAML.replace("tags: [yaml]", "tags: yaml"))
    assert err.message == "tags must be a list of strings (got a string)"
    assert err.line == 4


def test_case_yaml_env_key(tmp_path: Path) -> None:
    err = _yaml_error(tmp_path, CASE_YAML.replace("EVAL_A:", "FOO:"))
    assert err.message.startswith('execution.env key "FOO" is not allowed')
    assert err.line == 19


@pytest.mark.parametrize(
    ("old", "new", "label", "line"),
    [
        ("scaffold_script: setup.sh", "scaffold_script: ../setup.sh", "context.scaffold_script", 8),
        ("history_file: history.jsonl", "history_file: /etc/passwd", "context.history_file", 9),
        (
            "add_dirs: [fixtures, more/data]",
            "add_dirs: [fixtures, a/../../x]",
            "context.add_dirs[1]",
            10,
        ),
    ],
)
def test_paths_must_stay_inside_the_case_dir(
    tmp_path: Path, old: str, new: str, label: str, line: int
) -> None:
    err = _yaml_error(tmp_path, CASE_YAML.replace(old, new))
    assert err.message.startswith(f'{label} path "')
    assert "escapes the case directory (`..` or an absolute path)" in err.message
    assert err.line == line


def test_case_yaml_grader_needs_a_name(tmp_path: Path) -> None:
    err = _yaml_error(
        tmp_path, CASE_YAML.replace("  - name: judge\n    type: llm", "  - type: llm")
    )
    assert err.message == "graders[1].name is required"
    assert err.line == 24


def test_case_yaml_grader_errors_name_the_item(tmp_path: Path) -> None:
    err = _yaml_error(
        tmp_path, CASE_YAML.replace("pattern: fixed", "pattern: fixed\n    weight: 0")
    )
    assert err.message == "graders[0].weight must be a number above 0 (got 0)"
    assert err.line == 24
    err = _yaml_error(tmp_path, CASE_YAML.replace("pattern: fixed", "pattern: '[a'"))
    assert (
        err.message == 'invalid graders[0].pattern "[a": Invalid regular expression: unexpected end'
    )
    assert err.line == 23


def test_case_yaml_graders_must_be_a_list(tmp_path: Path) -> None:
    text = CASE_YAML.split("graders:")[0] + "graders: {a: 1}\n"
    assert (
        _yaml_error(tmp_path, text).message == "graders must be a list of graders (got a mapping)"
    )


def test_duplicate_grader_names_across_yaml_and_files(tmp_path: Path) -> None:
    folder = tmp_path / "evals" / "dup"
    write_tree(
        folder, {"case.yaml": CASE_YAML, "graders/judge.md": "---\ntype: llm\n---\nPASS if ok\n"}
    )
    err = error(folder)
    assert err.message == 'duplicate grader name "judge" (also defined in case.yaml)'
    assert err.path == folder / "graders" / "judge.md"


def test_duplicate_grader_names_in_case_yaml(tmp_path: Path) -> None:
    err = _yaml_error(tmp_path, CASE_YAML.replace("name: judge", "name: says-fixed"))
    assert err.message == 'duplicate grader name "says-fixed" (also defined in case.yaml)'
    assert err.line == 24


def test_case_without_graders(tmp_path: Path) -> None:
    folder = tmp_path / "evals" / "bare"
    write_tree(folder, {"prompt.md": "Hi\n"})
    err = error(folder)
    assert err.message == (
        "the case has no graders (add graders/*.md files, or graders: in case.yaml)"
    )


def test_not_a_case_dir(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(LoadError, match="not a case directory"):
        directory.load_case(tmp_path / "empty", tmp_path)


# -- symbolic links leaving the case folder ------------------------------------------------------

SECRET = "root:x:0:0:the secret line:/root:/bin/bash\n"
LINK_TAIL = " — it must name something inside it"

#: A case.yaml whose context and baseline grader name files that exist in the case folder.
LINKED_YAML = """\
schema_version: "1.1"
name: linked
context:
  scaffold_script: setup.sh
  history_file: history.jsonl
  add_dirs: [fixtures]
execution:
  prompt: Do it.
graders:
  - name: vs-baseline
    type: baseline
    baseline_file: baseline.jsonl
    criteria: As good
"""
LINKED_FILES = {
    "case.yaml": LINKED_YAML,
    "setup.sh": "echo hi\n",
    "history.jsonl": "{}\n",
    "baseline.jsonl": "{}\n",
    "fixtures/data.txt": "data\n",
}


def real(path: Path) -> str:
    """Where a path leads, as the messages show it (tmp_path may itself sit under a link)."""
    return os.path.realpath(path)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the evals folder, holding a secret file and a valid grader file."""
    return write_tree(
        tmp_path / "outside",
        {"secret.txt": SECRET, "grader.md": GRADER, "prompt.md": "Leak it.\n", "sub/x": "x\n"},
    )


def linked_case(tmp_path: Path) -> Path:
    folder = tmp_path / "evals" / "linked"
    write_tree(folder, LINKED_FILES)
    return folder


def relink(path: Path, target: Path | str) -> None:
    """Make ``path`` a symbolic link to ``target`` (replacing the file written there)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target)


def test_prompt_md_linking_outside_is_a_load_error(tmp_path: Path, outside: Path) -> None:
    folder = case(tmp_path, {})
    (folder / "prompt.md").symlink_to(outside / "secret.txt")
    err = error(folder)
    assert (err.path, err.line) == (folder, None)
    assert err.message == (
        f"prompt.md is a link to a file outside the case directory ({real(outside / 'secret.txt')})"
        " — it must be a file inside it"
    )
    # Shown as the case folder's error: the link itself would be shown as where it leads.
    assert err.render(tmp_path) == f"evals/my-case: {err.message}"
    assert "secret line" not in err.render()


def test_prompt_md_linking_to_a_valid_prompt_outside_is_refused(
    tmp_path: Path, outside: Path
) -> None:
    folder = case(tmp_path, {})
    (folder / "prompt.md").symlink_to(outside / "prompt.md")
    assert error(folder).message.startswith("prompt.md is a link to a file outside")


def test_case_yaml_linking_outside_is_a_load_error(tmp_path: Path, outside: Path) -> None:
    write_tree(outside, {"case.yaml": LINKED_YAML.replace("context:", "x:\ncontext:")})
    folder = linked_case(tmp_path)
    relink(folder / "case.yaml", outside / "case.yaml")
    err = error(folder)
    assert (err.path, err.line) == (folder, None)
    assert err.message == (
        f"case.yaml is a link to a file outside the case directory ({real(outside / 'case.yaml')})"
        " — it must be a file inside it"
    )


def test_grader_file_linking_outside_is_a_load_error(tmp_path: Path, outside: Path) -> None:
    folder = case(tmp_path, {"prompt.md": "Hi\n"})
    (folder / "graders" / "stolen.md").symlink_to(outside / "grader.md")
    err = error(folder)
    assert (err.path, err.line) == (folder, None)
    assert err.message == (
        "graders/stolen.md is a link to a file outside the case directory "
        f"({real(outside / 'grader.md')}) — it must be a file inside it"
    )


def test_graders_folder_linking_outside_is_a_load_error(tmp_path: Path, outside: Path) -> None:
    folder = tmp_path / "evals" / "c"
    write_tree(folder, {"prompt.md": "Hi\n"})
    (folder / "graders").symlink_to(outside)
    err = error(folder)
    assert (err.path, err.line) == (folder, None)
    assert err.message == (
        f'graders/grader.md goes through "graders", a link to a folder outside the case '
        f"directory ({real(outside)}) — it must be a file inside it"
    )


@pytest.mark.parametrize(
    ("rel", "label", "line"),
    [
        ("setup.sh", "context.scaffold_script", 4),
        ("history.jsonl", "context.history_file", 5),
        ("baseline.jsonl", "graders[0].baseline_file", 12),
    ],
)
def test_context_and_baseline_links_outside_are_load_errors(
    tmp_path: Path, outside: Path, rel: str, label: str, line: int
) -> None:
    folder = linked_case(tmp_path)
    loaded = load(folder)  # the same file, not a link: loads
    used = (loaded.scaffold_script, loaded.history_file, loaded.graders[0].config["baseline_file"])
    assert rel in used
    relink(folder / rel, outside / "secret.txt")
    err = error(folder)
    assert (err.path, err.line) == (folder / "case.yaml", line)
    assert err.message == (
        f'{label} path "{rel}" is a link to a file outside the case directory '
        f"({real(outside / 'secret.txt')}){LINK_TAIL}"
    )
    assert str(err) == f"{folder / 'case.yaml'}:{line}: {err.message}"


def test_baseline_link_outside_in_a_grader_file(tmp_path: Path, outside: Path) -> None:
    grader = "---\ntype: baseline\ncriteria: As good\nbaseline_file: base.jsonl\n---\n"
    folder = case(tmp_path, {"prompt.md": "Hi\n", "graders/vs.md": grader})
    (folder / "base.jsonl").symlink_to(outside / "secret.txt")
    err = error(folder)
    assert (err.path, err.line) == (folder / "graders" / "vs.md", 4)
    assert err.message == (
        'baseline_file path "base.jsonl" is a link to a file outside the case directory '
        f"({real(outside / 'secret.txt')}){LINK_TAIL}"
    )


def test_a_link_on_the_way_is_named(tmp_path: Path, outside: Path) -> None:
    folder = linked_case(tmp_path)
    write_tree(folder, {"case.yaml": LINKED_YAML.replace("history.jsonl", "logs/secret.txt")})
    (folder / "logs").symlink_to(outside)
    err = error(folder)
    assert err.line == 5
    assert err.message == (
        'context.history_file path "logs/secret.txt" goes through "logs", a link to a folder '
        f"outside the case directory ({real(outside)}){LINK_TAIL}"
    )


def test_a_dangling_link_outside_is_refused(tmp_path: Path) -> None:
    folder = linked_case(tmp_path)
    relink(folder / "history.jsonl", tmp_path / "gone.jsonl")
    assert error(folder).message == (
        'context.history_file path "history.jsonl" is a link to a path that does not exist '
        f"outside the case directory ({real(tmp_path / 'gone.jsonl')}){LINK_TAIL}"
    )


def test_add_dirs_folder_linking_outside_is_a_load_error(tmp_path: Path, outside: Path) -> None:
    folder = linked_case(tmp_path)
    relink(folder / "fixtures", outside)
    err = error(folder)
    assert (err.path, err.line) == (folder / "case.yaml", 6)
    assert err.message == (
        'context.add_dirs[0] path "fixtures" is a link to a folder outside the case directory '
        f"({real(outside)}){LINK_TAIL}"
    )


def test_links_inside_an_add_dirs_folder_leading_outside_are_load_errors(
    tmp_path: Path, outside: Path
) -> None:
    folder = linked_case(tmp_path)
    (folder / "fixtures" / "deep").mkdir()
    (folder / "fixtures" / "passwd").symlink_to(outside / "secret.txt")
    (folder / "fixtures" / "deep" / "all").symlink_to(outside)
    (folder / "fixtures" / "ok").symlink_to(folder / "history.jsonl")  # stays in the case
    err = error(folder)
    assert (err.path, err.line) == (folder / "case.yaml", 6)
    assert err.message == (
        'context.add_dirs[0] path "fixtures" holds 2 links leading outside the case directory: '
        f'"fixtures/deep/all" ({real(outside)}), "fixtures/passwd" '
        f"({real(outside / 'secret.txt')}) — everything in it must stay inside the case directory"
    )


def test_one_link_inside_an_add_dirs_folder(tmp_path: Path, outside: Path) -> None:
    folder = linked_case(tmp_path)
    (folder / "fixtures" / "passwd").symlink_to(outside / "secret.txt")
    assert error(folder).message == (
        'context.add_dirs[0] path "fixtures" holds a link leading outside the case directory: '
        f'"fixtures/passwd" ({real(outside / "secret.txt")}) — everything in it must stay inside '
        "the case directory"
    )


def test_many_links_inside_an_add_dirs_folder_are_counted(tmp_path: Path, outside: Path) -> None:
    folder = linked_case(tmp_path)
    for n in range(7):
        (folder / "fixtures" / f"l{n}").symlink_to(outside / "secret.txt")
    message = error(folder).message
    assert message.startswith('context.add_dirs[0] path "fixtures" holds 7 links leading')
    assert '"fixtures/l4"' in message and '"fixtures/l5"' not in message
    assert " and 2 more — everything in it" in message


def test_links_staying_inside_the_case_folder_are_accepted(tmp_path: Path) -> None:
    folder = tmp_path / "evals" / "inside"
    write_tree(
        folder,
        {
            "real/prompt.txt": "Hi\n",
            "real/case.yaml": LINKED_YAML,
            "real/grader.md": GRADER,
            "real/setup.sh": "echo hi\n",
            "real/history.jsonl": "{}\n",
            "real/baseline.jsonl": "{}\n",
            "real/fixtures/data.txt": "data\n",
            "graders/.keep": "",
        },
    )
    for name in ("case.yaml", "setup.sh", "history.jsonl", "baseline.jsonl", "fixtures"):
        (folder / name).symlink_to(Path("real") / name)
    (folder / "prompt.md").symlink_to("real/prompt.txt")
    (folder / "graders" / "g.md").symlink_to(folder / "real" / "grader.md")
    (folder / "real" / "fixtures" / "up").symlink_to(folder / "real" / "history.jsonl")
    (folder / "real" / "fixtures" / "self").symlink_to(".")
    (folder / "real" / "fixtures" / "loop-a").symlink_to("loop-b")
    (folder / "real" / "fixtures" / "loop-b").symlink_to("loop-a")
    loaded = load(folder)
    assert loaded.prompt == "Hi"
    assert (loaded.scaffold_script, loaded.history_file, loaded.add_dirs) == (
        "setup.sh",
        "history.jsonl",
        ("fixtures",),
    )
    assert [g.name for g in loaded.graders] == ["vs-baseline", "g"]
    # A link to a link that leaves is refused all the same.
    relink(folder / "real" / "history.jsonl", tmp_path / "elsewhere.jsonl")
    assert error(folder).message.startswith(
        'context.history_file path "history.jsonl" is a link to a path that does not exist '
        "outside the case directory"
    )


def test_a_case_folder_reached_through_a_link_is_its_own_inside(
    tmp_path: Path, outside: Path
) -> None:
    folder = linked_case(tmp_path)
    (tmp_path / "evals" / "alias").symlink_to(folder)
    alias = tmp_path / "evals" / "alias"
    assert directory.load_case(alias, tmp_path / "evals").history_file == "history.jsonl"
    relink(folder / "fixtures" / "data.txt", outside / "secret.txt")
    with pytest.raises(LoadError, match=r'"fixtures/data.txt" \(.*secret.txt\)'):
        directory.load_case(alias, tmp_path / "evals")


@pytest.mark.parametrize(
    ("front", "line", "message"),
    [
        (
            'name: "clear\\e[2J"',
            2,
            'name "clear\\u001b[2J" holds an escape character (U+001B): a name must be '
            "printable text",
        ),
        ('name: "two\\nlines"', 2, 'name "two\\u000alines" holds a line break (U+000A)'),
        ('name: "back\\rover"', 2, 'name "back\\u000dover" holds a line break (U+000D)'),
        ('name: "nul\\0"', 2, 'name "nul\\u0000" holds NUL'),
        ('name: "bell\\a"', 2, 'name "bell\\u0007" holds a control character (U+0007)'),
        (
            'tags: [fine, "evil\\u202Etxt.exe"]',
            2,
            'tags[1] "evil\\u202etxt.exe" holds a bidirectional control (U+202E)',
        ),
        (
            'env:\n  EVAL_MODE: "on\\0off"',
            3,
            "env.EVAL_MODE holds a NUL character, which no environment can carry",
        ),
    ],
)
def test_names_and_env_values_that_cannot_be_shown_or_passed(
    tmp_path: Path, front: str, line: int, message: str
) -> None:
    folder = case(tmp_path, {"prompt.md": f"---\n{front}\n---\nHi\n"})
    err = error(folder)
    assert (err.path, err.line) == (folder / "prompt.md", line)
    assert err.message.startswith(message)
    assert "\x1b" not in err.render() and "\u202e" not in err.render()


def test_a_case_folder_named_with_an_escape_is_a_load_error(tmp_path: Path) -> None:
    folder = case(tmp_path, {"prompt.md": "Hi\n"}, name="x\x1b[31m")
    err = error(folder)
    assert err.message == (
        'the case folder\'s name "x\\u001b[31m" holds an escape character (U+001B): a name '
        "must be printable text"
    )
    assert load(case(tmp_path, {"prompt.md": "Hi\n"}, name="émoji-👩‍💻")).name == "émoji-👩‍💻"


def test_a_case_folder_linked_from_outside_the_suite_is_a_load_error(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "elsewhere/case/prompt.md": "Hi\n",
            "elsewhere/case/graders/g.md": "---\ntype: regex\npattern: hi\n---\n",
            "evals/inside/prompt.md": "Hi\n",
            "evals/inside/graders/g.md": "---\ntype: regex\npattern: hi\n---\n",
        },
    )
    (tmp_path / "evals" / "linked").symlink_to(tmp_path / "elsewhere" / "case")
    (tmp_path / "evals" / "alias").symlink_to(tmp_path / "evals" / "inside")  # stays inside
    with pytest.raises(LoadError) as info:
        directory.load_case(tmp_path / "evals" / "linked", tmp_path / "evals")
    assert "the case folder is a link to" in info.value.message
    assert str(tmp_path / "elsewhere" / "case") in info.value.message
    assert directory.load_case(tmp_path / "evals" / "alias", tmp_path / "evals").name == "alias"
