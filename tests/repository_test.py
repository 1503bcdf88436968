"""The hook repository as a whole: its manifest, its README, its own pre-commit config,
and the wheel that ``pip install .`` builds."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from gitrepo import ROOT, HookRepo, commit_all

MANIFEST = ROOT / ".pre-commit-hooks.yaml"
CONFIG = ROOT / ".pre-commit-config.yaml"


def _pre_commit(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
    )


def manifest_ids() -> list[str]:
    return [hook["id"] for hook in yaml.safe_load(MANIFEST.read_text())]


@pytest.mark.parametrize("hook_id", manifest_ids())
def test_every_manifest_id_has_a_section_in_the_readme(hook_id: str) -> None:
    readme = (ROOT / "README.md").read_text()
    assert re.search(rf"^#+ `{re.escape(hook_id)}`$", readme, flags=re.M)


def test_manifest_validates() -> None:
    completed = _pre_commit("validate-manifest", str(MANIFEST))
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_own_config_validates() -> None:
    completed = _pre_commit("validate-config", str(CONFIG))
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_strict_mode_manifest_entry() -> None:
    (hook,) = [
        h for h in yaml.safe_load(MANIFEST.read_text()) if h["id"] == "bash-strict-mode"
    ]
    assert hook["entry"] == "mlsmoke strict-mode" and hook["language"] == "python"
    assert hook["types_or"] == ["shell", "toml"] and hook["exclude_types"] == ["zsh"]
    assert hook["stages"] == ["pre-commit", "pre-merge-commit", "pre-push", "manual"]
    assert "minimum_pre_commit_version" in hook


# pre-commit-hooks' checks, which read no table of mlsmoke's: every file, as theirs get
READS_NO_TABLE = {"basics"}


@pytest.mark.parametrize("hook_id", sorted(set(manifest_ids()) - READS_NO_TABLE))
def test_every_hook_also_runs_on_the_project_config_alone(hook_id: str) -> None:
    """Each hook reads a [tool.mlsmoke.*] table: a commit that edits pyproject.toml
    alone runs it, and no other .toml file does."""
    (hook,) = [h for h in yaml.safe_load(MANIFEST.read_text()) if h["id"] == hook_id]
    assert "toml" in hook["types_or"] and "types" not in hook
    files = re.compile(hook["files"])
    for name in ["pyproject.toml", "model.py", "scripts/train", "docs/a.md", "run.sh"]:
        assert files.search(name), name
    for name in ["sub/pyproject.toml", "ruff.toml", "pyproject.toml.bak.toml"]:
        assert not files.search(name), name


def test_the_basics_hook_gets_every_file() -> None:
    (hook,) = [h for h in yaml.safe_load(MANIFEST.read_text()) if h["id"] == "basics"]
    assert not {"types", "types_or", "exclude_types", "files", "exclude"} & set(hook)


@pytest.mark.e2e
def test_own_local_strict_mode_hook_runs(
    tmp_path: Path, hook_repo: HookRepo, run_pre_commit
) -> None:
    """The `repo: local` entry of this repository's own config, run for real."""
    checkout = tmp_path / "checkout"
    shutil.copytree(hook_repo.path, checkout)
    repos = yaml.safe_load(CONFIG.read_text())["repos"]
    local = [repo for repo in repos if repo["repo"] == "local"]
    assert [h["id"] for repo in local for h in repo["hooks"]] == ["bash-strict-mode"]
    config = tmp_path / "local-hooks.yaml"
    config.write_text(yaml.safe_dump({"repos": local}))
    loose = checkout / "loose.sh"
    loose.write_text("#!/bin/bash\necho unprotected\n")
    loose.chmod(0o755)
    commit_all(checkout, "a loose script")

    passing = run_pre_commit(checkout, "run", "-c", str(config), "--files", ".ci/run")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "bash strict mode (this checkout)" in passing.stdout
    failing = run_pre_commit(checkout, "run", "-c", str(config), "--files", "loose.sh")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "loose.sh:2:1: SM001" in failing.stdout


@pytest.mark.e2e
def test_wheel_holds_mlsmoke_and_no_templates_package(
    tmp_path: Path, hook_repo: HookRepo
) -> None:
    """``pip install .`` from a clean copy: setuptools must not take templates/ for a
    package."""
    clean = tmp_path / "clean"
    shutil.copytree(hook_repo.path, clean, ignore=shutil.ignore_patterns(".git"))
    completed = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
        + ["--quiet", "--wheel-dir", str(tmp_path / "dist"), str(clean)],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0, completed.stderr
    (wheel,) = (tmp_path / "dist").glob("mlsmoke-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "mlsmoke/cli.py" in names
    assert "mlsmoke/strict_mode/main.py" in names and "mlsmoke/py.typed" in names
    top_level = {name.split("/")[0] for name in names}
    assert "templates" not in top_level and "tests" not in top_level
    assert not [name for name in names if name.startswith(("hooks/", "benchmarks/"))]
