"""Which tensors really train: the optimizer's tensors against the model's parameters,
and the leaves of the loss's autograd graph against both.

Bookkeeping bugs are silent: layers kept in a plain Python list, a bare tensor with
``requires_grad=True``, or an optimizer built over the wrong tensors all train
nothing (or the wrong thing) without an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import torch

from mlsmoke.overfit.training.inventory import batch_fields, describe_value

SHOWN = 6


def optimizer_tensors(optimizer: Any) -> list[torch.Tensor]:
    groups = getattr(optimizer, "param_groups", None) or []
    return [p for group in groups for p in group.get("params", [])]


def optimizer_coverage(
    model: torch.nn.Module, optimizer: Any, batch: Any
) -> tuple[list[str], list[str]]:
    """The model's trainable parameters the optimizer lacks (by name), and the tensors
    it holds that are not the model's (described, with the batch field they are)."""
    held = {id(p) for p in optimizer_tensors(optimizer)}
    named = dict(model.named_parameters())
    owned = {id(p) for p in named.values()}
    missing = [n for n, p in named.items() if p.requires_grad and id(p) not in held]
    extra = [
        describe_tensor(t, model, batch)
        for t in optimizer_tensors(optimizer)
        if id(t) not in owned
    ]
    return missing, extra


def unregistered_leaves(
    loss: torch.Tensor, model: torch.nn.Module, batch: Any
) -> list[str]:
    """The trainable leaves the loss depends on that are not the model's parameters,
    described by where the model keeps them. Batch tensors, and views of them that
    forward marks ``requires_grad`` (audio encoders do, for gradient checkpointing),
    are inputs, not parameters."""
    return [
        describe_tensor(leaf, model, batch)
        for leaf in unowned_leaves(loss, model, batch)
    ]


def unowned_leaves(
    loss: torch.Tensor, model: torch.nn.Module, batch: Any
) -> list[torch.Tensor]:
    """The leaves :func:`unregistered_leaves` describes, as tensors. A buffer is
    registered too (state_dict and .to(device) hold it): a library may make one
    require grad, a zero that a loss accumulates into."""
    owned = {id(p) for p in model.parameters()} | {id(b) for b in model.buffers()}
    inputs = {_storage(t) for _, t in _batch_tensors(batch)}
    return [
        leaf
        for leaf in graph_leaves(loss)
        if id(leaf) not in owned and _storage(leaf) not in inputs
    ]


def _storage(tensor: torch.Tensor) -> int:
    """Where the tensor's data lives: a view shares its base's."""
    try:
        return tensor.untyped_storage().data_ptr()
    except RuntimeError:  # no storage (a meta or sparse tensor)
        return id(tensor)


def graph_leaves(loss: torch.Tensor) -> list[torch.Tensor]:
    """The tensors autograd would accumulate a gradient into: the ``.variable`` of each
    AccumulateGrad node under ``loss.grad_fn``."""
    leaves: dict[int, torch.Tensor] = {}
    seen: set[int] = set()
    stack = [loss.grad_fn] if loss.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if isinstance(variable, torch.Tensor):
            leaves.setdefault(id(variable), variable)
        stack.extend(child for child, _ in getattr(node, "next_functions", ()))
    return list(leaves.values())


def describe_tensor(tensor: torch.Tensor, model: torch.nn.Module, batch: Any) -> str:
    """A tensor as a user knows it: the attribute that holds it, the batch field it is,
    or its dtype and shape."""
    for name, value in _batch_tensors(batch):
        if value is tensor:
            return f"batch field {name} ({describe_value(tensor)})"
    for path, value in _attribute_tensors(model):
        if value is tensor:
            return f"{path} ({describe_value(tensor)})"
    return f"a {describe_value(tensor)} the model does not hold"


def attribute_parameters(model: torch.nn.Module) -> list[str]:
    """Trainable tensors kept in the modules' plain attributes (not registered)."""
    return [
        f"{path} ({describe_value(value)})"
        for path, value in _attribute_tensors(model)
        if value.requires_grad
    ]


def _batch_tensors(batch: Any) -> list[tuple[str, torch.Tensor]]:
    return [(n, v) for n, v in batch_fields(batch) if isinstance(v, torch.Tensor)]


def _attribute_tensors(model: torch.nn.Module) -> Iterator[tuple[str, torch.Tensor]]:
    """Tensors reachable from the modules' plain attributes (lists, dicts, tensors
    torch does not register), with the path a user would write."""
    for prefix, module in model.named_modules():
        for attribute, value in vars(module).items():
            if attribute.startswith("_"):
                continue
            path = f"{prefix}.{attribute}" if prefix else attribute
            yield from _tensors_under(path, value, depth=0)


def _tensors_under(path: str, value: Any, depth: int) -> Iterator[tuple[str, Any]]:
    if isinstance(value, torch.Tensor):
        yield path, value
    elif isinstance(value, torch.nn.Module):
        if depth:  # a module in a plain container: its parameters are unregistered
            for name, p in value.named_parameters():
                yield f"{path}.{name}", p
    elif depth < 2 and isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _tensors_under(f"{path}[{i}]", item, depth + 1)
    elif depth < 2 and isinstance(value, Mapping):
        for key, item in value.items():
            yield from _tensors_under(f"{path}[{key!r}]", item, depth + 1)


def listed(names: list[str]) -> list[str]:
    """At most SHOWN names, and a count of the rest."""
    if len(names) <= SHOWN:
        return names
    return names[:SHOWN] + [f"and {len(names) - SHOWN} more"]
