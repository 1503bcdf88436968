"""The gate with the project's step function: a correct step passes, each classic loop
bug fails with its own code and the step's line, bad input is a config error."""

from __future__ import annotations

import re

import pytest

from mlsmoke.overfit.gate import run_gate
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.training.evidence import ProjectProblem
from mlsmoke.overfit.training.step_function import bind

SCHEDULED = {"optimizer": "step_functions:adam_with_step_lr", "lr": None}


def gate(step: str, **keys) -> GateSettings:
    base = {"model": "step_functions:build", "batch": "step_functions:batch",
            "loss": "step_functions:loss"}  # fmt: skip
    return GateSettings(
        name="default", step=f"step_functions:{step}", **{**base, **keys}
    )


def told(result) -> str:
    return "\n".join([result.diagnosis.summary, *result.diagnosis.evidence])


@pytest.mark.parametrize(
    ("step", "keys"),
    [
        ("train_step", {}),
        ("train_step_with_scheduler", SCHEDULED),
        ("train_step_x_y", {}),
        ("train_step_clipped", {}),
        ("train_step_amp", {}),
        ("train_step_accumulating", {}),
        ("train_step_every_second_call", {"accumulate": 2}),
    ],
)
def test_a_correct_step_passes(step, keys):
    result, _ = run_gate(gate(step, **keys), device="cpu")
    assert result.passed, told(result)
    assert not [w for w in result.warnings if w.code.startswith("step-")]
    assert any(
        note.startswith(f"step: step_functions:{step}(") for note in result.notes
    )


@pytest.mark.parametrize(
    ("step", "keys", "code", "says", "line"),
    [
        ("forgot_zero_grad", {}, "step-gradients-accumulate",
         "optimizer.zero_grad() is never called", "loss.backward()"),
        ("train_step_every_second_call", {}, "step-gradients-accumulate",
         "accumulate = 1", "loss.backward()"),
        ("backward_under_no_grad", {}, "step-no-gradient", "torch.no_grad()",
         "loss.backward()"),
        ("backward_on_item", {}, "step-no-gradient", "a Python number",
         "loss.backward()"),
        ("never_calls_train", {"model": "step_functions:build_in_eval_mode"},
         "step-eval-mode", "its Dropout behave as at inference", "x, y = batch"),
        ("optimizer_over_a_stale_model", {}, "step-parameters-unchanged",
         "does not hold the model's parameters", "STALE_OPTIMIZER.step()"),
        ("zero_grad_after_backward", {}, "step-parameters-unchanged",
         "optimizer.zero_grad() is in the wrong place", "optimizer.zero_grad()"),
        ("undivided_accumulation", {}, "step-undivided-accumulation",
         "after 4 backward passes", "loss.backward()"),
        ("clips_after_the_step", {}, "step-clip-after-step",
         "changed in place after optimizer.step()",
         "clip_grad_norm_(model.parameters(), 0.5)"),
        ("never_calls_backward", {}, "step-no-backward", "never calls backward()",
         "model.train()"),
        ("clips_after_the_step_then_drops_the_gradients", {}, "step-clip-after-step",
         "changed in place after optimizer.step()",
         "clip_grad_norm_(model.parameters(), 0.5)"),
        ("clips_after_the_step_then_zeroes_the_gradients", {},
         "step-clip-after-step", "changed in place after optimizer.step()",
         "clip_grad_value_(model.parameters(), 0.1)"),
        ("replaces_the_head_after_the_optimizer", {}, "step-parameters-unchanged",
         "the parameters of 'net.3' get gradients but are in no param group",
         'if not getattr(model, "head_replaced", False):'),
        ("steps_before_backward", {}, "step-update-before-backward",
         "every update applies the gradient of the previous call",
         "optimizer.step()"),
    ],
)  # fmt: skip
def test_a_broken_step_fails_with_its_cause_and_line(step, keys, code, says, line):
    result, _ = run_gate(gate(step, **keys), device="cpu")
    assert (result.verdict, result.diagnosis.code) == ("fail", code), told(result)
    assert says in told(result)
    (fix,) = [text for text in result.diagnosis.evidence if text.startswith("fix at ")]
    assert "step_functions.py:" in fix and fix.endswith(line)
    assert result.diagnosis.suggestions


def test_a_forgotten_zero_grad_with_adam_still_memorizes_and_still_fails():
    """Adam normalizes the summed gradients away: the loss falls to its target, and
    only the invariant tells."""
    result, run = run_gate(gate("forgot_zero_grad"), device="cpu")
    assert run is not None and run.evidence.reached
    assert run.evidence.optimizer == "Adam"
    assert result.diagnosis.code == "step-gradients-accumulate"
    assert "it reached the target all the same" in told(result)


def test_a_model_in_eval_mode_passes_when_the_project_says_so():
    settings = gate("never_calls_train", model="step_functions:build_in_eval_mode")
    settings.train_mode = False
    result, _ = run_gate(settings, device="cpu")
    assert result.passed, told(result)


def test_a_scheduler_stepped_before_the_optimizer_warns_with_the_line():
    result, _ = run_gate(gate("scheduler_first", **SCHEDULED), device="cpu")
    assert result.passed, told(result)
    (warning,) = [w for w in result.warnings if w.code == "step-scheduler-order"]
    assert "scheduler.step() runs before optimizer.step()" in warning.message
    assert re.search(r"fix at \S+step_functions.py:\d+: scheduler.step\(\)\)$",
                     warning.message)  # fmt: skip


@pytest.mark.parametrize(
    ("step", "says"),
    [
        ("takes_a_criterion", "it takes 'criterion', which the gate cannot give"),
        ("returns_nothing", "returns nothing; return the loss"),
        ("unpacks_wrongly", "raised ValueError: not enough values to unpack"),
    ],
)
def test_bad_input_is_a_config_error_naming_the_key_and_the_function(step, says):
    result, _ = run_gate(gate(step), device="cpu")
    assert (result.verdict, result.diagnosis.code) == ("error", "config-error")
    summary = result.diagnosis.summary
    assert summary.startswith(f"tool.mlsmoke.overfit.step: the step function"
                              f" step_functions:{step} ")  # fmt: skip
    assert says in summary


def test_diagnoses_that_probe_train_the_gates_own_loop_and_say_so():
    """An lr far too low: the lr range probes re-train with the gate's own forward
    and backward, and the notes say so."""
    result, run = run_gate(gate("train_step", optimizer="sgd", lr=1e-4), device="cpu")
    assert result.diagnosis.code == "lr-too-low", told(result)
    assert run is not None and run.probes
    assert all(probe.step_function is None for probe in run.probes)
    assert any("the gate's own forward and backward" in n for n in result.notes)


def test_an_error_in_the_model_keeps_its_own_diagnosis():
    """The model's forward raises inside the step (it wants labels the batch does not
    name): the gate's diagnoses read it as they do without a step function."""
    keys = {"model": "overfit_models:CNN", "batch": "overfit_models:mlp_batch"}
    result, _ = run_gate(gate("train_step", **keys), device="cpu")
    assert result.diagnosis.code == "data-error", told(result)
    assert "CNN.forward() missing 1 required positional argument" in told(result)


def named(model, batch, optimizer, scheduler, step): ...
def reordered(batch, optimizer, model): ...
def split(net, x, y, opt, *, device="cpu", log_every=10): ...
def positional_only(model, batch, /, optimizer): ...
def no_batch(model, optimizer): ...


@pytest.mark.parametrize(
    ("function", "roles"),
    [
        (named, ["model", "batch", "optimizer", "scheduler", "index"]),
        (reordered, ["batch", "optimizer", "model"]),
        (split, ["model", "inputs", "targets", "optimizer", "device"]),
        (positional_only, ["model", "batch", "optimizer"]),
    ],
)
def test_parameters_are_bound_by_name(function, roles):
    assert list(bind(function, "m:f").roles.values()) == roles


def test_a_step_without_model_or_batch_is_a_wrong_signature():
    with pytest.raises(ProjectProblem, match="it takes no model and batch") as raised:
        bind(no_batch, "m:no_batch")
    assert raised.value.config_key == "step"
