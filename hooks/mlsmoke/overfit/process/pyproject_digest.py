"""What of the project's pyproject.toml a gate's pass depends on.

pyproject.toml is watched by default, and the overfit-batch hook runs on a commit that
edits it. The gate's own settings enter the pass cache's key as parsed
(``cache.cache_key``), so ``[tool.mlsmoke]`` is left out here: an edit of a comment, of
another hook's table or of a key to its default value is no change. So are the
``[project]`` keys that describe the package to readers and indexes, and the tables of
linters, formatters and test runners, which nothing in a run reads. Everything else
counts (dependencies, build settings, a table the project's own code reads): an edit
there runs the gate again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mlsmoke.config import TOOL_PATH, tomllib

DESCRIPTIVE_PROJECT_KEYS = frozenset(
    {
        "authors",
        "classifiers",
        "description",
        "keywords",
        "license",
        "license-files",
        "maintainers",
        "readme",
        "urls",
        "version",
    }
)
# [tool.X] tables of tools that check or format code, never run by the gate.
CHECKER_TOOLS = frozenset(
    {
        "bandit",
        "black",
        "codespell",
        "coverage",
        "docformatter",
        "flake8",
        "isort",
        "mypy",
        "pydocstyle",
        "pylint",
        "pyright",
        "pytest",
        "ruff",
        "towncrier",
    }
)
_OWN_TOOL = TOOL_PATH.split(".")[1]


def relevant_part(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` (a parsed pyproject.toml) without what cannot change a gate's run.

    >>> relevant_part({"project": {"name": "demo", "description": "one"}})
    {'project': {'name': 'demo'}}
    >>> relevant_part({"tool": {"mlsmoke": {"overfit": {}}, "black": {}, "demo": {}}})
    {'tool': {'demo': {}}}
    """
    kept = dict(data)
    project = kept.get("project")
    if isinstance(project, Mapping):
        kept["project"] = {
            key: value
            for key, value in project.items()
            if key not in DESCRIPTIVE_PROJECT_KEYS
        }
    tool = kept.get("tool")
    if isinstance(tool, Mapping):
        kept["tool"] = {
            name: table
            for name, table in tool.items()
            if name != _OWN_TOOL and name not in CHECKER_TOOLS
        }
    return kept


def pyproject_digest(path: Path) -> str:
    """The sha256 of what of ``path`` counts (:func:`relevant_part`); of its bytes when
    it does not parse (the settings' own loading then says why), "missing" when it
    cannot be read."""
    try:
        data = path.read_bytes()
    except OSError:
        return "missing"
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
        return hashlib.sha256(data).hexdigest()
    text = json.dumps(relevant_part(parsed), sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
