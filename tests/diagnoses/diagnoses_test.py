"""Diagnoses and checks on hand-made evidence: CUDA failures by simulation, the probes'
budget, and the decisions that need no training run."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
import torch

from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.training.evidence import DEVICE_ASSERT, OUT_OF_MEMORY, Evidence
from mlsmoke.overfit.verdict import diagnoses, lr_range, probes
from mlsmoke.overfit.verdict.checks import batch_mixing, init_loss
from mlsmoke.overfit.verdict.diagnoses import _gradless, data_error
from mlsmoke.overfit.verdict.gate_run import GateRun

from catalog import models


class ScriptedRun(GateRun):
    """A GateRun whose probes return scripted evidence and are counted."""

    def __init__(self, evidence: Evidence, probe_result=None, **factories: Any):
        super().__init__(
            GateSettings(name="default", model="m:m", batch="b:b"),
            evidence,
            factories.get("model", models.MLPClassifier),
            factories.get("batch", models.classification_batch),
            factories.get("loss", models.cross_entropy),
            lambda model, lr: torch.optim.Adam(model.parameters(), lr=lr or 1e-2),
            trainer=None,  # probe() below replaces training
        )
        self.probe_result = probe_result or (lambda **overrides: Evidence())
        self.probe_calls: list[dict[str, Any]] = []

    def probe(self, **overrides: Any) -> Evidence:
        self.probe_calls.append(overrides)
        if "lr_scale" in overrides:  # the lr the scaled recipe would start at
            overrides = {"lr": self.evidence.lr * overrides["lr_scale"], **overrides}
        return self.probe_result(**overrides)


def plateau(steps: int = 40) -> list[float]:
    return [1.386 - 0.0001 * i for i in range(steps)]


def test_device_side_assert_is_rerun_on_the_cpu_and_named_a_label_range_error():
    cuda = Evidence(
        device="cuda",
        lr=0.01,
        error=RuntimeError("CUDA error: device-side assert triggered"),
        phase="backward",
        cuda_error=DEVICE_ASSERT,
    )
    cpu = Evidence(
        device="cpu", error=IndexError("Target 4 is out of bounds."), phase="loss"
    )
    run = ScriptedRun(cuda, lambda **overrides: cpu, batch=_labels_beyond_logits)
    found = diagnoses.diagnose(run)
    assert found.code == "label-range-error"
    assert run.probe_calls == [{"device": "cpu", "max_steps": 1}]
    text = "\n".join(found.evidence)
    assert "re-run on the CPU" in text
    assert "4 outputs" in found.summary and "a target holds 4" in text
    assert "values 0..4" in text


def test_a_cpu_rerun_made_by_the_gate_is_read_as_it_is():
    cuda = Evidence(device="cuda", error=RuntimeError("CUDA error: device-side assert"))
    cpu = Evidence(
        device="cpu",
        error=IndexError("Target 4 is out of bounds."),
        phase="loss",
        rerun_of=cuda,
    )
    run = ScriptedRun(cpu, batch=_labels_beyond_logits)
    found = diagnoses.diagnose(run)
    assert found.code == "label-range-error"
    assert found.evidence[0].startswith("on cuda: a device-side assert")
    assert run.probe_calls == []


def _labels_beyond_logits():
    x, _ = models.classification_batch()
    return x, torch.arange(len(x)) % 5


def test_cuda_out_of_memory_reports_the_batch_size_and_memory_figures():
    evidence = Evidence(
        device="cuda:0",
        error=torch.OutOfMemoryError(
            "CUDA out of memory. Tried to allocate 20.00 GiB (GPU 0; 15.78 GiB total)"
        ),
        phase="forward",
        cuda_error=OUT_OF_MEMORY,
        batch_size=512,
        memory={"allocated": 14 * 2**30, "free": 2**29, "total": 16 * 2**30},
    )
    found = diagnoses.diagnose(ScriptedRun(evidence))
    assert found.code == "out-of-memory"
    assert "batch size 512" in found.summary
    text = "\n".join(found.evidence)
    assert "20.00 GiB" in text and "14.00 GiB allocated" in text
    assert "of 16.00 GiB" in text
    assert any("smaller batch" in s for s in found.suggestions)


_unseeded = random.Random()


def _batch_with_fresh_labels():
    x, _ = models.classification_batch()
    return x, torch.tensor([_unseeded.randrange(4) for _ in range(len(x))])


def test_a_batch_factory_that_ignores_the_seed_is_nondeterministic():
    evidence = Evidence(lr=0.01, max_steps=40, target=0.07, losses=plateau())
    run = ScriptedRun(evidence, batch=_batch_with_fresh_labels)
    found = diagnoses.diagnose(run)
    assert found.code == "nondeterministic-batch"
    assert "batch[1]" in found.summary
    assert run.probe_calls == []  # decided before any training probe


def test_no_gradient_names_the_parameters_and_their_share():
    evidence = Evidence(
        lr=0.01,
        target=0.07,
        losses=plateau(),
        requires_grad={
            "body.0.weight": False,
            "body.0.bias": False,
            "body.3.weight": True,
            "body.3.bias": True,
            "head.weight": True,
            "head.bias": True,
        },
        first_grads={
            "body.0.weight": None,
            "body.0.bias": None,
            "body.3.weight": None,
            "body.3.bias": None,
            "head.weight": 0.5,
            "head.bias": 0.1,
        },
        module_order=["", "body", "body.0", "body.1", "body.3", "head"],
    )
    found = diagnoses.diagnose(ScriptedRun(evidence))
    assert found.code == "no-gradient"
    # MLPClassifier(): body.0 16*64+64, body.3 64*64+64, head 64*4+4
    assert found.summary == (
        "4 of 6 parameter tensors get no gradient (5,248 of 5,508 weights, 95%)"
    )
    assert found.evidence[:2] == [
        "frozen (requires_grad=False): body.0.weight, body.0.bias",
        "cut from the loss (.detach(), .data or torch.no_grad()): body.3.weight,"
        " body.3.bias",
    ]
    assert "only these get a gradient: head.weight, head.bias" in found.evidence
    assert [s.split()[0] for s in found.suggestions] == ["unfreeze", "remove"]


@pytest.mark.parametrize(
    ("part", "whole", "expected"),
    [
        (0, 200, "0%"),
        (1, 200, "0.5%"),
        (1, 3, "33%"),
        (199, 200, "99.5%"),
        (200, 200, "100%"),
        (20_099, 20_104, ">99.9%"),
        (5, 20_104, "<0.1%"),
    ],
)
def test_a_share_of_the_weights_reads_100_percent_only_when_it_is(
    part: int, whole: int, expected: str
) -> None:
    assert _gradless.percent(part, whole) == expected


def test_a_small_unused_module_is_not_blamed_for_a_plateau():
    # MLPClassifier(): head (64*4+4 = 260 of 5,508 weights, 4.7%) never called
    evidence = Evidence(
        lr=0.01,
        target=0.07,
        losses=plateau(),
        requires_grad={"body.0.weight": True, "head.weight": True, "head.bias": True},
        first_grads={"body.0.weight": 0.3, "head.weight": None, "head.bias": None},
        module_order=["", "body", "body.0"],
    )
    found = diagnoses.diagnose(ScriptedRun(evidence, lambda **o: Evidence()))
    assert found.code != "no-gradient"


def test_gradless_parameters_tells_unused_modules_from_detached_ones():
    evidence = Evidence(
        requires_grad={"a.weight": True, "b.weight": True, "c.weight": True},
        first_grads={"a.weight": None, "b.weight": None, "c.weight": 0.0},
        module_order=["", "a"],
    )
    assert _gradless.gradless_parameters(evidence) == {
        "cut from the loss (.detach(), .data or torch.no_grad())": ["a.weight"],
        "in modules never called by forward": ["b.weight"],
    }


@pytest.mark.parametrize(
    ("float64_losses", "verdict"),
    [([2.0, 1.0, 0.05], "a precision problem"), ([math.inf], "a logic error")],
)
def test_non_finite_at_init_reruns_in_float64(float64_losses, verdict):
    evidence = Evidence(
        lr=0.01, losses=[math.nan], first_nonfinite_output="head", target=None
    )
    wide = Evidence(dtype="float64", losses=float64_losses, reached=True)
    run = ScriptedRun(evidence, lambda **overrides: wide)
    found = diagnoses.diagnose(run)
    assert found.code == "non-finite"
    assert verdict in found.summary and "at init" in found.summary
    assert "first module with a non-finite output: 'head'" in found.evidence
    # no target resolved at init: the probe takes the configured one
    assert run.probe_calls == [
        {"dtype": "float64", "timeout": 5.0, "target_loss": None, "target_ratio": 0.05}
    ]


def test_probes_are_bounded_and_shared_between_diagnoses():
    evidence = Evidence(lr=0.01, max_steps=40, target=0.07, losses=plateau())

    def failing(**overrides: Any) -> Evidence:
        return Evidence(lr=overrides.get("lr", 0.01), target=0.07, losses=plateau())

    run = ScriptedRun(evidence, failing)
    found = diagnoses.diagnose(run)
    assert found.code == "not-learning"
    scales = [call["lr_scale"] for call in run.probe_calls]
    # lr-too-low and not-learning read the same range test: each rate probed once
    assert len(scales) == len(set(scales)) >= 3
    # both directions, the likely one (up, for a plateau) first
    assert scales[0] > 1 and min(scales) < 1
    # short probes, within the budget of 3x the run's steps (the scripted probes
    # take 39 steps whatever they are asked)
    assert all(call["max_steps"] < 40 for call in run.probe_calls)
    budget = lr_range.PROBE_BUDGET * lr_range.MIN_BUDGET_STEPS
    assert 39 * (len(scales) - 1) < budget
    assert f"at lr {0.01 * scales[0]:g}: loss" in "\n".join(found.evidence)


def test_a_probe_may_take_twice_the_run_never_more_than_the_timeout():
    evidence = Evidence(lr=0.01, target=0.07, losses=plateau(), seconds=20.0)
    run = ScriptedRun(evidence)
    assert probes.probe_timeout(run) == 40.0
    run.evidence.seconds = 45.0
    assert probes.probe_timeout(run) == run.settings.timeout == 60.0
    run.evidence.seconds = 0.1
    assert probes.probe_timeout(run) == probes.MIN_PROBE_SECONDS


def test_a_sweep_stops_at_the_first_learning_rate_that_memorizes():
    evidence = Evidence(
        lr=1.0, target=0.07, losses=[1.4, 3.0, 1.0, 3.5, 0.9, 3.2, 1.1, 3.9] * 3
    )

    def lower(**overrides: Any) -> Evidence:
        return Evidence(lr=overrides["lr"], losses=[1.4, 0.5, 0.05], reached=True)

    run = ScriptedRun(evidence, lower)
    found = diagnoses.diagnose(run)
    assert found.code == "lr-too-high"
    assert "at lr 0.1 it memorized in 2 steps" in found.summary
    assert len(run.probe_calls) == 1


def test_a_spike_that_leaves_a_plateau_is_a_learning_rate_too_high():
    # measured on a CNN at Adam 1e-2: one update kills its ReLUs, the loss then stalls
    losses = [2.302, 4.829, 2.207, 2.282] + [2.30 - 0.0002 * i for i in range(60)]
    evidence = Evidence(lr=0.01, target=0.115, losses=losses)

    def lower(**overrides: Any) -> Evidence:
        return Evidence(lr=overrides["lr"], losses=[2.3, 1.0, 0.1], reached=True)

    found = diagnoses.diagnose(ScriptedRun(evidence, lower))
    assert found.code == "lr-too-high"
    assert "jumps to 4.829 at step 1 and then stalls" in found.summary


def test_a_loss_falling_below_zero_without_bound_is_a_wrong_objective():
    evidence = Evidence(lr=0.01, target=0.07, losses=[0.5 - i for i in range(20)])
    found = diagnoses.diagnose(ScriptedRun(evidence))
    assert found.code == "wrong-objective"


def test_too_slow_estimates_the_steps_it_would_need():
    losses = [2.0 * math.exp(-0.01 * i) for i in range(101)]
    evidence = Evidence(
        lr=0.01, max_steps=100, target=2.0 * math.exp(-3), losses=losses
    )

    def unstable(**overrides: Any) -> Evidence:
        return Evidence(lr=overrides["lr"], losses=[2.0, 50.0, math.inf])

    found = diagnoses.diagnose(ScriptedRun(evidence, unstable))
    assert found.code == "too-slow"
    assert "needs about 300 steps" in found.summary
    assert "max-steps (100)" in found.summary
    assert "max-steps = 360" in found.suggestions[0]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("embedding(): argument 'indices' must be Tensor, not list", "list"),
        ("forward() got an unexpected keyword argument 'label'", "'label'"),
        ("forward() missing 1 required positional argument: 'labels'", "'labels'"),
        ("MLP.forward() takes 2 positional arguments but 3 were given",
         "more fields"),
        ("Expected tensor for argument #1 'indices' to have one of the following"
         " scalar types: Long, Int; but got torch.FloatTensor", "float token ids"),
        ("expected target dtype to be Long or Byte, but got Float", "wrong dtype"),
        ("mat1 and mat2 must have the same dtype, but got Long and Float", "dtype"),
        ("index out of range in self", "beyond an embedding"),
    ],
)  # fmt: skip
def test_data_problems_are_read_from_torch_messages(text: str, kind: str) -> None:
    found = data_error._data_problem(text)
    assert found is not None and kind in found


def test_shape_messages_are_not_data_problems() -> None:
    assert data_error._data_problem("mat1 and mat2 shapes cannot be multiplied") is None


@pytest.mark.parametrize(
    ("initial", "classes", "far"),
    [
        (1.39, 4, False),
        (1.6, 4, False),
        (2.5, 10, False),
        (0.75, 2, False),
        (23.0, 4, True),
        (-1.4, 4, True),
        (0.1, 10, True),
    ],
)
def test_init_loss_is_far_from_log_c(initial: float, classes: int, far: bool) -> None:
    assert init_loss.is_far(initial, math.log(classes)) is far


@pytest.mark.parametrize(
    ("samples", "indices"),
    [(1, [0]), (2, [0, 1]), (3, [0, 1, 2]), (32, [0, 1, 16, 31])],
)
def test_batch_mixing_checks_several_samples(samples: int, indices: list[int]):
    assert batch_mixing.sample_indices(samples) == indices


def test_a_diagnosis_that_breaks_does_not_hide_the_verdict(monkeypatch):
    def broken(run: GateRun):
        raise RuntimeError("a bug in a diagnosis")

    registry = [diagnoses.memorized.diagnose, broken, *diagnoses.REGISTRY[1:]]
    monkeypatch.setattr(diagnoses, "REGISTRY", registry)
    evidence = Evidence(lr=0.01, max_steps=40, target=0.07, losses=plateau())
    found = diagnoses.diagnose(ScriptedRun(evidence, lambda **overrides: evidence))
    assert found.code == "not-learning"


# --- the lr range test, lr 0, objective bounds and floors ---------------------------


def lr_response(stable_below: float, target: float = 0.07):
    """Scripted probes of a model whose curve at lr covers lr x steps x 20 of the way
    to the target, and that oscillates at rates of ``stable_below`` and above."""

    def probe(**overrides: Any) -> Evidence:
        lr, steps = overrides["lr"], overrides.get("max_steps", 300)
        if lr >= stable_below:
            losses = wobble_losses(steps)
            return Evidence(lr=lr, target=target, losses=losses)
        losses = [1.386]
        for _ in range(steps):
            losses.append(max(losses[-1] - lr * 20 * (1.386 - target), 0.0))
            if losses[-1] <= target:
                return Evidence(lr=lr, target=target, losses=losses, reached=True)
        return Evidence(lr=lr, target=target, losses=losses)

    return probe


def wobble_losses(steps: int) -> list[float]:
    return [1.386 + 0.4 * (-1) ** i for i in range(min(steps, 40) + 1)]


def test_an_lr_seven_decades_low_is_found_by_the_range_test():
    evidence = Evidence(lr=1e-7, max_steps=300, target=0.07, losses=plateau(301))
    run_ = ScriptedRun(evidence, lr_response(stable_below=0.05))
    found = diagnoses.diagnose(run_)
    assert found.code == "lr-too-low", found.summary
    working = float(found.summary.split("at lr ")[1].split()[0])
    assert 1e-4 <= working <= 1e-2 and "memorized" in found.summary
    spent = sum(call["max_steps"] for call in run_.probe_calls)
    assert spent <= lr_range.PROBE_BUDGET * 300


def test_an_oscillating_curve_is_probed_downward_first():
    run_ = ScriptedRun(
        Evidence(lr=0.1, max_steps=300, target=0.07, losses=wobble_losses(300)),
        lr_response(stable_below=0.05),
    )
    found = diagnoses.diagnose(run_)
    assert found.code == "lr-too-high"
    assert run_.probe_calls[0]["lr_scale"] == pytest.approx(0.1)
    assert "at lr 0.01 it memorized" in found.summary


def test_a_loss_better_with_every_decade_up_is_lr_too_low_without_memorizing():
    def improving(**overrides: Any) -> Evidence:
        # each decade up ends lower, none reaches the target within the probe
        level = 0.07 + 1.316 * 0.5 ** math.log10(overrides["lr"] / 1e-6)
        losses = [1.386 - (1.386 - level) * min(1, i / 10) for i in range(41)]
        return Evidence(lr=overrides["lr"], target=0.07, losses=losses)

    run_ = ScriptedRun(Evidence(lr=1e-6, max_steps=40, target=0.07, losses=plateau()),
                       improving)  # fmt: skip
    found = diagnoses.diagnose(run_)
    assert found.code == "lr-too-low"
    assert "improves with every decade" in found.summary


@pytest.mark.parametrize(
    ("scheduler", "unscheduled", "says"),
    [
        ("LambdaLR", 3e-3, "the scheduler LambdaLR sets it to 0 (the optimizer's own"
         " lr is 0.003)"),
        (None, None, "the optimizer SGD (from mypkg.train:make) is built with lr 0"),
    ],
)  # fmt: skip
def test_an_lr_of_zero_is_lr_too_low_naming_where_it_comes_from(
    scheduler, unscheduled, says
):
    evidence = Evidence(lr=0.0, max_steps=40, target=0.07, losses=[1.386] * 41,
                        lrs=[0.0] * 40, optimizer="SGD", scheduler=scheduler,
                        optimizer_source="mypkg.train:make",
                        unscheduled_lr=unscheduled)  # fmt: skip
    run_ = ScriptedRun(evidence)
    found = diagnoses.diagnose(run_)
    assert found.code == "lr-too-low"
    assert "the learning rate is 0 at every step" in found.summary
    assert says in found.summary and run_.probe_calls == []


def test_a_schedule_that_decays_the_lr_to_nothing_is_lr_too_low():
    lrs = [3e-3 * 0.5**i for i in range(40)]
    losses = [1.386 - 0.2 * (1 - 0.5**i) for i in range(41)]
    evidence = Evidence(lr=3e-3, max_steps=40, target=0.07, losses=losses, lrs=lrs,
                        optimizer="AdamW", scheduler="StepLR",
                        optimizer_source="mypkg.train:make")  # fmt: skip
    found = diagnoses.diagnose(ScriptedRun(evidence))
    assert found.code == "lr-too-low"
    assert "StepLR takes it from 0.003 to" in found.summary and "by step 10" in (
        found.summary
    )


def test_a_loss_that_passes_its_target_below_zero_must_level_off():
    falling = [0.06, 0.01] + [-0.05 * 1.15**i for i in range(21)]
    evidence = Evidence(lr=5e-3, max_steps=300, target=0.003, losses=falling,
                        reached=True, bound_check_from=2)  # fmt: skip
    found = diagnoses.diagnose(ScriptedRun(evidence))
    assert found.code == "wrong-objective"
    assert "falls below zero without bound" in found.summary
    levelling = [0.06, 0.01] + [-1 + math.exp(-0.5 * i) for i in range(21)]
    evidence = Evidence(lr=5e-3, max_steps=300, target=0.003, losses=levelling,
                        reached=True, bound_check_from=2)  # fmt: skip
    assert diagnoses.diagnose(ScriptedRun(evidence)).code == "memorized"


def test_a_floor_above_the_target_is_not_learning_with_the_floor():
    losses = [0.7437 + 0.642 * math.exp(-0.02 * i) for i in range(301)]
    evidence = Evidence(lr=5e-3, max_steps=300, target=0.069, losses=losses)

    def same_floor(**overrides: Any) -> Evidence:
        return Evidence(lr=overrides["lr"], target=0.069, losses=losses[:100])

    found = diagnoses.diagnose(ScriptedRun(evidence, same_floor))
    assert found.code == "not-learning"
    assert "levels off at a floor of 0.7437" in found.summary
    assert any("softmax applied twice" in s for s in found.suggestions)
