"""``mlsmoke init --offline``: the config it writes needs no GitHub. Real pre-commit
builds every hook from the package index and mlsmoke's from a local clone, and
``run --all-files`` passes on day one."""

from __future__ import annotations

import pytest
import yaml
from adoption import PROJECT_ENV, mlsmoke
from legacy_repo import write_legacy_repo

from gitrepo import commit_all, init_git_repo
from mlsmoke.offline_hooks import UPSTREAMS

LOCAL_ONLY = """\
repos:
-   repo: local
    hooks:
    -   id: no-todo-fixme
        name: no FIXME left behind
        language: pygrep
        entry: 'FIXME'
        types: [python]
"""


@pytest.mark.e2e
def test_init_offline_passes_all_files_with_no_github(
    tmp_path, hook_repo, run_pre_commit
):
    repo = write_legacy_repo(tmp_path / "repo")
    # An air-gapped team's config: its own local hook, nothing from GitHub.
    (repo / ".pre-commit-config.yaml").write_text(LOCAL_ONLY)
    init_git_repo(repo)
    commit_all(repo, "legacy")
    source = ["--hooks-repo", str(hook_repo.path), "--hooks-rev", hook_repo.rev]
    ran = mlsmoke(repo, "init", "--offline", "--no-gate", *source)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    urls = {entry["repo"] for entry in config["repos"]}
    assert urls == {"local", str(hook_repo.path)}
    local = {
        hook["id"]: hook
        for entry in config["repos"]
        if entry["repo"] == "local"
        for hook in entry["hooks"]
    }
    assert local["flake8"]["additional_dependencies"] == ["flake8==7.5.0"]
    assert local["black"]["language"] == "python"
    assert {"no-todo-fixme", "shellcheck", "end-of-file-fixer", "check-yaml"} <= set(
        local
    )
    commit_all(repo, "mlsmoke init --offline")
    ran = run_pre_commit(repo, "run", "--all-files", env=PROJECT_ENV)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "bash strict mode" in ran.stdout and "flake8" in ran.stdout


def test_offline_with_hooks_from_a_url_is_a_usage_error(tmp_path):
    repo = init_git_repo(write_legacy_repo(tmp_path / "repo"))
    commit_all(repo, "legacy")
    url = ["--hooks-repo", "https://github.com/mlsmoke/mlsmoke", "--hooks-rev", "v1"]
    ran = mlsmoke(repo, "init", "--offline", "--no-gate", *url)
    assert ran.returncode == 2
    assert "--offline" in ran.stderr and "needs the network" in ran.stderr
    assert ran.stderr.count("mlsmoke init:") == 1


def test_every_third_party_hook_of_the_template_has_an_offline_equivalent():
    from mlsmoke.hook_repos import HOOK_REPOS

    assert {entry["repo"] for entry in HOOK_REPOS.values()} == set(UPSTREAMS)


# The user's own hook and a comment of theirs, before mlsmoke is adopted.
USERS_OWN = """\
# Our team's hooks. Keep this comment.
repos:
  # no FIXME may land on main
  - repo: local
    hooks:
      - id: no-todo-fixme
        name: no FIXME left behind
        language: pygrep
        entry: 'FIXME'
        types: [python]
"""


@pytest.mark.e2e
def test_init_then_offline_then_online_keeps_the_users_lines(
    tmp_path, hook_repo, run_pre_commit
):
    repo = write_legacy_repo(tmp_path / "repo")
    (repo / ".pre-commit-config.yaml").write_text(USERS_OWN)
    init_git_repo(repo)
    commit_all(repo, "legacy")
    source = ["--hooks-repo", str(hook_repo.path), "--hooks-rev", hook_repo.rev]
    ran = mlsmoke(repo, "init", "--no-gate", *source)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # GitHub is unreachable here: plain init says that --offline exists.
    assert "GitHub is not reachable" in ran.stdout and "--offline" in ran.stdout
    online = (repo / ".pre-commit-config.yaml").read_text()
    assert "https://github.com/PyCQA/flake8" in online
    commit_all(repo, "mlsmoke init")

    ran = mlsmoke(repo, "init", "--offline", "--no-gate", *source)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "wrote: .pre-commit-config.yaml" in ran.stdout
    offline = (repo / ".pre-commit-config.yaml").read_text()
    assert "github.com" not in offline
    for line in USERS_OWN.splitlines():  # the user's own lines, byte for byte
        assert line in offline.splitlines()
    assert offline.startswith(USERS_OWN.split("repos:")[0])
    commit_all(repo, "mlsmoke init --offline")
    ran = run_pre_commit(repo, "run", "--all-files", env=PROJECT_ENV)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "no FIXME left behind" in ran.stdout and "flake8" in ran.stdout

    again = mlsmoke(repo, "init", "--offline", "--no-gate", *source)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "already offline" in again.stdout and "`--online`" in again.stdout

    ran = mlsmoke(repo, "init", "--online", "--no-gate", *source)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (repo / ".pre-commit-config.yaml").read_text() == online


def test_offline_and_online_together_is_a_usage_error(tmp_path):
    repo = init_git_repo(write_legacy_repo(tmp_path / "repo"))
    ran = mlsmoke(repo, "init", "--offline", "--online")
    assert ran.returncode == 2 and "choose one" in ran.stderr
