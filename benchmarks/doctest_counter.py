"""A pytest plugin for the doctest benchmark: what pytest ran, example by example.

Loaded with ``-p benchmarks.doctest_counter``; writes ``{"examples": N, "failed":
[[path, line], ...]}`` to the file named by ``DOCTEST_COUNTER_OUT``. An example counts
as run unless it, or its docstring, was skipped. It also skips the docstrings that a
module's ``__doctest_skip__`` and ``__doctest_requires__`` name, as pytest-doctestplus
does (the libraries measured declare them for pytest-doctestplus).
"""

from __future__ import annotations

import doctest
import fnmatch
import importlib.util
import json
import os
import re
from typing import Any

import pytest

_counts: dict[str, Any] = {"examples": 0, "failed": []}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: Any) -> None:
    test = getattr(item, "dtest", None)
    module = getattr(getattr(item, "parent", None), "obj", None)
    if test is None or module is None:
        return
    prefix = module.__name__
    for pattern in getattr(module, "__doctest_skip__", ()):
        if _matches(test.name, prefix, pattern):
            pytest.skip("__doctest_skip__")
    for patterns, modules in getattr(module, "__doctest_requires__", {}).items():
        patterns = (patterns,) if isinstance(patterns, str) else patterns
        if any(_matches(test.name, prefix, pattern) for pattern in patterns):
            for name in modules:
                name = re.match(r"[\w.]*", name.strip())[0]
                if not _importable(name):
                    pytest.skip(f"__doctest_requires__: {name}")


def _matches(name: str, prefix: str, pattern: str) -> bool:
    if pattern == "*":
        return True
    if pattern == ".":
        return name == prefix
    return fnmatch.fnmatchcase(name, f"{prefix}.{pattern}")


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    test = getattr(item, "dtest", None)
    if test is None or call.when != "call" or report.skipped:
        return
    flags = getattr(getattr(item, "runner", None), "optionflags", 0)
    _counts["examples"] += sum(
        1
        for example in test.examples
        if not example.options.get(doctest.SKIP, flags & doctest.SKIP)
    )
    failures = getattr(call.excinfo.value, "failures", None) if call.excinfo else None
    if call.excinfo and failures is None:
        failures = [call.excinfo.value]
    for failure in failures or []:
        example, failed_test = getattr(failure, "example", None), getattr(
            failure, "test", test
        )
        if example is None:
            continue
        line = (failed_test.lineno or 0) + example.lineno + 1
        _counts["failed"].append([os.path.relpath(failed_test.filename), line])


def pytest_sessionfinish(session: Any) -> None:
    path = os.environ.get("DOCTEST_COUNTER_OUT")
    if path:
        with open(path, "w", encoding="utf-8") as file:
            json.dump(_counts, file)
