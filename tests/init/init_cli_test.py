"""``mlsmoke init`` and ``mlsmoke debt`` at the command line: what they refuse, what
``--dry-run`` shows, and that nothing is written on an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from adoption import mlsmoke
from legacy_repo import write_legacy_repo

from gitrepo import commit_all, git, init_git_repo


def legacy(tmp_path: Path) -> Path:
    repo = write_legacy_repo(init_git_repo(tmp_path / "repo"))
    commit_all(repo, "legacy")
    return repo


def test_bad_yaml_is_an_error_naming_the_line_and_nothing_is_written(tmp_path):
    repo = legacy(tmp_path)
    config = repo / ".pre-commit-config.yaml"
    config.write_text(config.read_text() + "ci:\n  skip: [a\n  autofix: b: c\n")
    commit_all(repo, "broken")
    ran = mlsmoke(repo, "init")
    assert ran.returncode == 2
    assert ".pre-commit-config.yaml:" in ran.stderr and "not valid YAML" in ran.stderr
    assert "Traceback" not in ran.stderr
    assert git(repo, "status", "--porcelain") == ""


def test_dry_run_prints_every_diff_and_writes_nothing(tmp_path):
    repo = legacy(tmp_path)
    ran = mlsmoke(repo, "init", "--dry-run")
    assert ran.returncode == 0, ran.stderr
    for name in (".pre-commit-config.yaml", "setup.cfg", "pyproject.toml"):
        assert f"+++ b/{name}" in ran.stdout
    assert "+    src/legacy_pkg/model.py:F401" in ran.stdout
    assert "would write: .pre-commit-config.yaml, setup.cfg, pyproject.toml" in (
        ran.stdout
    )
    assert git(repo, "status", "--porcelain") == ""


def test_an_existing_gate_config_is_replaced_only_with_force(tmp_path):
    repo = legacy(tmp_path)
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text()
        + '\n[tool.mlsmoke.overfit]\nmodel = "a:b"\nbatch = "c:d"\n'
    )
    commit_all(repo, "gate")
    ran = mlsmoke(repo, "init", "--model", "x.y:z", "--batch", "x.y:w", "--dry-run")
    assert ran.returncode == 2
    assert "already configured; --force replaces" in ran.stderr
    assert git(repo, "status", "--porcelain") == ""


def test_model_without_batch_is_a_usage_error(tmp_path):
    ran = mlsmoke(legacy(tmp_path), "init", "--model", "pkg.model:build")
    assert ran.returncode == 2 and "--model and --batch go together" in ran.stderr


def test_outside_a_git_repository_init_says_so(tmp_path):
    ran = mlsmoke(write_legacy_repo(tmp_path), "init")
    assert ran.returncode == 2 and "not a git repository" in ran.stderr


def test_debt_without_baselines_says_none(tmp_path):
    ran = mlsmoke(legacy(tmp_path), "debt")
    assert ran.returncode == 0
    assert ran.stdout.startswith("Baselines: none")


def test_a_flake8_plugin_missing_here_is_named_with_its_install_command(tmp_path):
    repo = legacy(tmp_path)
    config = repo / ".pre-commit-config.yaml"
    config.write_text(
        config.read_text()
        + "-   repo: https://github.com/PyCQA/flake8\n    rev: 7.5.0\n    hooks:\n"
        + "    -   id: flake8\n"
        + "        additional_dependencies: [flake8-not-installed-here==1.0]\n"
    )
    commit_all(repo, "plugin")
    ran = mlsmoke(repo, "init")
    assert ran.returncode == 2
    assert "pip install 'flake8-not-installed-here==1.0'" in ran.stderr
    assert git(repo, "status", "--porcelain") == ""


def test_format_and_fix_scripts_fix_instead_of_baselining(tmp_path):
    repo = legacy(tmp_path)
    dry = mlsmoke(repo, "init", "--format", "--fix-scripts", "--dry-run")
    assert "black: would format 1 files" in dry.stdout
    assert "bash-strict-mode: would fix 1 files" in dry.stdout
    assert git(repo, "status", "--porcelain") == ""
    ran = mlsmoke(repo, "init", "--format", "--fix-scripts")
    assert ran.returncode == 0, ran.stderr
    assert "force-exclude" not in (repo / "pyproject.toml").read_text()
    assert "strict-mode" not in (repo / "pyproject.toml").read_text()
    assert (
        (repo / "scripts" / "train.sh")
        .read_text()
        .startswith("#!/bin/bash\nset -euo pipefail\n")
    )
    assert "def add(a, b):" in (repo / "src" / "legacy_pkg" / "utils.py").read_text()


BASELINED_NUMBER = """
[tool.mlsmoke.doctest]
exclude = [
    # mlsmoke baseline: files that failed doctest, the day the check was adopted.
    "docs/usage.md",
    5,
]
"""
TABLE_TWICE = """
[tool.mlsmoke.doctest]
exclude = ["docs/usage.md"]

[tool.mlsmoke.doctest]
exclude = ["docs"]
"""


@pytest.mark.parametrize(
    "added, message",
    [
        (
            BASELINED_NUMBER,
            "tool.mlsmoke.doctest.exclude: expected an array of strings",
        ),
        (TABLE_TWICE, "not valid TOML: Cannot declare ('tool', 'mlsmoke', 'doctest')"),
    ],
    ids=["number-in-baseline", "table-twice"],
)
def test_a_pyproject_the_hooks_reject_is_rejected_with_the_hooks_message(
    tmp_path, added: str, message: str
):
    repo = legacy(tmp_path)
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + added)
    commit_all(repo, "bad config")
    hook = mlsmoke(repo, "doctest", "docs/usage.md")
    assert hook.returncode == 2 and message in hook.stderr
    said = hook.stderr.removeprefix("mlsmoke doctest: ")
    for command in (["debt"], ["debt", "--update"], ["init"]):
        ran = mlsmoke(repo, *command)
        assert (ran.returncode, ran.stderr) == (2, f"mlsmoke {command[0]}: {said}")
    assert git(repo, "status", "--porcelain") == ""
