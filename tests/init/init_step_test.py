"""``mlsmoke init`` writes ``step`` when the project has exactly one step function the
gate can call, and keeps it only if the gate passes with it; otherwise it shows the
candidates, as it does with ``--dry-run``."""

from __future__ import annotations

import textwrap
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from adoption import mlsmoke
from legacy_repo import DATA, MODEL

from gitrepo import commit_all, init_git_repo

TRAIN_STEP = """\


def train_step(model, batch, optimizer):
    model.train()
    inputs, targets = batch
    optimizer.zero_grad(set_to_none=True)
    loss = model(inputs, targets)
    loss.backward()
    optimizer.step()
    return loss
"""
FORGETS_ZERO_GRAD = TRAIN_STEP.replace(
    "    optimizer.zero_grad(set_to_none=True)\n", ""
)
SECOND_STEP = """\


def clipped_step(model, batch, optimizer, max_norm=1.0):
    x, y = batch
    loss = model(x, y)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return loss
"""


def small_repo(root: Path, train: str) -> Path:
    """A project with the legacy repository's model and batch, and ``train.py``,
    committed."""
    init_git_repo(root)
    (root / "pyproject.toml").write_text('[project]\nname = "tiny"\n')
    (root / "model.py").write_text(MODEL)
    (root / "data.py").write_text(DATA)
    (root / "train.py").write_text(f"import torch\n{textwrap.dedent(train)}")
    commit_all(root, "a small project")
    return root


def gate_table(root: Path) -> dict:
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    return pyproject["tool"]["mlsmoke"]["overfit"]


def test_the_one_step_function_is_written_when_the_gate_passes_with_it(tmp_path):
    repo = small_repo(tmp_path / "repo", TRAIN_STEP)
    ran = mlsmoke(repo, "init")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    table = gate_table(repo)
    assert table.pop("max-steps") >= 20  # calibrated after the pass
    assert table == {
        "model": "model:build_model",
        "batch": "data:example_batch",
        "step": "train:train_step",
    }
    assert 'note: step = "train:train_step", the one step function found' in (
        ran.stdout
    )
    assert 'the gate passed with step = "train:train_step"; it is kept' in ran.stdout
    assert "overfit-batch is on" in ran.stdout


def test_a_step_the_gate_fails_with_is_left_out(tmp_path):
    repo = small_repo(tmp_path / "repo", FORGETS_ZERO_GRAD)
    ran = mlsmoke(repo, "init")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "FAIL step-gradients-accumulate" in ran.stdout
    assert (
        'the gate did not pass with step = "train:train_step"'
        " (step-gradients-accumulate); it is left out" in ran.stderr
    )
    assert "step" not in gate_table(repo)
    assert "overfit-batch is on" in ran.stdout  # its own loop passed without it


def test_two_step_functions_are_shown_and_none_is_written(tmp_path):
    repo = small_repo(tmp_path / "repo", TRAIN_STEP + SECOND_STEP)
    ran = mlsmoke(repo, "init")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "step" not in gate_table(repo)
    for shown in ("train:train_step(model, batch, optimizer)",
                  "train:clipped_step(model, batch, optimizer, max_norm)"):  # fmt: skip
        assert f"note: step candidate: {shown} calls backward()" in ran.stdout
    assert "the gate passed with step" not in ran.stdout
