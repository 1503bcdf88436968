"""A failed step's tensors, read from the run: the model's output, the frames the error
was raised through, the batch; and what they show about the values (the decisions
are in ``_tensor_evidence``)."""

from __future__ import annotations

import torch

from mlsmoke.overfit.verdict import batch_probes, forward_probes, target_reach
from mlsmoke.overfit.verdict.diagnoses import _errors
from mlsmoke.overfit.verdict.diagnoses._tensor_evidence import (
    Frame,
    Output,
    Outside,
    frame_of,
    outside_values,
)
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import remember


def output_of(run: GateRun) -> Output:
    """The model's output on the gate's batch: its logits' shape and last dimension;
    when no forward got that far (a model's own check raised first), the outputs of
    the model's last linear layer, its head (not those of the last layer that ran
    before the failure: a feature map's last dimension is a width in pixels)."""
    return remember(run, "output", lambda: _output(run))


def _output(run: GateRun) -> Output:
    capture = forward_probes.capture_forward(run)
    if capture is None:
        return Output(None)
    head = _head_width(capture.model)
    logits = forward_probes.logits_of(capture.output)
    if logits is None and capture.last_linear_output is not None:
        # a model that returns only its loss, or raised in it: the last linear layer
        # that ran is its head only when it is the model's last (not a layer of an
        # encoder that ran before the failure)
        if capture.last_linear_output.shape[-1] == head:
            logits = capture.last_linear_output
    if logits is not None and logits.dim() >= 1:
        return Output(int(logits.shape[-1]), tuple(logits.shape))
    return Output(head)


def _head_width(model: torch.nn.Module) -> int | None:
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    return linears[-1].out_features if linears else None


def raised_frames(run: GateRun) -> list[list[Frame]]:
    """The frames the run's error was raised through, innermost first, one list per
    error of its chain (``raise ... from``)."""
    return [
        [frame_of(local_values) for local_values in chain]
        for chain in _errors.raised_locals(run.evidence)
    ]


def values_outside(run: GateRun) -> Outside | None:
    """Values the step was given outside what it allows, with shapes that agree: a
    distribution's support (checked in the frame of its own method), the output's
    classes (in the failing frame, or a batch field) of a tensor that reaches the
    loss or the output's last dimension (:mod:`..target_reach`)."""
    return remember(run, "values-outside", lambda: _values_outside(run))


def _values_outside(run: GateRun) -> Outside | None:
    try:
        fields = batch_probes.shared_fields(run)
        reach = target_reach.class_target_reach(run)
        return outside_values(
            fields, raised_frames(run), output_of(run), reach.is_class_target
        )
    except Exception:  # a tensor that cannot be read is no evidence either way
        return None


def is_shape_check(run: GateRun) -> bool:
    """A check of sizes failed: its words speak of sizes, and the step's values are
    not outside what it allows (a distribution's support check prints the value's
    shape; a project's check of its labels may speak of the output's size)."""
    return _errors.is_size_check(run.evidence) and values_outside(run) is None
