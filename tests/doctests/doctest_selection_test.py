"""Pure decisions: module names, excluded paths, and the modules examples need."""

from __future__ import annotations

from pathlib import Path, PurePath

import pytest

from mlsmoke.doctests.modules import locate_module
from mlsmoke.doctests.requirements import (
    example_imports,
    Needs,
    module_level_names,
    parse_imports,
    required_modules,
)
from mlsmoke.doctests.selection import is_excluded


def touch(root: Path, *names: str) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).touch()


@pytest.mark.parametrize(
    ("files", "target", "name", "search_root", "script_dir"),
    [
        (["pkg/__init__.py"], "pkg/mod.py", "pkg.mod", ".", None),
        (["pkg/__init__.py"], "pkg/__init__.py", "pkg", ".", None),
        (["src/pkg/__init__.py"], "src/pkg/mod.py", "pkg.mod", "src", None),
        (
            ["src/ns/pkg/__init__.py"],
            "src/ns/pkg/mod.py",
            "ns.pkg.mod",
            "src",
            "src/ns",
        ),
        (["scripts/x"], "scripts/train.py", "scripts.train", ".", "scripts"),
        (
            ["lib/a/pyproject.toml", "lib/a/a/__init__.py"],
            "lib/a/a/m.py",
            "a.m",
            "lib/a",
            None,
        ),
        (["mod.py"], "mod.py", "mod", ".", None),
        (["my-scripts/x"], "my-scripts/run.py", "", ".", "my-scripts"),
        (["bin/x"], "bin/tool", "bin.tool", ".", "bin"),
        (["class/x"], "class/m.py", "", ".", "class"),  # a keyword is no module name
    ],
)
def test_locate_module(
    tmp_path: Path, files, target: str, name: str, search_root: str, script_dir
) -> None:
    touch(tmp_path, *files, target)
    location = locate_module(tmp_path / target, tmp_path)
    assert location.name == name
    assert location.search_root == (tmp_path / search_root).resolve()
    expected_script_dir = (tmp_path / script_dir).resolve() if script_dir else None
    assert location.script_dir == expected_script_dir


@pytest.mark.parametrize(
    ("path", "globs", "excluded"),
    [
        ("docs/old/a.md", ["docs/old"], True),
        ("docs/old/a.md", ["docs/old/"], True),
        ("docs/old/a.md", ["docs/*"], True),
        ("docs/old/a.md", ["*.md"], True),
        ("docs/new/a.md", ["docs/old"], False),
        ("src/pkg/mod.py", ["**/mod.py"], True),
        ("src/pkg/mod.py", ["mod.py"], False),
        ("src/pkg/mod.py", [], False),
    ],
)
def test_is_excluded(path: str, globs: list[str], excluded: bool) -> None:
    assert is_excluded(PurePath(path), globs) is excluded


def test_module_level_imports_leave_out_optional_ones(tmp_path: Path) -> None:
    source = (
        "import os, numpy.linalg\nfrom torch import nn\nfrom . import sibling\n"
        "from ..core import base\n"
        "try:\n    import yaml\nexcept ImportError:\n    yaml = None\n"
        "def f():\n    import pandas\n"
    )
    touch(tmp_path, "pkg/__init__.py", "pkg/sub/__init__.py")
    module = tmp_path / "pkg/sub/mod.py"
    names = module_level_names(parse_imports(module, source), module, tmp_path)
    assert set(names) == {
        "os",
        "numpy.linalg",
        "torch",
        "torch.nn",
        "pkg.sub",
        "pkg.sub.sibling",
        "pkg.core",
        "pkg.core.base",
    }
    top = tmp_path / "pkg/mod.py"
    assert (
        module_level_names(parse_imports(top, "from ... import x"), top, tmp_path) == []
    )


def test_python_files_need_what_their_docstrings_import(tmp_path: Path) -> None:
    source = (
        '"""\n>>> import numpy\n"""\n'
        "class A:\n    '>>> import torch'\n"
        "    async def f(self):\n        '>>> from scipy import stats'\n"
        "DATA = '>>> import not_run_only_data'\n"
    )
    names = set(parse_imports(tmp_path / "m.py", source).examples)
    assert names == {"numpy", "torch", "scipy"}
    broken = parse_imports(tmp_path / "m.py", "def broken(:")
    assert (broken.module, broken.examples) == ([], [])


def test_example_imports_leave_out_skipped_lines() -> None:
    text = (
        ">>> import numpy as np\n"
        "    >>> from torch.nn import Linear\n"
        ">>> import cupy  # doctest: +SKIP\n"
        ">>> from .. import sibling\n"
        "import pandas\n"
    )
    assert set(example_imports(text)) == {"numpy", "torch.nn"}


def test_required_modules_are_third_party_only(tmp_path: Path) -> None:
    touch(tmp_path, "src/mypkg/__init__.py", "helpers.py")
    files = {
        tmp_path / "src/mypkg/mod.py": "import json\nimport torch\nimport mypkg\n",
        tmp_path
        / "README.md": ">>> import helpers\n>>> import numpy\n>>> import sys\n",
    }
    assert required_modules(files, tmp_path) == Needs(
        required={"torch": tmp_path / "src/mypkg/mod.py"},
        wanted={"numpy": tmp_path / "README.md"},
    )


def test_a_data_directory_named_like_a_dependency_is_not_local(tmp_path: Path) -> None:
    touch(tmp_path, "wandb/run-1/files/config.yaml", "mypkg/helpers.py")
    files = {tmp_path / "train.py": "import wandb\nimport mypkg.helpers\n'>>> 1'\n"}
    assert list(required_modules(files, tmp_path).required) == ["wandb"]


def test_required_modules_follow_the_projects_own_imports(tmp_path: Path) -> None:
    write = {
        "src/app/__init__.py": "import lightning\n",
        "src/app/data/__init__.py": "",
        "src/app/data/io.py": "import yaml\nfrom ..model import Net\n",
        "src/app/model.py": "from torch import nn\nclass Net: pass\n",
        "src/app/unused.py": "import pandas\n",
    }
    for name, text in write.items():
        touch(tmp_path, name)
        (tmp_path / name).write_text(text)
    readme = {tmp_path / "README.md": ">>> from app.data.io import load\n"}
    assert required_modules(readme, tmp_path) == Needs(
        required={},
        wanted={
            "lightning": tmp_path / "src/app/__init__.py",
            "torch": tmp_path / "src/app/model.py",
            "yaml": tmp_path / "src/app/data/io.py",
        },
    )
