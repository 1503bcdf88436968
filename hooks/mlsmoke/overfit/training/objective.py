"""The loss of one forward pass when the project gives no ``loss`` callable.

The model is called as ``model(**batch)`` for a mapping, ``model(*batch)`` for a tuple
or list, and ``model(batch)`` otherwise. Its output is the loss when it is a scalar
tensor; else ``output.loss`` or ``output["loss"]`` (Hugging Face style); else the single
scalar tensor of a tuple output (nanoGPT's ``(logits, loss)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Callable
from typing import Any

import torch

from mlsmoke.overfit.training.evidence import ProjectProblem

LOSS_CALLABLE_EXAMPLE = """\
add a loss callable, (model, batch) -> scalar tensor, e.g. in mypkg/gate.py:

    import torch.nn.functional as F

    def loss(model, batch):
        inputs, labels = batch
        return F.cross_entropy(model(inputs), labels)

and name it in pyproject.toml:

    [tool.mlsmoke.overfit]
    loss = "mypkg.gate:loss\""""


def call_model(model: torch.nn.Module, batch: Any) -> Any:
    if isinstance(batch, Mapping):
        return model(**batch)
    if isinstance(batch, (tuple, list)):
        return model(*batch)
    return model(batch)


def forward_loss(
    loss_fn: Callable[[Any, Any], Any] | None, model: torch.nn.Module, batch: Any
) -> Any:
    """The loss of one forward as the gate computes it: the project's loss callable,
    else the loss inside the model's output."""
    if loss_fn is not None:
        return loss_fn(model, batch)
    return default_loss(call_model(model, batch))


def is_scalar(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.numel() == 1 and value.dim() <= 1


def default_loss(output: Any) -> torch.Tensor:
    """The loss inside a model's ``output``; else ProjectProblem naming ``loss``."""
    if is_scalar(output):
        return output
    found = getattr(output, "loss", None)
    if found is None and isinstance(output, Mapping):
        found = output.get("loss")
    if is_scalar(found):
        return found
    if isinstance(output, (tuple, list)) and not hasattr(output, "loss"):
        scalars = [item for item in output if is_scalar(item)]
        if len(scalars) == 1:
            return scalars[0]
    raise ProjectProblem(
        "loss-not-found",
        f"the model returned {describe(output)}, and mlsmoke cannot tell which part"
        f" is the loss; {LOSS_CALLABLE_EXAMPLE}",
        config_key="loss",
    )


def describe(value: Any) -> str:
    """A short description of a value for messages: types and tensor shapes."""
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    if isinstance(value, Mapping):
        keys = ", ".join(map(str, list(value)[:6]))
        return f"a {type(value).__name__} with keys ({keys})"
    if isinstance(value, (tuple, list)):
        items = ", ".join(describe(item) for item in value[:4])
        return f"a {type(value).__name__} of {len(value)} ({items})"
    if value is None:
        return "None"
    return f"a {type(value).__name__}"


def check_loss(loss: Any, from_callable: bool) -> torch.Tensor:
    """``loss`` when it is a scalar tensor to train on, else ProjectProblem."""
    source = "the loss callable" if from_callable else "the model's loss"
    if not isinstance(loss, torch.Tensor):
        raise ProjectProblem(
            "loss-not-tensor", f"{source} returned {describe(loss)}, not a tensor"
        )
    if not is_scalar(loss):
        raise ProjectProblem(
            "loss-not-scalar",
            f"{source} returned a tensor of shape {tuple(loss.shape)}, not a scalar;"
            " reduce it, e.g. with .mean()",
        )
    if not loss.requires_grad:
        raise ProjectProblem(
            "loss-no-grad",
            f"{source} does not require grad: it does not depend on any trainable"
            " parameter (frozen parameters, .detach(), .item(), or torch.no_grad())",
        )
    if loss.grad_fn is None:  # requires grad, yet no operation made it: a new leaf
        raise ProjectProblem(
            "loss-no-grad",
            f"{source} is a new tensor that requires grad but was computed from"
            " nothing: it was rebuilt from a number (torch.tensor(loss.item(),"
            " requires_grad=True), .detach().requires_grad_()), so no parameter"
            " gets a gradient",
        )
    return loss.reshape(())
