"""The options in pytest: each option the core declares (``settings.options.OPTIONS``)
registered as a pytest option and its ini twin, and read back (command line, ini file) into the
core's :class:`EvalSettings`; a bad value is a usage error of one line naming the option."""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

from pytest_plugin_evals.settings import EvalSettings
from pytest_plugin_evals.settings.options import FIELD, OPTIONS, given_of, keywords, settings_from
from pytest_plugin_evals.settings.parsers import Given, Whole

if TYPE_CHECKING:
    import pytest

    from pytest_plugin_evals.settings.option import Option

GROUP = ("evals", "agent plugin evals (pytest-plugin-evals)")


def add_options(parser: pytest.Parser) -> None:
    """Each option and its ini twin, as"""
    group = parser.getgroup(*GROUP)
    for option in OPTIONS:
        cli, ini = keywords(option)
        if cli is not None:
            group.addoption(option.flag, **cli)
        parser.addini(option.ini, **ini)


def _given(config: pytest.Config, option: Option) -> Given | None:
    """The option's value as given (command line over ini file), or None: not given."""
    cli = config.getoption(option.ini) if option.on_cli else None
    folder = None if config.inipath is None else config.inipath.parent
    return given_of(option, cli, config.getini(option.ini), config.invocation_params.dir, folder)


def where(config: pytest.Config, field: str) -> str:
    """How a message names the option that fills ``field``: as its value was given (its flag,
    or its ini key), its flag when not given."""
    found = _given(config, FIELD[field])
    return FIELD[field].flag if found is None else found.where


def read_settings(config: pytest.Config) -> EvalSettings:
    """Every option read and checked; a bad value is one line naming the option (its flag, or
    its ini key) and what it accepts."""
    given = {o.key: g for o in OPTIONS if (g := _given(config, o)) is not None}
    try:
        return settings_from(given)
    except Whole as exc:
        usage_error(str(exc))


def usage_error(*lines: str) -> NoReturn:
    """pytest's usage error of these lines (pytest is imported here, when one is raised: the
    entry point and this module import no pytest)."""
    from pytest import UsageError

    raise UsageError(*lines) from None
