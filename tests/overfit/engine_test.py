"""The training loop's contract: what it records, and that it never raises."""

from __future__ import annotations

import math
from pathlib import Path

import overfit_models
import pytest
import torch
from frames import frame_paths, package_frames
from overfit_models import (
    CNN,
    MLP,
    HFStyleClassifier,
    TinyLM,
    cnn_batch,
    hf_batch,
    lm_batch,
    mlp_batch,
    mlp_loss,
)

from mlsmoke.overfit.process.settings import DEFAULT_LR, GateSettings
from mlsmoke.overfit.training.engine import BOUND_CHECK_STEPS, resolve_target, train
from mlsmoke.overfit.training.evidence import ProjectProblem
from mlsmoke.overfit.training.optimizers import optimizer_factory
from mlsmoke.overfit.verdict.diagnoses import diagnose
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import verdict_of

ADAM = optimizer_factory("adam", None, DEFAULT_LR["adam"])


def run(model, batch, loss=None, **options):
    settings = dict(
        lr=None,
        max_steps=300,
        target_loss=None,
        target_ratio=0.05,
        device="cpu",
        timeout=60,
        seed=0,
    )
    settings.update(options)
    return train(model, batch, loss, ADAM, **settings)


@pytest.mark.parametrize(
    ("model", "batch", "loss"),
    [
        (MLP, mlp_batch, mlp_loss),
        (CNN, cnn_batch, None),  # the output is the loss
        (TinyLM, lm_batch, None),  # (logits, loss)
        (HFStyleClassifier, hf_batch, None),  # model(**batch).loss
    ],
    ids=["mlp", "cnn", "causal-lm", "hf-style"],
)
def test_default_settings_memorize_small_models(model, batch, loss):
    evidence = run(model, batch, loss)
    assert evidence.error is None, evidence.user_traceback
    assert evidence.reached
    assert (
        evidence.losses[-1]
        <= evidence.target
        == pytest.approx(0.05 * evidence.losses[0])
    )
    assert len(evidence.grad_norms) == evidence.steps == len(evidence.losses) - 1


def test_records_modules_gradients_and_stops_at_the_target():
    evidence = run(MLP, mlp_batch, mlp_loss, max_steps=500)
    assert evidence.module_order[:2] == ["", "net"]
    assert evidence.module_inputs["net.0"] == [(16, 16)]
    assert set(evidence.first_grads) == {"net.0.weight", "net.0.bias", "net.2.weight",
                                         "net.2.bias"}  # fmt: skip
    assert all(norm and norm > 0 for norm in evidence.first_grads.values())
    assert evidence.requires_grad == dict.fromkeys(evidence.first_grads, True)
    assert evidence.losses[-2] > evidence.target >= evidence.losses[-1]
    assert evidence.steps < 500


def test_same_seed_same_curve():
    first, second = run(MLP, mlp_batch, mlp_loss), run(MLP, mlp_batch, mlp_loss)
    assert first.losses == second.losses


def test_error_is_recorded_with_its_phase_module_and_user_line():
    def shape_bug():
        return torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.Linear(9, 4))

    evidence = run(shape_bug, mlp_batch, mlp_loss)
    assert isinstance(evidence.error, RuntimeError)
    assert (evidence.phase, evidence.failed_module) == ("forward", "1")
    assert evidence.module_inputs["1"] == [(16, 8)]
    assert "mlp_loss" in evidence.user_traceback
    user_frames = [path.resolve() for path in frame_paths(evidence.user_traceback)]
    assert Path(overfit_models.__file__).resolve() in user_frames
    assert package_frames(evidence.user_traceback) == []


def test_a_factory_called_with_the_wrong_arguments_shows_no_empty_traceback():
    def takes_no_parameters():
        return torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)

    project_optimizer = optimizer_factory("custom", takes_no_parameters, 0.1)
    evidence = train(MLP, mlp_batch, mlp_loss, project_optimizer, lr=None,
                     max_steps=3, target_loss=None, target_ratio=0.05, device="cpu",
                     timeout=60, seed=0)  # fmt: skip
    assert isinstance(evidence.error, TypeError) and evidence.phase == "optimizer"
    assert evidence.user_traceback is None


def test_nonfinite_loss_stops_and_names_the_module():
    class LogOfZero(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(16, 4)

        def forward(self, x):
            return torch.log(self.linear(x) * 0)

    def loss(model, batch):
        return model(batch[0]).mean()

    evidence = run(LogOfZero, mlp_batch, loss)
    assert evidence.error is None and not evidence.reached
    assert len(evidence.losses) == 1 and math.isinf(evidence.losses[0])
    assert evidence.first_nonfinite_output == ""


@pytest.mark.parametrize(
    ("initial", "target_loss", "ratio", "expected"),
    [(2.0, None, 0.05, 0.1), (2.0, 0.5, None, 0.5), (2.0, 0.05, 0.05, 0.05)],
)
def test_resolve_target_takes_the_stricter(initial, target_loss, ratio, expected):
    assert resolve_target(initial, target_loss, ratio) == pytest.approx(expected)


def test_ratio_of_a_negative_initial_loss_is_a_config_problem():
    with pytest.raises(ProjectProblem) as raised:
        resolve_target(-1.0, None, 0.05)
    assert raised.value.config_key == "target-ratio"


def test_probe_trains_again_with_other_options_and_a_diagnosis_answers():
    evidence = run(MLP, mlp_batch, mlp_loss, lr=1e-6, max_steps=20)
    settings = GateSettings(name="default", model="m:f", batch="b:f", max_steps=20)
    gate = GateRun(settings, evidence, MLP, mlp_batch, mlp_loss, ADAM, train)
    assert verdict_of(diagnose(gate).code) == "fail"
    probe = gate.probe(lr=1e-2, max_steps=200, dtype="float64")
    assert probe.reached and probe.dtype == "float64"
    assert probe.target == evidence.target and gate.probes[-1] is probe


def _nll_of_logits(model, batch):
    x, y = batch
    return torch.nn.functional.nll_loss(model(x), y)  # no log_softmax: unbounded


def test_a_loss_passing_its_target_below_zero_trains_on_to_show_a_bound():
    evidence = run(MLP, mlp_batch, _nll_of_logits, target_loss=0.001,
                   target_ratio=None)  # fmt: skip
    start = evidence.bound_check_from
    assert evidence.reached and start is not None
    assert evidence.losses[start] < 0
    assert evidence.steps == start + BOUND_CHECK_STEPS
    assert evidence.losses[-1] < evidence.losses[start]  # still falling


def test_a_target_loss_below_zero_trains_on_to_show_a_bound_as_well():
    evidence = run(MLP, mlp_batch, _nll_of_logits, target_loss=-1.0,
                   target_ratio=None)  # fmt: skip
    start = evidence.bound_check_from
    assert evidence.reached and start == evidence.reached_at
    assert evidence.losses[start - 1] > -1.0 >= evidence.losses[start]
    assert evidence.steps == start + BOUND_CHECK_STEPS
    assert evidence.losses[-1] < evidence.losses[start]  # still falling: no bound


def test_a_pass_above_zero_trains_on_to_confirm_then_reports_its_reach_step():
    calls = []

    def counted(model, batch):
        calls.append(1)
        return mlp_loss(model, batch)

    evidence = run(MLP, mlp_batch, counted)
    assert evidence.memorized and evidence.bound_check_from is None
    reached = evidence.reached_at
    assert reached and evidence.steps == reached
    assert evidence.losses[-1] <= evidence.target < evidence.losses[-2]
    assert len(evidence.lrs) == len(evidence.grad_norms) == reached
    confirmed = min(BOUND_CHECK_STEPS, reached)
    assert len(calls) == reached + 1 + confirmed


def test_a_loss_that_falls_through_zero_after_its_target_is_not_a_pass():
    def flipped_late(model, batch):
        inputs, labels = batch
        logits = model(inputs)
        # cross-entropy minus the logits' growing norm: bounded for a few steps only
        return torch.nn.functional.cross_entropy(logits, labels) - logits.norm() / 4

    evidence = run(MLP, mlp_batch, flipped_late)
    assert evidence.bound_check_from is not None
    assert evidence.losses[-1] < 0


def test_an_error_in_the_steps_that_confirm_a_pass_keeps_the_pass():
    reached = run(MLP, mlp_batch, mlp_loss).reached_at
    calls = []

    def fails_after_its_target(model, batch):
        calls.append(1)
        if len(calls) > reached + 3:  # three steps into the confirming ones
            raise RuntimeError("a schedule that ends here")
        return mlp_loss(model, batch)

    evidence = run(MLP, mlp_batch, fails_after_its_target)
    assert evidence.memorized and evidence.error is None
    assert evidence.steps == evidence.reached_at == reached
