"""A freshly generated project passes all its hooks and tests at once, and its commit is
blocked by overfit-batch, with the right diagnosis, when a training bug comes in.

The project gets its own venv (torch==2.13.0, pytest, mlsmoke from this checkout, the
project itself), activated for every command the way a developer's shell would be. Its
.pre-commit-config.yaml is rewritten for a machine without GitHub (offline_config.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from baking import TEMPLATE
from cookiecutter.main import cookiecutter
from offline_config import rewrite_config

TORCH = "torch==2.13.0"
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "mlsmoke tests",
    "GIT_AUTHOR_EMAIL": "tests@mlsmoke.invalid",
    "GIT_COMMITTER_NAME": "mlsmoke tests",
    "GIT_COMMITTER_EMAIL": "tests@mlsmoke.invalid",
}
PACKAGE = "spiral_classifier"
TIMEOUT = 900

pytestmark = pytest.mark.e2e


@dataclass(frozen=True)
class Project:
    path: Path
    env: dict[str, str]

    def run(self, *command: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(part) for part in command],
            cwd=self.path,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )

    def commit(self, message: str) -> subprocess.CompletedProcess[str]:
        self.run("git", "add", "--all")
        return self.run("git", "commit", "-m", message)


# The hooks' names as pre-commit prints them; the generated config runs all of them.
EVERY_HOOK = {
    "check-yaml",
    "check-toml",
    "end-of-file-fixer",
    "trailing-whitespace",
    "check-merge-conflict",
    "check-added-large-files",
    "detect-private-key",
    "debug-statements",
    "black",
    "flake8",
    "shellcheck",
    "bash strict mode",
    "doctest",
    "overfit one batch",
}


def passed_hooks(output: str) -> set[str]:
    """The names of the hooks pre-commit reports as Passed in ``output``."""
    return {
        line.rsplit("Passed", 1)[0].rstrip(".").strip()
        for line in output.splitlines()
        if line.endswith("Passed")
    }


def activated_env(venv: Path, pre_commit_home: Path) -> dict[str, str]:
    """The environment of a shell where ``venv`` is activated."""
    return {
        **os.environ,
        **GIT_IDENTITY,
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "VIRTUAL_ENV": str(venv),
        "PRE_COMMIT_HOME": str(pre_commit_home),
        "PRE_COMMIT_COLOR": "never",
    }


def create_venv(venv: Path, project: Path, hook_repo) -> None:
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    pip = [venv / "bin" / "python", "-m", "pip", "install", "--quiet"]
    # The project's dev extra names mlsmoke's GitHub release; offline, it comes from
    # the hook repository instead.
    for args in ([TORCH, "pytest", hook_repo.path], ["-e", project]):
        subprocess.run([*pip, *args], check=True, capture_output=True, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def project(
    tmp_path_factory: pytest.TempPathFactory,
    hook_repo,
    pre_commit_home: Path,
) -> Iterator[Project]:
    """The default project, generated, in git, with its venv and its hooks installed."""
    root = tmp_path_factory.mktemp("generated")
    path = Path(cookiecutter(str(TEMPLATE), no_input=True, output_dir=str(root)))
    subprocess.run(
        ["git", "init", "--quiet", "--initial-branch=main", path], check=True
    )
    rewrite_config(path / ".pre-commit-config.yaml", hook_repo.path, hook_repo.rev)
    venv = root / "venv"
    create_venv(venv, path, hook_repo)
    project = Project(path, activated_env(venv, pre_commit_home))
    installed = project.run(sys.executable, "-m", "pre_commit", "install")
    assert installed.returncode == 0, installed.stderr
    yield project


def test_fresh_project_passes_every_hook(project: Project) -> None:
    project.run("git", "add", "--all")
    ran = project.run(sys.executable, "-m", "pre_commit", "run", "--all-files")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert EVERY_HOOK <= passed_hooks(ran.stdout), ran.stdout


def test_fresh_project_passes_its_tests_and_doctests(project: Project) -> None:
    ran = project.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "failed" not in ran.stdout
    assert (
        "model.py::"
        in project.run(
            "python", "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"
        ).stdout
    )


def test_first_commit_goes_through_every_hook(project: Project) -> None:
    committed = project.commit("Start from the mlsmoke template")
    output = committed.stdout + committed.stderr
    assert committed.returncode == 0, output
    assert EVERY_HOOK <= passed_hooks(output), output


BLOCKS = "self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_blocks))"
BUGS = {
    # A freeze call in the wrong place: every layer built before it stops training.
    "frozen-layers": (
        f"{BLOCKS}\n",
        f"{BLOCKS}\n        self.requires_grad_(False)\n",
        "no-gradient",
    ),
    "flipped-loss-sign": (
        "loss = F.cross_entropy(logits, targets)",
        "loss = -F.cross_entropy(logits, targets)",
        "wrong-objective",
    ),
}


@pytest.mark.parametrize("bug", BUGS)
def test_training_bug_blocks_the_commit_with_its_diagnosis(
    project: Project, bug: str
) -> None:
    model = project.path / "src" / PACKAGE / "model.py"
    # The change being committed: a new name, and the bug that came with it.
    original, buggy, code = BUGS[bug]
    assert original in model.read_text()
    change = f"\n\n\nREVISION_{bug.replace('-', '_').upper()} = 1\n"
    correct = model.read_text().rstrip("\n") + change
    model.write_text(correct.replace(original, buggy))

    blocked = project.commit(f"Introduce {bug}")
    output = blocked.stdout + blocked.stderr
    assert blocked.returncode != 0, output
    assert "- hook id: overfit-batch" in output
    assert f"FAIL {code}" in output, output
    assert project.run("git", "status", "--porcelain").stdout.strip()

    model.write_text(correct)
    fixed = project.commit("Add a constant, without the bug")
    output = fixed.stdout + fixed.stderr
    assert fixed.returncode == 0, output
    assert "overfit one batch" in passed_hooks(output), output
