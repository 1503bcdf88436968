"""Script mode: a nanoGPT-shaped ``model.py`` whose forward adds a penalty on the
logits' size to the loss it returns. The script computes its own loss, so no copy can
leave the penalty out: a heavy one is named from its evidence, after the lr probes
found no other cause, and marked not checked with the reason; a light one passes."""

from __future__ import annotations

from nanogpt_shaped import Change
from script_mode_test import code, nanogpt, overfit


def penalty(weight: float) -> Change:
    return Change(
        "model.py",
        "        return logits, loss\n",
        f"        return logits, loss + {weight} * logits.pow(2).mean()\n",
    )


def test_a_heavy_penalty_in_a_scripts_model_is_named_but_not_checked(tmp_path):
    ran, result = overfit(nanogpt(tmp_path, penalty(1.0)))
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert code(result) == "not-learning", ran.stdout
    assert "a term of the loss that the targets do not move" in ran.stdout
    assert "model.py:96: return logits, loss + 1.0 * logits.pow(2).mean()" in ran.stdout
    assert (
        "(not checked: with the regularizer's weight 0 the copy could not run: it"
        " trains a changed loss, and the script computes its own)" in ran.stdout
    )
    assert "(checked:" not in ran.stdout


def test_a_light_penalty_in_a_scripts_model_passes(tmp_path):
    ran, result = overfit(nanogpt(tmp_path, penalty(1e-5)))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert code(result) == "memorized"
