"""What a run ahead reads of the pre-commit run that started it: the config, and the
files it will give the hooks."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gitrepo import commit_all, init_git_repo
from mlsmoke.ahead import torchfix
from mlsmoke.ahead.invocation import Invocation, files_to_check, lists_hook, parse

HOOK_IMPL = ["python", "-mpre_commit", "hook-impl", "--config=.pre-commit-config.yaml"]


@pytest.mark.parametrize(
    "argv, expected",
    [
        (
            [*HOOK_IMPL, "--hook-type=pre-commit", "--hook-dir", "/r/.git/hooks", "--"],
            Invocation(".pre-commit-config.yaml", False, False),
        ),
        (
            ["pre-commit", "run", "-a", "-c", "other.yaml"],
            Invocation("other.yaml", True, False),
        ),
        (
            ["pre-commit", "run", "--files", "a.py"],
            Invocation(".pre-commit-config.yaml", False, True),
        ),
        (
            [*HOOK_IMPL, "--hook-type=pre-push", "--", "origin", "url"],
            Invocation(".pre-commit-config.yaml", False, True),
        ),
        (
            ["pre-commit", "run", "--hook-stage", "manual"],
            Invocation(".pre-commit-config.yaml", False, True),
        ),
    ],
    ids=["git commit", "--all-files", "--files", "pre-push", "manual stage"],
)
def test_the_options_that_decide_the_files(argv, expected, monkeypatch):
    monkeypatch.delenv("PRE_COMMIT_FROM_REF", raising=False)
    assert parse(argv) == expected


@pytest.mark.parametrize(
    "text, listed",
    [
        ("    hooks:\n      - id: torchfix\n", True),
        ("      - id: 'torchfix'  # TorchFix's codes\n", True),
        ("      - id: torchfix-extra\n", False),
        ("      - id: flake8\n        name: torchfix\n", False),
    ],
)
def test_a_hook_is_listed_by_its_id_line(tmp_path: Path, text, listed):
    config = tmp_path / ".pre-commit-config.yaml"
    config.write_text("repos:\n  - repo: local\n" + text)
    assert lists_hook(config, "torchfix") is listed
    assert not lists_hook(tmp_path / "missing.yaml", "torchfix")


def test_staged_and_all_files_as_the_torchfix_hook_gets_them(tmp_path: Path):
    root = init_git_repo(tmp_path / "repo")
    for name in ("model.py", "README.md", "pyproject.toml", "conf/other.toml"):
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text("x\n")
    commit_all(root, "start")
    (root / "model.py").write_text("y\n")
    (root / "train.py").write_text("z\n")
    (root / "README.md").write_text("z\n")
    subprocess.run(["git", "add", "train.py", "README.md"], cwd=root, check=True)
    staged = files_to_check(root, Invocation(".pre-commit-config.yaml", False, False))
    assert staged == ["README.md", "train.py"]  # model.py is not staged
    every = files_to_check(root, Invocation(".pre-commit-config.yaml", True, False))
    tracked = ["README.md", "conf/other.toml", "model.py", "pyproject.toml", "train.py"]
    assert every == tracked  # the index's, as pre-commit's --all-files
    assert files_to_check(root, Invocation("x", False, True)) is None


def test_torchfix_is_planned_on_python_files_and_pyproject(tmp_path: Path, monkeypatch):
    root = init_git_repo(tmp_path / "repo")
    for name in ("a.py", "b.md", "pyproject.toml", "c.toml", "d.pyc"):
        (root / name).write_text("x\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    monkeypatch.chdir(root)
    run = Invocation(".pre-commit-config.yaml", False, False)
    assert torchfix.plan(root.resolve(), run) == ["a.py", "pyproject.toml"]
    assert torchfix.plan(root.resolve(), run._replace(other_files=True)) is None
