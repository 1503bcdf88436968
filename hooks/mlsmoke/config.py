"""Configuration: the ``[tool.mlsmoke]`` table of the project's pyproject.toml.

There is one schema per hook, declared as a mapping of key name to :class:`Key`. Every
value is validated here, and every error message starts with the full key path
(``tool.mlsmoke.strict-mode.exclude: ...``), so users know which line to edit.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from mlsmoke.errors import ConfigError
from mlsmoke.project_root import PYPROJECT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    try:
        import tomli as tomllib
    except ImportError:  # a project interpreter running mlsmoke's worker reads no TOML
        tomllib = None

TOOL_PATH = "tool.mlsmoke"
# What [tool.mlsmoke] may hold: the shared interpreter and one table per hook. A
# misspelt table (`strict_mode`) would otherwise be ignored without a word.
TOOL_KEYS = (
    "python",
    "strict-mode",
    "doctest",
    "overfit",
    "worker",
    "profile",
    "expect",
    "suites",
)

Parser = Callable[[Any, str], Any]


class Key(NamedTuple):
    """One configuration key: how to parse its value and what it defaults to."""

    parse: Parser
    default: Any = None
    help: str = ""


def read_pyproject(root: Path) -> dict[str, Any]:
    """The parsed pyproject.toml of ``root``; an empty dict when there is none."""
    path = root / PYPROJECT
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: {not_utf8(data, error)}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None


def not_utf8(data: bytes, error: UnicodeDecodeError) -> str:
    """Where ``data`` stops being UTF-8, as users find it: byte offset, line, column."""
    line = data.count(b"\n", 0, error.start) + 1
    column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
    return (
        f"not UTF-8: byte 0x{data[error.start]:02x} at offset {error.start}"
        f" (line {line}, column {column}); TOML files must be UTF-8"
    )


def tool_table(root: Path) -> dict[str, Any]:
    """The ``[tool.mlsmoke]`` table of ``root``'s pyproject.toml (empty when absent)."""
    table = read_pyproject(root).get("tool", {}).get("mlsmoke", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{TOOL_PATH}: expected a table, got {type_name(table)}")
    unknown = sorted(set(table) - set(TOOL_KEYS))
    if unknown:
        raise ConfigError(
            f"{TOOL_PATH}.{unknown[0]}: unknown key; "
            f"expected one of: {', '.join(TOOL_KEYS)}"
        )
    return table


def hook_table(root: Path, hook: str) -> dict[str, Any]:
    """The raw ``[tool.mlsmoke.<hook>]`` table, checked to be a table."""
    table = tool_table(root).get(hook, {})
    if not isinstance(table, dict):
        raise ConfigError(
            f"{TOOL_PATH}.{hook}: expected a table, got {type_name(table)}"
        )
    return table


def validate(table: Mapping[str, Any], schema: Mapping[str, Key], path: str) -> dict:
    """Parse ``table`` by ``schema``: unknown keys are errors, missing ones default."""
    unknown = sorted(set(table) - set(schema))
    if unknown:
        raise ConfigError(
            f"{path}.{unknown[0]}: unknown key; expected one of: {', '.join(schema)}"
        )
    return {
        name: key.parse(table[name], f"{path}.{name}") if name in table else key.default
        for name, key in schema.items()
    }


def type_name(value: object) -> str:
    """How TOML users call the type of ``value``."""
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}
    names.update({list: "an array", dict: "a table"})
    return names.get(type(value), type(value).__name__)


def string(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{path}: expected a string, got {type_name(value)}")
    return value


def boolean(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{path}: expected true or false, got {type_name(value)}")
    return value


def string_list(value: Any, path: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: expected an array of strings")
    return list(value)


def argument_list(value: Any, path: str) -> list[str]:
    """A command line as an array, one string per argument: a lone string, which a
    shell would split and mlsmoke would not, is refused."""
    if isinstance(value, str):
        raise ConfigError(
            f"{path}: expected an array of strings, one per argument, such as"
            f' ["--device=cpu", "--compile=False"]; got the string {value!r}'
        )
    return string_list(value, path)


def positive_int(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{path}: expected a positive integer, got {value!r}")
    return value


def finite_number(value: Any, path: str) -> float:
    """A number, not NaN nor an infinity: TOML allows ``nan`` and ``inf``, and no
    comparison with NaN is ever true, so one would pass every check downstream."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{path}: expected a number, got {type_name(value)}")
    if not math.isfinite(value):
        raise ConfigError(f"{path}: expected a finite number, got {value!r}")
    return float(value)


def positive_number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{path}: expected a positive number, got {value!r}")
    if not math.isfinite(value):
        raise ConfigError(f"{path}: expected a positive, finite number, got {value!r}")
    return float(value)


# The longest time limit a hook accepts. Past it a limit means no limit, and the
# clocks' arithmetic (threading's and faulthandler's) overflows long before inf.
MAX_TIMEOUT = 86400.0


def timeout_seconds(value: Any, path: str) -> float:
    """A time limit: seconds above 0 and at most MAX_TIMEOUT."""
    number = value if isinstance(value, (int, float)) else None
    if isinstance(value, bool) or number is None or not 0 < number <= MAX_TIMEOUT:
        raise ConfigError(
            f"{path}: expected a finite number of seconds, above 0 and up to"
            f" {MAX_TIMEOUT:g} (a day), got {value!r}"
        )
    return float(number)


# The seeds numpy accepts (np.random.seed); Python's and torch's take these too.
MAX_SEED = 2**32 - 1


def seed_value(value: Any, path: str) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not 0 <= value <= MAX_SEED
    ):
        raise ConfigError(
            f"{path}: expected an integer from 0 to {MAX_SEED}, got {value!r}"
        )
    return value


def one_of(*choices: str) -> Parser:
    """A parser accepting exactly one of ``choices``."""

    def parse(value: Any, path: str) -> str:
        if value not in choices:
            raise ConfigError(
                f"{path}: expected one of {', '.join(map(repr, choices))}, "
                f"got {value!r}"
            )
        return value

    return parse
