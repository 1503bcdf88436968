"""Script mode on scripts shaped like a lecture's language models: hyperparameters
as module-level assignments, a loop that runs on import, and logits returned
flattened over samples and positions, (B*T, C). The gate must read those logits as
the (B, T) sequence they are: a bigram that reads one token is judged by the floor
of what one token decides, and a GPT whose mask is gone is said to read ahead."""

from __future__ import annotations

from pathlib import Path

from gitrepo import init_git_repo
from lecture_shaped import (
    LECTURE_SIZES,
    LR_DIVIDED,
    NO_TRIL_MASK,
    Change,
    write_lecture_repo,
)
from script_mode_test import code, overfit, warnings

# The bigram's table moves each logit about lr per AdamW step: at the lecture's lr
# it needs about 300 updates to reach its floor.
BIGRAM_BUDGET = "max-steps = 600\n"


def lecture(tmp_path: Path, script: str, *changes: Change, extra: str = "") -> Path:
    root = init_git_repo(tmp_path / "lecture")
    return write_lecture_repo(root, script, *changes, extra=extra)


def test_a_bigram_with_flattened_logits_passes_at_the_floor_of_one_token(tmp_path):
    ran, result = overfit(lecture(tmp_path, "bigram.py", extra=BIGRAM_BUDGET))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert code(result) == "memorized", ran.stdout
    assert "the last 1 input position(s), at any position" in ran.stdout
    # the usual target, 5% of the first loss, is one no table reaches here
    assert result["final_loss"] > 0.5 * result["initial_loss"]
    assert result["final_loss"] <= result["target"]
    assert not warnings(result)


def test_the_same_bigram_with_its_lr_divided_by_1000_is_blocked(tmp_path):
    project = lecture(tmp_path, "bigram.py", LR_DIVIDED, extra=BIGRAM_BUDGET)
    ran, result = overfit(project)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert code(result) == "lr-too-low", ran.stdout
    assert "bigram.py:10 (learning_rate = 1e-05)" in ran.stdout


def test_a_gpt_with_flattened_logits_passes_and_without_its_mask_reads_ahead(
    tmp_path,
):
    ran, result = overfit(lecture(tmp_path / "masked", "gpt.py"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert code(result) == "memorized" and not warnings(result), ran.stdout
    ran, result = overfit(lecture(tmp_path / "unmasked", "gpt.py", NO_TRIL_MASK))
    assert code(result) == "memorized", ran.stdout
    message = warnings(result)["reads-future-tokens"]
    assert "get_batch()[1]" in message and "get_batch()[0]" in message, message


def test_a_script_still_evaluating_at_the_timeout_is_named_with_its_line(tmp_path):
    endless = Change("gpt.py", "eval_iters = 20", "eval_iters = 10**9")
    ran, result = overfit(lecture(tmp_path, "gpt.py", endless, extra="timeout = 4\n"))
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert code(result) == "timeout", ran.stdout
    summary = result["diagnosis"]["summary"]
    assert "the training script (gpt.py) was still running" in summary, summary
    assert "one step is slower" not in summary
    assert "in estimate_loss" in ran.stdout  # the user's frame, with its line
    assert "through tool.mlsmoke.overfit.args" in ran.stdout


def test_a_global_the_script_never_assigns_is_a_config_error_naming_the_key(
    tmp_path,
):
    project = lecture(tmp_path, "gpt.py", extra="globals = { batch_sz = 4 }\n")
    ran, result = overfit(project)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stdout + ran.stderr
    assert (
        "tool.mlsmoke.overfit.globals.batch_sz: gpt.py has no module-level"
        " assignment `batch_sz = ...`" in ran.stdout
    )


def test_globals_make_the_lectures_sizes_small_for_the_gate(tmp_path):
    sizes = "globals = { batch_size = 8, block_size = 16, n_embd = 32, n_head = 2,"
    sizes += " n_layer = 2, eval_iters = 1, dropout = 0.0 }\n"
    project = lecture(tmp_path, "gpt.py", LECTURE_SIZES, extra=sizes)
    ran, result = overfit(project)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert code(result) == "memorized" and not warnings(result), ran.stdout
    assert "globals: batch_size = 8, block_size = 16" in ran.stdout


def test_an_lr_given_by_globals_is_named_there(tmp_path):
    project = lecture(
        tmp_path,
        "bigram.py",
        extra=BIGRAM_BUDGET + "globals = { learning_rate = 1e-5 }\n",
    )
    ran, result = overfit(project)
    assert code(result) == "lr-too-low", ran.stdout
    assert "globals of bigram.py (learning_rate = 1e-05)" in ran.stdout
