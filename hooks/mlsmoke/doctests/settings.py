"""``[tool.mlsmoke.doctest]``: the hook's configuration, validated in one place.

Without an ``optionflags`` key the project's pytest ``doctest_optionflags`` apply
(:mod:`.pytest_config`), and without those ELLIPSIS and NORMALIZE_WHITESPACE.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from mlsmoke import config
from mlsmoke.doctests.pytest_config import pytest_optionflags
from mlsmoke.errors import ConfigError

HOOK = "doctest"
KEY_PATH = f"{config.TOOL_PATH}.{HOOK}"
DEFAULT_OPTIONFLAGS = ("ELLIPSIS", "NORMALIZE_WHITESPACE")
DEFAULT_TIMEOUT = 60.0  # seconds per file
MISSING_DEPENDENCY = ("skip", "fail")


class Settings(NamedTuple):
    optionflags: tuple[str, ...]
    exclude: tuple[str, ...]
    python: str | None
    timeout: float = DEFAULT_TIMEOUT
    seed: int | None = None
    missing_dependency: str = "skip"

    def runner_options(self) -> dict[str, Any]:
        """What the runner needs to know, beyond the files."""
        return {
            "optionflags": list(self.optionflags),
            "seed": self.seed,
            "missing_dependency": self.missing_dependency,
        }


def option_flag_names(value: Any, path: str) -> tuple[str, ...]:
    """doctest option flag names, such as ``["ELLIPSIS", "FAIL_FAST"]``, and pytest's
    ALLOW_UNICODE, ALLOW_BYTES and NUMBER.

    doctest is imported only here, where flags are configured: most runs of the hook
    read settings for a prose edit or a cached pass and never need it."""
    import doctest

    from mlsmoke.doctests.checker import PYTEST_FLAGS

    names = [name.upper() for name in config.string_list(value, path)]
    known = sorted(set(doctest.OPTIONFLAGS_BY_NAME) | set(PYTEST_FLAGS))
    for name in names:
        if name not in known:
            raise ConfigError(
                f"{path}: unknown option flag {name!r}; known: {', '.join(known)}"
            )
    return tuple(dict.fromkeys(names))


def _globs(value: Any, path: str) -> tuple[str, ...]:
    return tuple(config.string_list(value, path))


SCHEMA = {
    "optionflags": config.Key(
        option_flag_names,
        None,
        "doctest option flags; by default the project's pytest doctest_optionflags,"
        " else ELLIPSIS, NORMALIZE_WHITESPACE",
    ),
    "exclude": config.Key(_globs, (), "globs of paths, from the project root, to skip"),
    "python": config.Key(config.string, None, "the project's interpreter"),
    "timeout": config.Key(
        config.timeout_seconds,
        DEFAULT_TIMEOUT,
        "seconds each file's examples may take, its import included",
    ),
    "seed": config.Key(
        config.seed_value,
        None,
        "seed random, numpy and torch with this before each docstring's examples",
    ),
    "missing_dependency": config.Key(
        config.one_of(*MISSING_DEPENDENCY),
        "skip",
        "an example needing a package the interpreter lacks: skip it, or fail",
    ),
}


def load_settings(root: Path) -> Settings:
    values = config.validate(config.hook_table(root, HOOK), SCHEMA, KEY_PATH)
    if values["optionflags"] is None:
        values["optionflags"] = default_optionflags(root)
    return Settings(**values)


def default_optionflags(root: Path) -> tuple[str, ...]:
    """The project's pytest ``doctest_optionflags``, else mlsmoke's default."""
    found = pytest_optionflags(root)
    if found is None:
        return DEFAULT_OPTIONFLAGS
    return option_flag_names(found.names, found.where)
