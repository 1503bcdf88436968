"""The skips a module declares, as pytest-doctestplus reads them.

Standard library only: this runs inside the project's interpreter.

- ``__doctest_skip__``: a list of names, relative to the module, whose docstrings do
  not run. Wildcards as in fnmatch (``"Model.*"``); ``"*"`` is every docstring of the
  module and ``"."`` the module's own docstring.
- ``__doctest_requires__``: a dict from a name pattern (or a tuple of patterns) to the
  modules its docstrings need. When one cannot be imported, those docstrings are
  skipped, naming it. A version specifier (``"numpy>=1.20"``) is read as the module's
  name only.
"""

from __future__ import annotations

import doctest
import fnmatch
import importlib.util
import re
from types import ModuleType
from typing import Any

from mlsmoke.doctests.results import SkippedExample

_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z_][\w.]*)")


def skip_declared(
    tests: list[doctest.DocTest], module: ModuleType, skipped: list[SkippedExample]
) -> list[doctest.DocTest]:
    """The ``tests`` that run; those a declared requirement skips join ``skipped``."""
    skip_patterns = _patterns(getattr(module, "__doctest_skip__", ()))
    requires = getattr(module, "__doctest_requires__", {})
    requires = requires if isinstance(requires, dict) else {}
    if not skip_patterns and not requires:
        return tests
    prefix = module.__name__
    kept = []
    for test in tests:
        if any(_matches(test.name, prefix, pattern) for pattern in skip_patterns):
            continue
        missing = _missing_requirement(test.name, prefix, requires)
        if missing:
            line = (test.lineno or 0) + 1
            reason = f"needs {missing} (__doctest_requires__), which is not installed"
            skipped.append(SkippedExample(line, test.name, reason))
            continue
        kept.append(test)
    return kept


def _matches(name: str, prefix: str, pattern: str) -> bool:
    if pattern == "*":
        return True
    if pattern == ".":
        return name == prefix
    return fnmatch.fnmatchcase(name, f"{prefix}.{pattern}")


def _missing_requirement(name: str, prefix: str, requires: dict[Any, Any]) -> str:
    for patterns, modules in requires.items():
        if not any(_matches(name, prefix, p) for p in _patterns(patterns)):
            continue
        for requirement in _patterns(modules):
            module = _requirement_module(requirement)
            if module and not _importable(module):
                return module
    return ""


def _patterns(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    try:
        return [item for item in value if isinstance(item, str)]
    except TypeError:
        return []


def _requirement_module(requirement: str) -> str:
    match = _REQUIREMENT_NAME.match(requirement)
    return match[1] if match else ""


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
