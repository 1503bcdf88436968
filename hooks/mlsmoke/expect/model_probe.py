"""The model's widths as the batch's fields meet them (torch side): one forward of the
gate's loss on a recorded batch, in eval mode under no_grad, with the calls of
``model_calls`` recorded.

Why a forward rather than the last layer's ``out_features``: the last module
registered is often not the head (a norm after it, a tied embedding, a conv head, an
``nn.Parameter`` matrix), and a model may hold several heads. The loss call is where a
class id must be below the number of classes, so its input's class dimension is the
width that bounds the target, in code mlsmoke has never seen.

A call's tensor is a field of the batch only when the evidence says so: it is the
field, or a view of it (``targets.view(-1)``), or the only field equal to it. A
target built from a field (shifted inside the model, masked) names no field, and no
expectation is kept for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from mlsmoke.expect.model_calls import WidthCalls
from mlsmoke.expect.observe import batch_fields
from mlsmoke.overfit.training.adapters import lightning_module
from mlsmoke.overfit.training.determinism import deterministic
from mlsmoke.overfit.training.objective import forward_loss


def probe_model(
    model_factory: Callable[[], Any],
    loss_fn: Callable[[Any, Any], Any] | None,
    batch: Any,
    seed: int,
) -> dict[str, Any]:
    """``{"meetings": [{"field", "role", "width", "call"}], "raised": str | None}``;
    the project's errors end the forward, and the calls seen before them stay."""
    calls, raised = WidthCalls(), None
    try:
        with deterministic(seed):
            model = lightning_module.configured_model(model_factory)()
        if loss_fn is None and lightning_module.is_lightning_module(model):
            loss_fn = lightning_module.TrainingStepLoss()
        model.eval()
        with torch.no_grad(), calls:
            forward_loss(loss_fn, model, batch)
    except Exception as error:  # the project's code: what it showed first is kept
        raised = f"{type(error).__name__}: {error}"
    fields = batch_fields(batch)
    meetings = []
    for call in calls.meetings:
        name = field_of(call.tensor, fields)
        if name is not None:
            meetings.append(
                {
                    "field": name,
                    "role": call.role,
                    "width": call.width,
                    "call": call.call,
                }
            )
    return {"meetings": meetings, "raised": raised}


def field_of(tensor: torch.Tensor, fields: dict[str, torch.Tensor]) -> str | None:
    """The field ``tensor`` holds: the one it views, else the only one equal to it."""
    tensor = tensor.detach()
    views = [name for name, f in fields.items() if _views(tensor, f)]
    if len(views) == 1:
        return views[0]
    equal = [name for name, f in fields.items() if _same_values(tensor, f)]
    return equal[0] if len(equal) == 1 else None


def _views(tensor: torch.Tensor, field: torch.Tensor) -> bool:
    return (
        tensor.device == field.device
        and tensor.untyped_storage().data_ptr() == field.untyped_storage().data_ptr()
        and tensor.storage_offset() == field.storage_offset()
        and _same_values(tensor, field)
    )


def _same_values(tensor: torch.Tensor, field: torch.Tensor) -> bool:
    if tensor.numel() != field.numel() or tensor.numel() == 0:
        return False
    if tensor.is_floating_point() != field.is_floating_point():
        return False
    flat = field.detach().reshape(-1).to(tensor.device, tensor.dtype)
    return bool(torch.equal(flat, tensor.reshape(-1)))
