"""Ship the project template inside the wheel, as ``mlsmoke/template``.

The template lives at ``templates/ml-project`` so that ``cookiecutter <repo> --directory
templates/ml-project`` works from the repository. Package data must sit inside the
package, so the build copies it there; everything else is declared in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

TEMPLATE = Path(__file__).parent / "templates" / "ml-project"


class BuildPyWithTemplate(build_py):
    def run(self) -> None:
        super().run()
        # An editable install finds the template in the checkout instead.
        if not getattr(self, "editable_mode", False):
            target = Path(self.build_lib) / "mlsmoke" / "template"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(
                TEMPLATE, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
            )


setup(cmdclass={"build_py": BuildPyWithTemplate})
