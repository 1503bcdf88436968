"""init wires pre-commit-hooks' own hooks where the template has the basics hook."""

from __future__ import annotations

import yaml

from mlsmoke.adopt.precommit_edit import add_hooks
from mlsmoke.adopt.standard import standard_repos, template_config_text
from mlsmoke.adopt.upstream_basics import with_upstream_basics
from mlsmoke.basics.checks import CHECKS

UPSTREAM = "https://github.com/pre-commit/pre-commit-hooks"
MLSMOKE_REPO = """\
repos:
  - repo: /src/mlsmoke
    rev: abc
    hooks:
      - id: warm-worker
      - id: basics
"""


def test_the_basics_hook_becomes_one_hook_per_check_after_its_repo() -> None:
    text = MLSMOKE_REPO + """\
        # a comment of the basics hook
        args: [--checks=check-yaml]
  - repo: https://github.com/psf/black-pre-commit-mirror
    rev: 1.0
    hooks:
      - id: black
"""
    repos = yaml.safe_load(with_upstream_basics(text))["repos"]
    assert [repo["repo"] for repo in repos] == [
        "/src/mlsmoke",
        UPSTREAM,
        "https://github.com/psf/black-pre-commit-mirror",
    ]
    assert [hook["id"] for hook in repos[0]["hooks"]] == ["warm-worker"]
    assert [hook["id"] for hook in repos[1]["hooks"]] == list(CHECKS)
    assert repos[1]["rev"] == "v6.0.0"
    assert "a comment of the basics hook" not in with_upstream_basics(text)


def test_a_repo_left_with_no_hook_goes() -> None:
    text = "repos:\n- repo: /src/mlsmoke\n  rev: abc\n  hooks:\n  - id: basics\n"
    repos = yaml.safe_load(with_upstream_basics(text))["repos"]
    assert [repo["repo"] for repo in repos] == [UPSTREAM]
    assert len(repos[0]["hooks"]) == len(CHECKS)


def test_a_config_without_the_basics_hook_is_unchanged() -> None:
    text = "repos:\n  - repo: local\n    hooks:\n      - id: basics-of-mine\n"
    assert with_upstream_basics(text) == text


def test_init_wires_the_checks_as_their_own_hooks_and_no_basics_hook() -> None:
    repos = standard_repos(template_config_text())
    ids = [hook.id for repo in repos for hook in repo.hooks]
    assert "basics" not in ids
    (upstream,) = [repo for repo in repos if repo.url == UPSTREAM]
    assert [hook.id for hook in upstream.hooks] == list(CHECKS)
    assert repos[0].runs_first


def test_init_adds_no_check_that_the_basics_hook_already_runs() -> None:
    text = MLSMOKE_REPO
    (upstream,) = [repo for repo in standard_repos() if repo.url == UPSTREAM]
    assert add_hooks(text, "c.yaml", upstream) == text
    without = text.replace("      - id: basics\n", "")
    added = yaml.safe_load(add_hooks(without, "c.yaml", upstream))["repos"]
    assert [hook["id"] for hook in added[-1]["hooks"]] == list(CHECKS)
