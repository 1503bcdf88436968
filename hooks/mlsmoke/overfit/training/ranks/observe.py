"""What a rank observes of its model while it trains: digests of the parameters,
the gradient each backward made on this rank and the one ``optimizer.step()`` saw,
and how many backward passes synced through DDP. Plain values into a RankRecord."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from typing import Any

import torch
from torch.nn.parallel import DistributedDataParallel

from mlsmoke.overfit.training.batch_objects import tensors_in
from mlsmoke.overfit.training.ranks.record import RankRecord

UPDATES_HASHED = 3  # the parameters are compared after construction and these updates
PROJECTIONS = 2  # random directions the gradients are compared along


def inner_module(model: torch.nn.Module) -> torch.nn.Module:
    return model.module if isinstance(model, DistributedDataParallel) else model


def is_fsdp(model: torch.nn.Module) -> bool:
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:
        return False
    return isinstance(model, FSDPModule)


def parameters_digest(model: torch.nn.Module) -> str:
    """One digest of every parameter's values; under FSDP, of the full tensors (a
    collective, which every rank makes at the same points)."""
    digest = hashlib.sha256()
    for name, parameter in inner_module(model).named_parameters():
        tensor = parameter.detach()
        if hasattr(tensor, "full_tensor"):
            tensor = tensor.full_tensor()
        digest.update(name.encode())
        digest.update(_bytes(tensor))
    return digest.hexdigest()[:16]


def sample_digests(batch: Any) -> tuple[str, list[str]]:
    """A digest of the batch, and one per sample: the rows of every tensor that has
    as many rows as the first one."""
    tensors = [t for t in tensors_in(batch) if t.dim() > 0]
    if not tensors:
        return "", []
    size = tensors[0].shape[0]
    rows = [t.detach().cpu().contiguous() for t in tensors if t.shape[0] == size]
    samples = []
    for index in range(size):
        digest = hashlib.sha256()
        for tensor in rows:
            digest.update(_bytes(tensor[index]))
        samples.append(digest.hexdigest()[:16])
    whole = hashlib.sha256("".join(samples).encode()).hexdigest()[:16]
    return whole, samples


def _bytes(tensor: torch.Tensor) -> bytes:
    flat = tensor.detach().cpu().contiguous().reshape(-1)
    return flat.view(torch.uint8).numpy().tobytes()


class ModelObserver:
    """Hooks on one model's parameters and on every optimizer's step, for the first
    updates of a distributed run; ``close()`` removes them."""

    def __init__(self, model: torch.nn.Module, record: RankRecord) -> None:
        self.model, self.record = model, record
        self.ddp = model if isinstance(model, DistributedDataParallel) else None
        named = [
            (n, p) for n, p in inner_module(model).named_parameters() if p.requires_grad
        ]
        record.parameter_names = [name for name, _ in named]
        self.parameters = [parameter for _, parameter in named]
        self.gradient_checked = not self.parameters or is_fsdp(model)
        generator = torch.Generator().manual_seed(0)
        self.directions = [
            [torch.randn(p.shape, generator=generator) for p in self.parameters]
            for _ in range(PROJECTIONS)
        ]
        self.local: list[torch.Tensor | None] = [None] * len(self.parameters)
        self.backwards = self.synced = 0
        self.handles = [
            p.register_hook(self._local_hook(index))
            for index, p in enumerate(self.parameters)
        ]
        if self.parameters:  # fires for backward(), not for torch.autograd.grad()
            self.handles.append(
                self.parameters[0].register_post_accumulate_grad_hook(self._count)
            )
        self.optimizer: Any = None
        self.wrapper: Any = None
        record.hashes.append(parameters_digest(model))

    def watch(self, optimizer: Any) -> None:
        """Observe each ``optimizer.step()`` (the gate's own optimizers are not
        torch.optim's, whose global hooks would miss them)."""
        self.optimizer = optimizer
        self.outermost()

    def outermost(self) -> None:
        """Wrap ``step`` outside any wrapper added since, so that the gradients are
        read before anything else runs at the update (the step watch's own
        ``torch.autograd.grad``, which the parameters' hooks see too)."""
        if self.optimizer is None or self.optimizer.step is self.wrapper:
            return
        original = self.optimizer.step

        @functools.wraps(original)  # keeps the mark an lr scheduler put on it
        def step(*args: Any, **kwargs: Any) -> Any:
            self._before_step()
            returned = original(*args, **kwargs)
            self._after_step()
            return returned

        self.optimizer.step = self.wrapper = step

    def _count(self, parameter: torch.Tensor) -> None:
        """Once per backward pass, and whether DDP synced it."""
        self.backwards += 1
        if self.ddp is not None and self.ddp.require_backward_grad_sync:
            self.synced += 1

    def _local_hook(self, index: int):
        def keep(gradient: torch.Tensor) -> None:
            if self.gradient_checked or not isinstance(gradient, torch.Tensor):
                return
            kept = gradient.detach().float().cpu().clone()  # DDP reduces it in place
            previous = self.local[index]
            self.local[index] = kept if previous is None else previous + kept

        return keep

    def _before_step(self) -> None:
        if len(self.record.backwards) < UPDATES_HASHED:
            self.record.backwards.append(self.backwards)
            self.record.synced_backwards.append(self.synced if self.ddp else -1)
        self.backwards = self.synced = 0
        if self.gradient_checked:
            return
        self.gradient_checked = True
        step = [p.grad for p in self.parameters]
        self.record.local_gradient = self.project(self.local)
        self.record.step_gradient = self.project(step)

    def _after_step(self) -> None:
        if len(self.record.hashes) <= UPDATES_HASHED:
            self.record.hashes.append(parameters_digest(self.model))

    def project(self, gradients: Iterable[torch.Tensor | None]) -> list[float]:
        gradients = list(gradients)
        return [
            float(
                sum(
                    (g.detach().float().cpu() * v).sum()
                    for g, v in zip(gradients, direction)
                    if g is not None
                )
            )
            for direction in self.directions
        ]

    def close(self) -> None:
        for handle in self.handles:
            handle.remove()
