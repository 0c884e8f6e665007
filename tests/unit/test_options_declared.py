"""Each option is declared once (``settings.options.OPTIONS``): the reference page lists exactly
the declared options, each with its declared default; the defaults the declarations state in
words agree with where those values live; and reading a value is derived from the declaration
(command line over ini file over the default, one line naming the option when it is bad)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_plugin_evals.agents.confine.bounds import DEFAULT_BOUNDS, parse_size
from pytest_plugin_evals.settings import EvalSettings
from pytest_plugin_evals.settings.option import DEFAULTS, Option
from pytest_plugin_evals.settings.options import FIELD, OPTIONS, help_text, keywords
from pytest_plugin_evals.settings.parsers import Bad, Given, whole
from pytest_plugin_evals.stats import DEFAULT_MAX_RUNS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "options.md"


def table_rows() -> list[list[str]]:
    """The cells of the page's first table (option, ini, accepts, default)."""
    text = PAGE.read_text(encoding="utf-8")
    table = text[text.index("| option | ini |") :].split("\n\n", 1)[0]
    return [[c.strip() for c in row.strip("|").split(" | ")] for row in table.splitlines()[2:]]


def row_of(option: Option) -> list[str]:
    flag, ini = f"`{option.flag}`", f"`{option.ini}`"
    found = [row for row in table_rows() if flag in row[0] or ini in row[1]]
    assert found, f"{option.flag}: no row in {PAGE.name}'s table"
    return found[0]


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.flag)
def test_every_declared_option_is_in_the_table_with_its_ini_key_and_default(
    option: Option,
) -> None:
    row = row_of(option)
    assert f"`{option.ini}`" in row[1] or not option.on_cli
    default = option.default
    if default is None:
        return
    if option.otherwise is None:  # a value: written as the option takes it
        assert f"`{default}`" in row[3], (option.flag, row[3])
    else:  # words
        assert default in row[3].replace("`", ""), (option.flag, row[3])


def test_the_page_names_no_option_that_is_not_declared() -> None:
    text = re.sub(r"\([^) ]*#[^)]*\)", "", PAGE.read_text(encoding="utf-8"))  # not anchors
    flags = {o.flag for o in OPTIONS if o.on_cli}
    named = set(re.findall(r"--eval-[a-z0-9-]*[a-z0-9](?![a-z0-9*…-])", text))
    assert named - flags == set()
    inis = {o.ini for o in OPTIONS}
    keys = {key for row in table_rows() for key in re.findall(r"`(eval_\w+)`", " ".join(row))}
    assert keys - inis == set()
    assert {row[0] for row in table_rows()} >= {"—"}  # the ini-only key has a row


def test_every_option_fills_a_settings_field() -> None:
    fields = set(DEFAULTS) | {"eval_paths"}
    for option in OPTIONS:
        names = option.field if isinstance(option.field, tuple) else (option.field,)
        for name in names:
            assert name is not None and name.partition(".")[0] in fields, option.flag


def test_the_defaults_in_words_agree_with_where_the_values_live() -> None:
    """The confined runs' bounds and ``auto``'s most runs are not the settings' values: the
    declarations' words must say the values their own modules hold."""
    for option in OPTIONS:
        if isinstance(option.field, str) and option.field.startswith("bounds."):
            held = getattr(DEFAULT_BOUNDS, option.field.partition(".")[2])
            assert option.default is not None and parse_size(option.default) == held
    (runs,) = [o for o in OPTIONS if o.field == ("runs", "runs_auto")]
    assert f"auto: MAX {DEFAULT_MAX_RUNS})" in runs.help


def test_help_shows_each_default_once() -> None:
    for option in OPTIONS:
        shown = help_text(option)
        if option.default is not None:
            assert shown.endswith(f"(default: {option.default})")
            assert shown.count("(default") == 1, option.flag


def test_pytest_is_given_each_option_and_its_ini_twin_by_its_kind() -> None:
    (aa_cli, aa_ini), (tags_cli, tags_ini), (margin_cli, margin_ini) = (
        keywords(FIELD[key]) for key in ("aa", "tags", "margin")
    )
    aa = FIELD["aa"]
    assert aa_cli == {
        "action": "store_true",
        "default": None,
        "dest": aa.ini,
        "help": help_text(aa),
    }
    assert (
        tags_cli
        and margin_cli
        and (tags_cli["action"], margin_cli["action"]) == ("append", "store")
    )
    assert margin_cli["metavar"] == FIELD["margin"].metavar
    assert (aa_ini["type"], aa_ini["default"]) == ("bool", False)
    assert (tags_ini["type"], tags_ini["default"]) == ("args", [])
    assert (margin_ini["type"], margin_ini["default"]) == (None, None)
    assert all("%%" not in keywords(o)[1]["help"] for o in OPTIONS)  # argparse's escape only
    assert all((keywords(o)[0] is None) == (not o.on_cli) for o in OPTIONS)


def given(raw: str) -> Given:
    return Given(raw, "--eval-x", True, Path.cwd(), Path.cwd())


def test_a_bad_value_says_what_the_option_accepts() -> None:
    with pytest.raises(Bad, match=r"^must be a whole number from 8 to 100 \(got '7'\)$"):
        whole(8, 100)(given("7"))
    with pytest.raises(Bad):
        whole(8, 100)(given("8.5"))
    assert whole(8, 100)(given("8")) == 8


INI = """[pytest]
eval_threshold = 0.5
eval_max_processes = 64
eval_tag = a b
"""


def settings_of(pytester: pytest.Pytester, *args: str) -> EvalSettings:
    from pytest_plugin_evals.plugin.keys import settings_key

    pytester.makeini(INI)
    config = pytester.parseconfigure(*args)
    return config.stash[settings_key]


def test_the_command_line_wins_over_the_ini_file_over_the_default(
    pytester: pytest.Pytester,
) -> None:
    from_ini = settings_of(pytester)
    assert (from_ini.threshold, from_ini.threshold_given) == (0.5, True)
    assert from_ini.tags == ("a", "b") and ("processes", 64) in from_ini.bounds
    assert from_ini.margin == DEFAULTS["margin"] and not from_ini.judge_given
    given = settings_of(pytester, "--eval-threshold", "0.75", "--eval-max-processes", "99")
    assert given.threshold == 0.75 and ("processes", 99) in given.bounds


@pytest.mark.parametrize(
    ("args", "ini", "message"),
    [
        (["--eval-max-files", "12"], "", "--eval-max-files must be a whole number from 100 to "
         "100000000 (got '12')"),
        ([], "eval_max_memory = lots", "ini eval_max_memory takes a size such as 4G, 512M or "
         "2048 (bytes) (got 'lots')"),
        ([], "eval_json = out.txt", "ini eval_json must name a .json file (got 'out.txt')"),
        (["--eval-judge", "openai"], "", "--eval-judge openai needs --eval-judge-model "
         "(the endpoint's model)"),
        ([], "eval_agent = claude\neval_agents = claude,codex", "ini eval_agent and ini "
         "eval_agents cannot be given together*"),
    ],
)  # fmt: skip
def test_a_bad_value_is_one_line_naming_where_it_came_from(
    pytester: pytest.Pytester, args: list[str], ini: str, message: str
) -> None:
    pytester.makeini(f"[pytest]\n{ini}\n")
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
    assert "Traceback" not in result.stderr.str()
