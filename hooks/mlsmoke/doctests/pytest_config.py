"""``doctest_optionflags`` from the project's pytest configuration.

The file pytest itself would read in the project root, in pytest's order: ``pytest.ini``
(and ``.pytest.ini``), ``pyproject.toml``'s ``[tool.pytest.ini_options]``, ``tox.ini``'s
``[pytest]``, ``setup.cfg``'s ``[tool:pytest]``. The first that configures pytest is the
one pytest uses, whether or not it sets the option.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from mlsmoke import config
from mlsmoke.errors import ConfigError

if TYPE_CHECKING:
    import configparser

OPTION = "doctest_optionflags"
_INI_FILES = (("pytest.ini", "pytest"), (".pytest.ini", "pytest"))
_LATER_INI_FILES = (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))


class PytestFlags(NamedTuple):
    names: list[str]
    where: str  # the file and key, for messages: ``setup.cfg [tool:pytest]``


def pytest_optionflags(root: Path) -> PytestFlags | None:
    """The flags pytest's configuration sets; None when it sets none."""
    for name, section in _INI_FILES:
        if (root / name).is_file():  # pytest's, even without the section
            return _from_ini(root / name, section)
    table = config.read_pyproject(root).get("tool", {}).get("pytest", {})
    options = table.get("ini_options") if isinstance(table, dict) else None
    if isinstance(options, dict):
        return _from_toml(options.get(OPTION))
    for name, section in _LATER_INI_FILES:
        if (root / name).is_file() and section in _sections(root / name):
            return _from_ini(root / name, section)
    return None


def _from_toml(value: Any) -> PytestFlags | None:
    where = f"pyproject.toml [tool.pytest.ini_options] {OPTION}"
    if value is None:
        return None
    if isinstance(value, str):
        return PytestFlags(value.split(), where) if value.split() else None
    return PytestFlags(config.string_list(value, where), where)


def _sections(path: Path) -> list[str]:
    return _parsed(path).sections()


def _from_ini(path: Path, section: str) -> PytestFlags | None:
    value = _parsed(path).get(section, OPTION, fallback="")
    where = f"{path.name} [{section}] {OPTION}"
    return PytestFlags(value.split(), where) if value.split() else None


def _parsed(path: Path) -> configparser.ConfigParser:
    import configparser  # here: most projects configure pytest in pyproject.toml

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as error:
        first_line = str(error).splitlines()[0]
        raise ConfigError(f"{path.name}: cannot read: {first_line}") from None
    return parser
