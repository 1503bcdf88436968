"""Script mode on a second style of repository: an argparse ``train.py`` whose
``main()`` trains through a ``DataLoader`` (worker processes, shuffled) and a
``train_one_epoch`` loop, with the loss computed outside the model."""

from __future__ import annotations

from pathlib import Path

from argparse_shaped import DETACHED_BODY, LR_3E7, NO_ZERO_GRAD, write_argparse_repo
from gitrepo import init_git_repo
from script_mode_test import code, overfit, warnings

GATE = """\
[tool.mlsmoke.overfit]
script = "train.py"
args = ["--no-cuda", "--num-workers", "0", "--hidden-size", "32", "--num-layers",
        "1", "--batch-size", "16", "--output-dir", "{out_dir}"]
"""


def classifier(tmp_path: Path, *changes) -> Path:
    project = write_argparse_repo(init_git_repo(tmp_path / "classifier"), *changes)
    (project / "pyproject.toml").write_text(GATE)
    return project


def test_a_correct_run_passes_on_the_first_dataloader_batch(tmp_path):
    project = classifier(tmp_path)
    ran, result = overfit(project)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert code(result) == "memorized"
    assert "pinned: every batch is the first of the first DataLoader" in ran.stdout
    assert not warnings(result)
    assert not (project / "runs").exists()


def test_an_lr_too_low_names_the_parser_default_that_sets_it(tmp_path):
    ran, result = overfit(classifier(tmp_path, LR_3E7))
    assert ran.returncode == 1 and code(result) == "lr-too-low", ran.stdout
    line = next(
        number
        for number, text in enumerate(
            (tmp_path / "classifier" / "train.py").read_text().splitlines(), 1
        )
        if '"--lr"' in text
    )
    assert f"in train.py:{line} (--lr default 3e-07)" in ran.stdout


def test_a_missing_zero_grad_is_blocked(tmp_path):
    ran, result = overfit(classifier(tmp_path, NO_ZERO_GRAD))
    assert ran.returncode == 1
    assert code(result) == "step-gradients-accumulate", ran.stdout
    assert "before loss.backward()" in " ".join(result["diagnosis"]["suggestions"])


def test_a_detached_body_is_blocked_naming_the_parameters_cut_from_the_loss(tmp_path):
    ran, result = overfit(classifier(tmp_path, DETACHED_BODY))
    assert ran.returncode == 1
    assert code(result) == "no-gradient", ran.stdout
    told = " ".join(result["diagnosis"]["evidence"])
    assert "cut from the loss" in told and "body.0.weight" in told
