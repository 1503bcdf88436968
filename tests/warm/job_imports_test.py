"""What the warm worker is told to preload names real modules, and the worker
imports none of the hooks that tell it."""

import ast
import importlib.util
from pathlib import Path

import pytest

import mlsmoke.warm
from mlsmoke import job_imports

CALLER_PACKAGES = ("adopt", "doctests", "expect", "overfit", "profile", "suites")
CALLER_PACKAGES += ("torch_lint", "worker_start", "worker_command", "job_imports")
CALLER_PACKAGES += ("ahead",)


@pytest.mark.parametrize(
    "names",
    [
        job_imports.GATE,
        job_imports.DOCTEST,
        job_imports.TORCHFIX,
        job_imports.EXPECT,
        job_imports.SUITES,
    ],
)
def test_each_preloaded_mlsmoke_module_exists(names):
    ours = [name for name in names if name.startswith("mlsmoke.")]
    assert ours
    missing = [name for name in ours if importlib.util.find_spec(name) is None]
    assert missing == []


def test_the_worker_imports_none_of_its_callers():
    """warm/ is told what to preload; it never imports the hooks that use it."""
    package = Path(mlsmoke.warm.__file__).parent
    found = []
    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            found += [
                f"{path.name}: {name}"
                for name in names
                if name.split(".")[:2]
                in [["mlsmoke", caller] for caller in CALLER_PACKAGES]
            ]
    assert found == []


def test_the_worker_preloads_what_every_hook_run_ahead_imports():
    from mlsmoke.ahead.jobs import JOBS

    for job in JOBS:
        assert set(job.FIRST_USE) <= set(job_imports.COMMIT_HOOKS), job.HOOK_ID
