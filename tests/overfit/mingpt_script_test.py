"""Script mode on a repository shaped like minGPT: the project script builds a library
``Trainer`` whose ``run()`` holds the loop, the config is a ``CfgNode`` set inside
``get_config()``, the targets are masked with -1 outside the answer and the model
trains with dropout. Each realistic mistake gets its verdict and its cause."""

from __future__ import annotations

from pathlib import Path

from gitrepo import init_git_repo
from mingpt_shaped import (
    DETACHED_ATTENTION,
    LR_TOO_LOW,
    UNSHIFTED_TARGETS,
    Change,
    write_mingpt_repo,
)
from script_mode_test import code, overfit, warnings


def mingpt(tmp_path: Path, *changes: Change, **kw) -> Path:
    return write_mingpt_repo(init_git_repo(tmp_path / "mingpt"), *changes, **kw)


def line_of(project: Path, change: Change) -> int:
    text = (project / change.file).read_text()
    return text[: text.index(change.new)].count("\n") + 1


def test_a_correct_run_through_the_trainer_passes(tmp_path):
    project = mingpt(tmp_path)
    ran, result = overfit(project)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert code(result) == "memorized"
    assert "target-copies-input" not in warnings(result)
    assert "script-writes-project" not in warnings(result)
    assert not (project / "out").exists()  # --system.work_dir='{out_dir}'


def test_a_script_that_writes_into_the_project_is_named_with_the_files(tmp_path):
    project = mingpt(tmp_path, args=[])
    ran, result = overfit(project)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    written = warnings(result)["script-writes-project"]
    assert "wrote 1 file inside the project while the gate ran it" in written
    assert "out/adder/args.txt" in written and "{out_dir} in args" in written


def test_an_lr_set_on_the_config_object_is_blamed_at_its_line(tmp_path):
    project = mingpt(tmp_path, LR_TOO_LOW)
    ran, result = overfit(project)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert code(result) == "lr-too-low", ran.stdout
    line = line_of(project, LR_TOO_LOW)
    site = f"projects/adder/adder.py:{line} (C.trainer.learning_rate = 5e-06)"
    assert f"raise the lr to about 0.005 in {site}" in ran.stdout


def test_unshifted_targets_with_ignored_positions_warn(tmp_path):
    ran, result = overfit(mingpt(tmp_path, UNSHIFTED_TARGETS))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "learned to copy its input" in warnings(result)["target-copies-input"]


def test_a_detached_attention_under_dropout_noise_is_no_gradient(tmp_path):
    ran, result = overfit(mingpt(tmp_path, DETACHED_ATTENTION))
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert code(result) == "no-gradient", ran.stdout
    evidence = "\n".join(result["diagnosis"]["evidence"])
    assert "cut from the loss" in evidence and "attn.c_attn.weight" in evidence
