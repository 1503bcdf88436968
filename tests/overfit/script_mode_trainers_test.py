"""Script mode on scripts whose run ends itself: a library trainer (transformers'
``Trainer``, Lightning's) counts its own steps from its epochs and is given the gate's
steps instead; a loop of its own that ends before max-steps is ``script-ended``, never
the model's fault."""

from __future__ import annotations

from gitrepo import init_git_repo
from hf_trainer_shaped import OWN_STEPS, write_hf_trainer_repo
from nanogpt_shaped import GATE_ARGS
from script_mode_lightning_test import lightning_project
from script_mode_test import code, nanogpt, overfit, warnings


def test_a_transformers_trainer_runs_for_the_gates_steps_and_memorizes(tmp_path):
    project = write_hf_trainer_repo(
        init_git_repo(tmp_path / "classifier"), ["--output-dir", "{out_dir}"]
    )
    ran, result = overfit(project)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert code(result) == "memorized"
    assert result["steps"] > OWN_STEPS  # its own 2 epochs would have ended it
    assert (
        "steps: transformers' Trainer: max_steps=302, for its own num_train_epochs=2"
        in ran.stdout
    )
    dropout = warnings(result)["dropout-active"]
    assert "BertConfig sets it (hidden_dropout_prob=0.1" in dropout
    assert "in args" not in dropout  # train.py has no dropout argument
    assert not (project / "out").exists()


def test_a_lightning_trainer_of_one_epoch_runs_for_the_gates_steps(tmp_path):
    project = lightning_project(tmp_path)
    train = project / "train.py"
    train.write_text(train.read_text().replace("default=100", "default=1"))
    ran, result = overfit(project)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert code(result) == "memorized" and result["steps"] > 4  # 4 batches an epoch
    assert "steps: Lightning's Trainer: max_steps=302, no max_epochs" in ran.stdout


def test_a_loop_that_ends_before_max_steps_names_the_scripts_length(tmp_path):
    short = [*GATE_ARGS, "--max_iters=40", "--lr_decay_iters=40"]
    ran, result = overfit(nanogpt(tmp_path, args=short))
    assert ran.returncode == 1, ran.stdout
    assert code(result) == "script-ended", ran.stdout
    summary = result["diagnosis"]["summary"]
    assert "train.py ended its own training after 40 steps" in summary
    assert "took the lr from 0.0006 to" in summary
    fixes = " ".join(result["diagnosis"]["suggestions"])
    assert "--max_iters=320 (now 40)" in fixes
    assert "its schedule's length with it: --lr_decay_iters=320 (now 40)" in fixes
