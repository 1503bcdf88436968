"""Releases and where a project's hooks come from: a `v<version>` tag is what
`pre-commit autoupdate` moves to, and the repo/rev pair `init` and `new` write always
exists (docs/releasing.md, docs/install.md)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

import mlsmoke
from gitrepo import commit_all, git, init_git_repo
from mlsmoke.errors import UsageError
from mlsmoke.hook_source import (
    UPSTREAM_URL,
    from_checkout,
    from_direct_url,
    given,
    release_tag,
)

TAG = release_tag()


def tagged_clone(hook_repo, dest: Path) -> Path:
    shutil.copytree(hook_repo.path, dest, symlinks=True)
    git(dest, "tag", TAG)
    return dest


def test_a_clone_at_the_release_tag_with_the_upstream_remote_writes_the_tag(
    hook_repo, tmp_path
):
    clone = tagged_clone(hook_repo, tmp_path / "mlsmoke")
    assert from_checkout(clone, "a clone").repo == str(clone)  # no upstream remote
    git(clone, "remote", "add", "origin", UPSTREAM_URL + ".git")
    source = from_checkout(clone, "a clone")
    assert (source.repo, source.rev) == (UPSTREAM_URL, TAG)
    (clone / "NEWS").write_text("after the release\n")
    head = commit_all(clone, "after the release")
    source = from_checkout(clone, "a clone")
    assert (source.repo, source.rev) == (str(clone), head)
    assert source.requirement == f"mlsmoke @ git+file://localhost{clone}@{head}"


def test_installs_say_where_their_hooks_are(tmp_path):
    assert from_direct_url(None).rev == TAG  # from a package index: a release
    vcs = {"url": "https://example.org/m.git", "vcs_info": {"vcs": "git"}}
    vcs["vcs_info"]["commit_id"] = "0" * 40
    assert from_direct_url(vcs).rev == "0" * 40
    vcs["vcs_info"]["requested_revision"] = TAG
    assert from_direct_url(vcs).rev == TAG
    wheel = {"url": f"file://{tmp_path}/mlsmoke.whl", "archive_info": {}}
    with pytest.raises(UsageError, match="--hooks-repo URL_OR_PATH --hooks-rev"):
        from_direct_url(wheel)


def test_a_rev_that_does_not_exist_is_refused(hook_repo):
    assert given(str(hook_repo.path), None).rev == hook_repo.rev
    with pytest.raises(UsageError, match="no such commit"):
        given(str(hook_repo.path), "v99.0.0")
    with pytest.raises(UsageError, match="give the rev too"):
        given("https://example.org/mlsmoke", None)
    assert given("https://example.org/mlsmoke", "v1").rev == "v1"


@pytest.mark.e2e
def test_autoupdate_moves_a_project_to_the_newest_release_tag(
    hook_repo, tmp_path, run_pre_commit
):
    clone = tagged_clone(hook_repo, tmp_path / "mlsmoke")
    init = clone / "hooks" / "mlsmoke" / "__init__.py"
    init.write_text(init.read_text().replace(mlsmoke.__version__, "99.0.0"))
    commit_all(clone, "mlsmoke 99.0.0")
    git(clone, "tag", "v99.0.0")
    project = init_git_repo(tmp_path / "project")
    config = project / ".pre-commit-config.yaml"
    config.write_text(
        f"repos:\n  - repo: {clone}\n    rev: {TAG}\n"
        "    hooks:\n      - id: bash-strict-mode\n"
    )
    commit_all(project, "pin the release")
    ran = run_pre_commit(project, "autoupdate")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert yaml.safe_load(config.read_text())["repos"][0]["rev"] == "v99.0.0"
    assert f"updating {TAG} -> v99.0.0" in ran.stdout


def test_the_version_lives_in_one_place():
    root = Path(mlsmoke.__file__).resolve().parents[2]
    pyproject = (root / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert mlsmoke.__version__ not in pyproject
    described = subprocess.run(
        ["git", "grep", "-n", "-F", f'"{mlsmoke.__version__}"', "--", "hooks"],
        cwd=root,
        capture_output=True,
        text=True,
    ).stdout
    assert described.splitlines() == [
        f'hooks/mlsmoke/__init__.py:3:__version__ = "{mlsmoke.__version__}"'
    ]
