"""Script mode on a repository shaped like makemore: one file holds the models, the
data set and the argparse block. Every sample opens with one start token, so each
word's first letter is a guess no model can learn: a correct run stops above the
usual target, at the batch's floor, and must pass; a real mistake must still fail."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from gitrepo import init_git_repo
from makemore_shaped import (
    DETACHED_ATTENTION,
    FLIPPED_LOSS,
    GATE_ARGS,
    LR_DIVIDED,
    NO_CAUSAL_MASK,
    Change,
    write_makemore_repo,
)
from script_mode_test import code, overfit, warnings

from mlsmoke.overfit.verdict.reading_window import PREFIXES, Reading
from mlsmoke.overfit.verdict.target_ambiguity import ambiguity_floor, kept_views

# A correct run memorizes the learnable part of the loss in a few dozen steps.
BUDGET = "max-steps = 100\n"
# A bigram's table starts at zero and AdamW moves each logit about lr per step: at
# makemore's lr it needs about 900 updates to reach its floor.
BIGRAM = [*GATE_ARGS, "--type=bigram"]
BIGRAM_BUDGET = "max-steps = 1200\n"


def makemore(
    tmp_path: Path,
    *changes: Change,
    args: list[str] | None = None,
    budget: str = BUDGET,
) -> Path:
    project = write_makemore_repo(
        init_git_repo(tmp_path / "makemore"), *changes, args=args
    )
    with (project / "pyproject.toml").open("a") as config:
        config.write(budget)
    return project


def test_a_correct_run_passes_at_the_floor_of_its_start_tokens(tmp_path):
    project = makemore(tmp_path)
    ran, result = overfit(project)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert code(result) == "memorized"
    summary = result["diagnosis"]["summary"]
    assert "memorized the batch as far as its targets allow" in summary, summary
    assert result["final_loss"] > 0.05 * result["initial_loss"]  # the usual target
    assert result["final_loss"] <= result["target"]  # the one it was judged by
    assert result["diagnosis"]["memorized_in"] < result["steps"]
    assert not warnings(result)
    assert not (project / "out").exists()  # --work-dir={out_dir}


def test_an_mlp_chosen_by_type_passes_too(tmp_path):
    ran, result = overfit(makemore(tmp_path, args=[*GATE_ARGS, "--type=mlp"]))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert code(result) == "memorized", ran.stdout


def test_a_bigram_passes_at_the_floor_of_the_one_token_it_reads(tmp_path):
    ran, result = overfit(makemore(tmp_path, args=BIGRAM, budget=BIGRAM_BUDGET))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert code(result) == "memorized", ran.stdout
    assert "the last 1 input position(s), at any position" in ran.stdout
    # the prefix floor (0.24 on this batch) would ask for a loss no table reaches
    assert result["final_loss"] > 0.5


def test_a_bigram_with_its_lr_divided_by_1000_is_still_blocked(tmp_path):
    project = makemore(tmp_path, LR_DIVIDED, args=BIGRAM, budget=BIGRAM_BUDGET)
    ran, result = overfit(project)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert code(result) == "lr-too-low", ran.stdout


def test_an_lr_divided_by_1000_is_blocked_at_its_argparse_line(tmp_path):
    project = makemore(tmp_path, LR_DIVIDED)
    ran, result = overfit(project)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert code(result) == "lr-too-low", ran.stdout
    text = (project / "makemore.py").read_text()
    line = text[: text.index(LR_DIVIDED.new)].count("\n") + 1
    assert f"in makemore.py:{line} (--learning-rate default 3e-06)" in ran.stdout


def test_a_detached_attention_that_still_memorizes_names_the_dead_weights(tmp_path):
    ran, result = overfit(makemore(tmp_path, DETACHED_ATTENTION))
    assert code(result) == "memorized", ran.stdout
    message = warnings(result)["dead-weights"]
    assert "transformer.h.0.attn" in message and "cut from the graph" in message


def test_attention_without_its_tril_mask_passes_with_a_warning_it_reads_ahead(
    tmp_path,
):
    ran, result = overfit(makemore(tmp_path, NO_CAUSAL_MASK))
    assert code(result) == "memorized", ran.stdout
    message = warnings(result)["reads-future-tokens"]
    assert "the model reads the token it is asked to predict" in message
    assert "masked_fill with the tril buffer deleted" in message


def test_a_flipped_loss_is_pointed_at_the_line_that_negates_it(tmp_path):
    project = makemore(tmp_path, FLIPPED_LOSS)
    ran, result = overfit(project)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert code(result) == "wrong-objective", ran.stdout
    text = (project / "makemore.py").read_text()
    line = text[: text.index("loss = -F.cross_entropy(")].count("\n") + 1
    where = f"makemore.py:{line}: loss = -F.cross_entropy("
    assert f"the loss the gate minimizes is negated at {where}" in ran.stdout
    assert result["diagnosis"]["suggestions"][0].endswith(where)


@pytest.mark.parametrize(
    ("views", "classes", "floor"),
    [
        ([(0,), (0,), (0,), (0,)], [1, 2, 3, 4], 1.3863),  # one view, four guesses
        ([(0,), (0,), (1,), (1,)], [1, 1, 2, 2], 0.0),  # each view decides its class
        ([(0,), (0,), (1,), (2,)], [1, 2, 3, 3], 0.3466),  # half the targets: ln 2
    ],
)
def test_the_floor_is_the_entropy_of_the_classes_each_view_holds(views, classes, floor):
    assert ambiguity_floor(views, classes) == pytest.approx(floor, abs=1e-4)


def test_prefix_views_keep_position_and_ignore_negative_targets():
    inputs = torch.tensor([[0, 5, 6], [0, 5, 7]])
    targets = torch.tensor([[5, 6, -1], [5, 7, 0]])
    views, classes = kept_views([inputs], targets, PREFIXES)
    assert classes == [5, 6, 5, 7, 0]
    assert views[0] == views[2] == ((0,), (0,))  # both see the start token alone
    assert views[1] == views[3] == ((1,), (0, 5))  # and then the same prefix
    whole, _ = kept_views([inputs], targets, None)
    assert whole[1] != whole[3]  # a model that reads the whole row tells them apart


def test_a_one_token_view_at_any_position_pools_every_position_it_reads_alike():
    inputs = torch.tensor([[0, 5, 6, 0], [0, 6, 5, 0]])
    targets = torch.tensor([[5, 6, 0, -1], [6, 5, 0, -1]])
    bigram = Reading(window=1, positional=False)
    views, classes = kept_views([inputs], targets, bigram)
    assert views == [(None, (t,)) for t in (0, 5, 6, 0, 6, 5)]
    # after 0: 5 or 6; after 5: 6 or 0; after 6: 0 or 5; each a guess of two
    assert ambiguity_floor(views, classes) == pytest.approx(math.log(2))
    positional, _ = kept_views([inputs], targets, bigram._replace(positional=True))
    assert positional[0] == ((0,), (0,)) and positional[1] == ((1,), (5,))
    # a model that reads the prefix guesses only the first letters
    prefix_floor = ambiguity_floor(*kept_views([inputs], targets, PREFIXES))
    assert prefix_floor == pytest.approx(math.log(2) / 3)


def test_a_window_keeps_the_shorter_windows_at_the_start_apart():
    inputs = torch.tensor([[0, 0, 3, 0, 0]])
    targets = torch.tensor([[1, 2, 4, 5, 6]])
    views, _ = kept_views([inputs], targets, Reading(window=2, positional=False))
    assert [view[1] for view in views] == [(0,), (0, 0), (0, 3), (3, 0), (0, 0)]
    assert views[0] != views[1] == views[4]  # the start's one token is its own view
