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
from pre_commit_output import passed_hooks

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
    "pre-commit-hooks basics",
    "black",
    "flake8",
    "shellcheck",
    "bash strict mode",
    "doctest",
    "overfit one batch",
    "data expectations",
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


MODEL = f"src/{PACKAGE}/model.py"
RECIPE = f"src/{PACKAGE}/recipe.py"
DATA = f"src/{PACKAGE}/data.py"


@dataclass(frozen=True)
class Bug:
    """A change to one file of the project, and what the blocked commit must show."""

    path: str
    original: str
    buggy: str
    hook: str
    shows: tuple[str, ...]


BLOCKS = "self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_blocks))"
SCHEDULE = """    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: lr_factor(step, config)
    )
"""
HALVING = (
    "    scheduler = torch.optim.lr_scheduler.StepLR("
    "optimizer, step_size=1, gamma=0.5)\n"
)
BUGS = {
    # A freeze call in the wrong place: every layer built before it stops training.
    "frozen-layers": Bug(
        MODEL,
        f"{BLOCKS}\n",
        f"{BLOCKS}\n        self.requires_grad_(False)\n",
        "overfit-batch",
        ("FAIL no-gradient",),
    ),
    "flipped-loss-sign": Bug(
        MODEL,
        "loss = F.cross_entropy(logits, targets)",
        "loss = -F.cross_entropy(logits, targets)",
        "overfit-batch",
        ("FAIL wrong-objective",),
    ),
    # The gate trains with train.py's recipe, so a typo in it fails at commit time.
    "training-lr-typed-as-3e-6": Bug(
        RECIPE,
        "lr: float = 3e-3",
        "lr: float = 3e-6",
        "overfit-batch",
        ("FAIL lr-too-low",),
    ),
    "scheduler-halves-the-lr-every-step": Bug(
        RECIPE, SCHEDULE, HALVING, "overfit-batch", ("FAIL lr-too-low", "StepLR")
    ),
    # The gate calls train.py's train_step, so a bug in the loop fails at commit time.
    "zero-grad-deleted": Bug(
        "train.py",
        "    optimizer.zero_grad(set_to_none=True)\n",
        "",
        "overfit-batch",
        ("FAIL step-gradients-accumulate", "fix at train.py:"),
    ),
    # The template's expectations.json holds the recorded class range.
    "labels-made-1-based": Bug(
        DATA,
        "labels = torch.arange(n) % n_classes",
        "labels = torch.arange(n) % n_classes + 1",
        "data-expectations",
        ("labels are 1-based",),
    ),
    # TorchFix's TOR401, turned on by the project's .flake8.
    "loader-without-workers": Bug(
        DATA,
        "num_workers=config.num_workers,",
        "num_workers=0,",
        "torchfix",
        ("TOR401",),
    ),
}


def hook_output(output: str, hook: str) -> str:
    """The part of pre-commit's ``output`` that one failing hook printed."""
    marker = f"- hook id: {hook}\n"
    assert marker in output, output
    return output.split(marker, 1)[1].split("\n- hook id:", 1)[0]


@pytest.mark.parametrize("bug", BUGS)
def test_training_bug_blocks_the_commit_with_its_diagnosis(
    project: Project, bug: str
) -> None:
    path = project.path / BUGS[bug].path
    # The change being committed: a new name, and the bug that came with it.
    original, buggy = BUGS[bug].original, BUGS[bug].buggy
    assert original in path.read_text()
    change = f"\n\n\nREVISION_{bug.replace('-', '_').upper()} = 1\n"
    correct = path.read_text().rstrip("\n") + change
    path.write_text(correct.replace(original, buggy))

    try:
        blocked = project.commit(f"Introduce {bug}")
        output = blocked.stdout + blocked.stderr
        assert blocked.returncode != 0, output
        shown = hook_output(output, BUGS[bug].hook)
        for text in BUGS[bug].shows:
            assert text in shown, output
        assert project.run("git", "status", "--porcelain").stdout.strip()
    finally:  # the next bug starts from a correct project, whatever happened here
        path.write_text(correct)
    fixed = project.commit("Add a constant, without the bug")
    output = fixed.stdout + fixed.stderr
    assert fixed.returncode == 0, output
    assert "overfit one batch" in passed_hooks(output), output


def test_a_pass_shows_its_warnings_at_the_commit(project: Project) -> None:
    """pre-commit hides a passing hook's output; the template's `verbose: true` on
    overfit-batch shows what the gate found on a pass: here a dropout that was on
    while the gate trained."""
    path = project.path / MODEL
    original = path.read_text()
    assert "dropout: float = 0.0" in original
    path.write_text(
        original.rstrip("\n").replace("dropout: float = 0.0", "dropout: float = 0.1")
        + "\n\n\nREVISION_DROPOUT = 1\n"
    )
    try:
        committed = project.commit("Turn dropout on")
    finally:  # the next test starts from the template's model
        path.write_text(original.rstrip("\n") + "\n\n\nREVISION_NO_DROPOUT = 1\n")
    output = committed.stdout + committed.stderr
    assert committed.returncode == 0, output
    shown = hook_output(output, "overfit-batch")
    assert "PASS" in shown and "dropout-active" in shown, output
    assert project.commit("Turn dropout off").returncode == 0


SAMPLER = "        sampler = DistributedSampler(dataset, seed=config.seed)\n"


def test_a_push_runs_the_gate_on_2_ranks_and_a_loader_without_sampler_fails_it(
    project: Project,
) -> None:
    """`pre-commit install` installed the pre-push hook too; overfit-batch-ddp runs
    there, on the DDP of build_model() and the DistributedSampler of train_loader()."""
    assert (project.path / ".git" / "hooks" / "pre-push").is_file()
    push = ("pre_commit", "run", "overfit-batch-ddp", "--hook-stage", "pre-push")
    ran = project.run(sys.executable, "-m", *push, "--all-files")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "overfit one batch on 2 ranks" in passed_hooks(ran.stdout), ran.stdout

    data = project.path / DATA
    original = data.read_text()
    assert SAMPLER in original
    data.write_text(original.replace(SAMPLER, "        pass\n"))
    try:
        blocked = project.run(sys.executable, "-m", *push, "--files", DATA)
    finally:
        data.write_text(original)
    shown = hook_output(blocked.stdout, "overfit-batch-ddp")
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "FAIL missing-distributed-sampler" in shown
    assert "all 2 ranks trained on the same batch" in shown
