"""``[tool.mlsmoke.doctest]``: the hook's configuration, validated in one place."""

from __future__ import annotations

import doctest
from pathlib import Path
from typing import Any, NamedTuple

from mlsmoke import config
from mlsmoke.errors import ConfigError

HOOK = "doctest"
KEY_PATH = f"{config.TOOL_PATH}.{HOOK}"
DEFAULT_OPTIONFLAGS = ("ELLIPSIS", "NORMALIZE_WHITESPACE")
DEFAULT_TIMEOUT = 60.0  # seconds per file


class Settings(NamedTuple):
    optionflags: tuple[str, ...]
    exclude: tuple[str, ...]
    python: str | None
    timeout: float = DEFAULT_TIMEOUT


def option_flag_names(value: Any, path: str) -> tuple[str, ...]:
    """doctest option flag names, such as ``["ELLIPSIS", "FAIL_FAST"]``."""
    names = [name.upper() for name in config.string_list(value, path)]
    for name in names:
        if name not in doctest.OPTIONFLAGS_BY_NAME:
            known = ", ".join(sorted(doctest.OPTIONFLAGS_BY_NAME))
            raise ConfigError(f"{path}: unknown option flag {name!r}; known: {known}")
    return tuple(dict.fromkeys(names))


def _globs(value: Any, path: str) -> tuple[str, ...]:
    return tuple(config.string_list(value, path))


SCHEMA = {
    "optionflags": config.Key(
        option_flag_names,
        DEFAULT_OPTIONFLAGS,
        "doctest option flags; replaces the default ELLIPSIS, NORMALIZE_WHITESPACE",
    ),
    "exclude": config.Key(_globs, (), "globs of paths, from the project root, to skip"),
    "python": config.Key(config.string, None, "the project's interpreter"),
    "timeout": config.Key(
        config.timeout_seconds,
        DEFAULT_TIMEOUT,
        "seconds each file's examples may take, its import included",
    ),
}


def load_settings(root: Path) -> Settings:
    return Settings(**config.validate(config.hook_table(root, HOOK), SCHEMA, KEY_PATH))
