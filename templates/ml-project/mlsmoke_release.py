"""The mlsmoke release a generated project's hooks come from.

The version has one home, ``__version__`` in mlsmoke's ``__init__.py``. This Jinja
extension reads it there and gives the template ``mlsmoke_repo`` and ``mlsmoke_rev``,
so a release updates every generated ``.pre-commit-config.yaml``. It works from a
checkout (``cookiecutter <repo> --directory templates/ml-project``) and from the copy of
the template shipped inside the mlsmoke package.
"""

from __future__ import annotations

import re
from pathlib import Path

from jinja2 import Environment
from jinja2.ext import Extension

UPSTREAM_URL = "https://github.com/mlsmoke/mlsmoke"

_HERE = Path(__file__).resolve().parent
# The template sits at templates/ml-project in a checkout, and at mlsmoke/template in an
# installed package.
_VERSION_FILES = (
    _HERE.parents[1] / "hooks" / "mlsmoke" / "__init__.py",
    _HERE.parent / "__init__.py",
)
_VERSION = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.MULTILINE)


def mlsmoke_version() -> str:
    """``__version__`` from the mlsmoke package next to this template."""
    for path in _VERSION_FILES:
        if path.is_file():
            match = _VERSION.search(path.read_text(encoding="utf-8"))
            if match:
                return match.group(1)
    searched = ", ".join(str(path) for path in _VERSION_FILES)
    raise RuntimeError(f"mlsmoke's __version__ not found in: {searched}")


class MlsmokeRelease(Extension):
    """Adds ``mlsmoke_repo`` and ``mlsmoke_rev`` (``v<version>``) to the globals."""

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        environment.globals.update(
            mlsmoke_repo=UPSTREAM_URL, mlsmoke_rev=f"v{mlsmoke_version()}"
        )
