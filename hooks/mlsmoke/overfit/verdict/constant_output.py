"""Where a model's output stops depending on its parameters: the operation whose
output is constant.

A softmax over a dimension of size 1 is 1.0 whatever its input, and so is a
normalization by its own sum over one element; every gradient behind it is zero. One
forward and backward of a fresh model, with each module's output and the gradient it
receives, tells where: the first module whose output is one value everywhere, or the
last whose output gets a zero gradient.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from mlsmoke.overfit.verdict import forward_probes
from mlsmoke.overfit.verdict.batch_probes import seeded
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import remember


@dataclass
class ModuleOutput:
    name: str
    kind: str  # the module's class name
    leaf: bool  # no submodules: the module is one operation
    shape: tuple[int, ...]
    constant: float | None  # the one value of an output that holds only one
    grads: list[float] = field(default_factory=list)  # norms it received

    @property
    def gets_gradient(self) -> bool:
        return any(norm > 0 for norm in self.grads)


@dataclass
class ConstantFinding:
    outputs: list[ModuleOutput]  # in the order the modules finished
    model_output: ModuleOutput | None
    # every trainable parameter got a zero gradient (or none) from the loss
    parameters_still: bool = False

    def constant_module(self) -> ModuleOutput | None:
        """The first module whose output is one value everywhere though it gets a
        gradient: the loss depends on it, and it depends on nothing."""
        return next(
            (o for o in self.outputs if o.constant is not None and o.gets_gradient),
            None,
        )

    def last_without_gradient(self) -> ModuleOutput | None:
        cut = [o for o in self.outputs if o.grads and not o.gets_gradient]
        return cut[-1] if cut else None


def find_constant(run: GateRun) -> ConstantFinding | None:
    return remember(run, "constant-output", lambda: _trace(run))


def _trace(run: GateRun) -> ConstantFinding | None:
    outputs: list[ModuleOutput] = []

    def after(name: str) -> Callable:
        def hook(module: Any, args: tuple, output: Any) -> None:
            if not isinstance(output, torch.Tensor) or not output.is_floating_point():
                return
            record = ModuleOutput(
                name,
                type(module).__name__,
                not list(module.children()),
                tuple(output.shape),
                _one_value(output),
            )
            outputs.append(record)
            if output.requires_grad:
                output.register_hook(
                    lambda grad: record.grads.append(float(grad.norm()))
                )

        return hook

    try:
        with seeded(run):
            model, batch = forward_probes.fresh_model_and_batch(run)
            model.train()
            handles = [
                module.register_forward_hook(after(name))
                for name, module in model.named_modules()
            ]
            try:
                loss = forward_probes.loss_of(run, model, batch)
                if isinstance(loss, torch.Tensor) and loss.requires_grad:
                    loss.backward()
            finally:
                for handle in handles:
                    handle.remove()
    except Exception:
        return None
    root = [o for o in outputs if o.name == ""]
    inner = [o for o in outputs if o.name != ""]
    trainable = [p for p in model.parameters() if p.requires_grad]
    still = bool(trainable) and all(
        p.grad is None or not bool(p.grad.any()) for p in trainable
    )
    return ConstantFinding(inner, root[-1] if root else None, still)


def _one_value(tensor: torch.Tensor) -> float | None:
    with torch.no_grad():
        flat = tensor.detach().flatten()
        if flat.numel() < 2 or not bool(torch.isfinite(flat).all()):
            return None
        if bool((flat == flat[0]).all()):
            return float(flat[0])
    return None
