"""The mlsmoke release a generated project's hooks come from, and the revs of the
third-party hooks it runs.

Each has one home in the mlsmoke package: the version is ``__version__`` in its
``__init__.py``, the third-party revs are ``HOOK_REPOS`` in ``hook_repos.py``, the URL
pip is given for a local clone is ``git_url`` in ``git_url.py``. This Jinja extension
reads them there and gives the template ``mlsmoke_repo``, ``mlsmoke_rev``,
``hook_repos`` and the ``git_url`` filter, so a release or a version bump updates every
generated ``.pre-commit-config.yaml``. It works from a checkout (``cookiecutter <repo>
--directory templates/ml-project``) and from the copy of the template shipped inside the
mlsmoke package, where mlsmoke may not be importable: it reads (or loads) files by
path, never the mlsmoke package.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path
from typing import Any

from jinja2 import Environment
from jinja2.ext import Extension

UPSTREAM_URL = "https://github.com/mlsmoke/mlsmoke"

_HERE = Path(__file__).resolve().parent
# The template sits at templates/ml-project in a checkout, and at mlsmoke/template in an
# installed package.
_PACKAGE_DIRS = (_HERE.parents[1] / "hooks" / "mlsmoke", _HERE.parent)
_VERSION = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.MULTILINE)


def _package_file(name: str) -> Path:
    """``name`` in the mlsmoke package next to this template."""
    for directory in _PACKAGE_DIRS:
        if (directory / name).is_file():
            return directory / name
    searched = ", ".join(str(directory / name) for directory in _PACKAGE_DIRS)
    raise RuntimeError(f"mlsmoke's {name} not found: {searched}")


def mlsmoke_version() -> str:
    """``__version__`` from the mlsmoke package next to this template."""
    path = _package_file("__init__.py")
    match = _VERSION.search(path.read_text(encoding="utf-8"))
    if not match:
        raise RuntimeError(f"no __version__ in {path}")
    return match.group(1)


def hook_repos() -> dict[str, Any]:
    """``HOOK_REPOS`` from the mlsmoke package next to this template (a literal)."""
    path = _package_file("hook_repos.py")
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "HOOK_REPOS"
            for target in node.targets
        ):
            return ast.literal_eval(node.value)
    raise RuntimeError(f"no HOOK_REPOS in {path}")


def _offline_hooks_module() -> str:
    """The path of mlsmoke's offline_hooks.py; empty when this copy has none."""
    try:
        return str(_package_file("offline_hooks.py"))
    except RuntimeError:
        return ""


def git_url(repo: str) -> str:
    """A repo as pip's ``git+`` takes it: ``git_url`` of mlsmoke's git_url.py, loaded
    by path (a local path becomes a ``file://localhost/`` URL)."""
    path = _package_file("git_url.py")
    spec = importlib.util.spec_from_file_location("mlsmoke_git_url", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.git_url(repo)


class MlsmokeRelease(Extension):
    """Adds ``mlsmoke_repo``, ``mlsmoke_rev`` (``v<version>``), ``hook_repos``,
    ``offline_hooks_module`` (the path of mlsmoke's offline_hooks.py, which the
    post-generation hook loads) and the ``git_url`` filter.

    ``mlsmoke_repo`` and ``mlsmoke_rev`` are the defaults of cookiecutter.json's
    ``__mlsmoke_repo`` and ``__mlsmoke_rev``: ``mlsmoke new`` replaces them with where
    the installed mlsmoke came from.
    """

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        environment.globals.update(
            mlsmoke_repo=UPSTREAM_URL,
            mlsmoke_rev=f"v{mlsmoke_version()}",
            hook_repos=hook_repos(),
            offline_hooks_module=_offline_hooks_module(),
        )
        environment.filters["git_url"] = git_url
