"""The few points script mode instruments while a training script runs unchanged.

- an optimizer's construction: its class, lr and the line that built it;
- ``torch.autograd.backward`` (``loss.backward()`` calls it): the loss of each
  micro-batch, added up until the next update, as the script scales them;
- ``optimizer.step()`` of the first optimizer built: one gate step. Before it, the
  update's loss is recorded and the stop rules of ``engine.py`` are applied (a
  probe's early stop and the gate's CPU budget too); the lr scale of a probe is
  applied to every group for the update and undone after it;
- every module's forward at the first step: which modules the forward called.

At the first step the model is found: the module on the stack that owns the most of
the optimizer's parameters; a copy of it, untrained, serves the probes.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.nn.modules.module import register_module_forward_hook
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)

from mlsmoke.overfit.training.device import limit_cpu_threads, restore_cpu_threads
from mlsmoke.overfit.training.engine import stops_after
from mlsmoke.overfit.training.evidence import Evidence, ProjectProblem
from mlsmoke.overfit.training.instruments import (
    gradient_norms,
    is_dropout,
    parameter_aliases,
)
from mlsmoke.overfit.training.script_frames import construction_site
from mlsmoke.overfit.training.script_gradients import (
    check_gradients_cleared,
    note_gradients,
)
from mlsmoke.overfit.training.script_model import find_model, untrained_copy
from mlsmoke.overfit.training.run_state import EarlyStop, StepCallback


class ScriptStopped(BaseException):
    """Raised at an optimizer step to end the script: a BaseException, so that the
    script's own ``except Exception`` lets it through."""


@dataclass
class StepRules:
    """What one run of the script is asked: engine.train's keywords."""

    max_steps: int
    target_loss: float | None
    target_ratio: float | None
    timeout: float
    lr_scale: float = 1.0
    flat_lr: bool = False  # every update at the optimizer's own lr: no schedule
    on_step: StepCallback | None = None
    stop_early: EarlyStop | None = None  # a probe's: it ends once its answer is clear
    # The gate's CPU budget for its probes (time.process_time(), as
    # verdict/diagnosis_budget.py counts it): a probe past it stops, timed out.
    cpu_deadline: float | None = None


@dataclass
class ScriptWatch:
    """The state of one instrumented run, read by the runner at its end."""

    evidence: Evidence
    rules: StepRules
    root: Path
    script: Path
    started: float = field(default_factory=time.perf_counter)
    started_cpu: float = field(default_factory=time.process_time)
    # CPU seconds from the start to the second update: the script's launch (its
    # imports, its setup) and its own work after its first update (an eval at
    # iteration 0), paid again by every probe before its curve says anything
    launch_cpu: float | None = None
    optimizer: torch.optim.Optimizer | None = None
    constructed_lr: float | None = None
    optimizer_site: str = ""
    step_site: str = ""  # where the script calls optimizer.step()
    threads: int | None = None  # torch's CPU threads before the run limited them
    calls: Any = None  # the forward hook that notes the modules the first step calls
    micro_losses: list[float] = field(default_factory=list)
    backwards_per_update: int = 0
    model: torch.nn.Module | None = None
    initial_model: torch.nn.Module | None = None
    parameter_names: dict[int, str] = field(default_factory=dict)
    called: set[int] = field(default_factory=set)  # module ids the first step called
    got_gradient: set[int] = field(default_factory=set)  # parameter ids
    saved_lrs: list[float] = field(default_factory=list)
    evaluating: bool = False  # the last update: the loss in eval mode, no backward
    closure_update: bool = False  # this update's backward() runs inside step()
    eval_loss: float | None = None
    phase: str = "script"  # where an error happened: script, forward, backward, step
    on_first_step: Callable[[], None] | None = None  # the batch pin's lock

    # the surface the stop rules of engine.py read
    @property
    def stop_early(self) -> EarlyStop | None:
        return self.rules.stop_early

    @property
    def target_loss(self) -> float | None:
        return self.rules.target_loss

    @property
    def target_ratio(self) -> float | None:
        return self.rules.target_ratio

    def out_of_time(self) -> bool:
        return time.perf_counter() - self.started > self.rules.timeout

    def past_cpu_deadline(self) -> bool:
        deadline = self.rules.cpu_deadline
        return deadline is not None and time.process_time() >= deadline

    @property
    def stepped(self) -> bool:
        return bool(self.evidence.losses)


@contextmanager
def instrumented(watch: ScriptWatch) -> Iterator[None]:
    """The points above, installed for the duration of one run of the script."""
    undo: list[Callable[[], None]] = []
    try:
        undo.append(_wrap_optimizer_init(watch))
        undo.append(_wrap_backward(watch))
        pre = register_optimizer_step_pre_hook(
            lambda optimizer, args, kwargs: _before_step(watch, optimizer, args, kwargs)
        )
        post = register_optimizer_step_post_hook(
            lambda optimizer, args, kwargs: _after_step(watch, optimizer)
        )
        undo += [pre.remove, post.remove]
        watch.calls = register_module_forward_hook(
            lambda module, args, output: _called(watch, module)
        )
        undo.append(watch.calls.remove)
        yield
    finally:
        for step in reversed(undo):
            step()
        restore_cpu_threads(watch.threads)


def _wrap_optimizer_init(watch: ScriptWatch) -> Callable[[], None]:
    original = torch.optim.Optimizer.__init__

    def built(optimizer: Any, params: Any, defaults: dict, *args: Any, **kw: Any):
        original(optimizer, params, defaults, *args, **kw)
        if watch.optimizer is None:
            watch.optimizer = optimizer
            watch.constructed_lr = float(optimizer.param_groups[0]["lr"])
            watch.optimizer_site = construction_site(watch.root, sys._getframe(1))
            watch.evidence.optimizer = type(optimizer).__name__

    torch.optim.Optimizer.__init__ = built  # type: ignore[method-assign]
    return lambda: setattr(torch.optim.Optimizer, "__init__", original)


def _wrap_backward(watch: ScriptWatch) -> Callable[[], None]:
    original = torch.autograd.backward

    def backward(tensors: Any, *args: Any, **kwargs: Any) -> None:
        if watch.optimizer is not None and _is_scalar(tensors):
            if not watch.micro_losses and watch.stepped and not watch.evaluating:
                check_gradients_cleared(watch)
            watch.micro_losses.append(float(tensors.detach()))
            if watch.evaluating:
                return None  # the eval-mode loss is read, never trained on
        watch.phase = "backward"
        original(tensors, *args, **kwargs)
        watch.phase = "forward"

    torch.autograd.backward = backward
    return lambda: setattr(torch.autograd, "backward", original)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.numel() == 1


def _called(watch: ScriptWatch, module: torch.nn.Module) -> None:
    if watch.optimizer is not None:
        watch.called.add(id(module))


def _before_step(
    watch: ScriptWatch, optimizer: torch.optim.Optimizer, args: tuple, kwargs: dict
) -> None:
    if optimizer is not watch.optimizer:
        return
    watch.phase = "step"
    closure = kwargs.get("closure", args[0] if args else None)
    if not watch.micro_losses and callable(closure):
        # backward() runs inside step(closure) (a trainer's closure, LBFGS): the
        # update is judged after the step, from the losses the closure's backward gave
        watch.closure_update = True
        if not watch.evaluating:
            _scale_lrs(watch, optimizer)
        return
    if _judge_update(watch, optimizer):
        _scale_lrs(watch, optimizer)


def _after_step(watch: ScriptWatch, optimizer: torch.optim.Optimizer) -> None:
    if optimizer is not watch.optimizer:
        return
    for group, lr in zip(optimizer.param_groups, watch.saved_lrs):
        group["lr"] = lr
    watch.saved_lrs = []
    watch.phase = "forward"
    if watch.closure_update:
        watch.closure_update = False
        _judge_update(watch, optimizer)


def _judge_update(watch: ScriptWatch, optimizer: torch.optim.Optimizer) -> bool:
    """Record the update's loss and apply the stop rules: ScriptStopped to end the
    run; False when the next update is the eval-mode one; True to go on."""
    evidence = watch.evidence
    if not watch.micro_losses:
        raise ProjectProblem(
            "step-no-backward",
            "optimizer.step() was called with no backward() since the last step;"
            " the gate reads each update's loss from the backward() calls before it",
        )
    value = sum(watch.micro_losses)
    watch.backwards_per_update = len(watch.micro_losses)
    watch.micro_losses.clear()
    if watch.evaluating:
        watch.eval_loss = value
        raise ScriptStopped
    if len(evidence.losses) == 1:
        watch.launch_cpu = time.process_time() - watch.started_cpu
    if not watch.stepped:
        watch.step_site = construction_site(watch.root, sys._getframe(3), frames=1)
        _first_step(watch, optimizer)
    note_gradients(watch, optimizer)
    step = len(evidence.losses)
    evidence.losses.append(value)
    if watch.rules.on_step is not None:
        watch.rules.on_step(step, value)
    if value != value or value in (float("inf"), float("-inf")):
        raise ScriptStopped
    if stops_after(watch, step, value):  # type: ignore[arg-type]
        if not evidence.reached and watch.past_cpu_deadline():
            evidence.timed_out = True  # cut by the budget: its curve refutes nothing
        if evidence.reached or evidence.timed_out or watch.model is None:
            raise ScriptStopped
        _evaluate_next_update(watch, optimizer)
        return False
    return True


def _scale_lrs(watch: ScriptWatch, optimizer: torch.optim.Optimizer) -> None:
    """A probe's lr scale (or its flat lr) on every group, for this update only."""
    groups = optimizer.param_groups
    watch.saved_lrs = [group["lr"] for group in groups]
    for group in groups:
        base = watch.constructed_lr if watch.rules.flat_lr else group["lr"]
        group["lr"] = _as_float(base) * watch.rules.lr_scale
    watch.evidence.lrs.append(_as_float(groups[0]["lr"]))


def _as_float(lr: Any) -> float:
    return float(lr.item() if isinstance(lr, torch.Tensor) else lr)


def _evaluate_next_update(watch: ScriptWatch, optimizer: torch.optim.Optimizer) -> None:
    """Stopped short: this update is skipped (no gradients, no step), and the next
    one's loss is taken with the model in eval mode, where dropout and other
    train-mode noise are off: whether the batch was learned, not how noisy it is."""
    for group in optimizer.param_groups:
        for parameter in group["params"]:
            parameter.grad = None
    watch.evaluating = True
    assert watch.model is not None
    watch.model.eval()
    watch.model.train = _stays_in_eval(watch.model)  # type: ignore[method-assign]


def _stays_in_eval(model: torch.nn.Module) -> Callable[..., torch.nn.Module]:
    def train(mode: bool = True) -> torch.nn.Module:
        return model

    return train


def _first_step(watch: ScriptWatch, optimizer: torch.optim.Optimizer) -> None:
    """Find the model, keep an untrained copy of it, and name its parameters."""
    if watch.on_first_step is not None:
        watch.on_first_step()
    evidence = watch.evidence
    parameters = [p for group in optimizer.param_groups for p in group["params"]]
    model = find_model(parameters, sys._getframe(2))
    watch.model = model
    if model is None:
        return
    names = {}
    for name, parameter in model.named_parameters(remove_duplicate=False):
        names.setdefault(id(parameter), name)
    watch.parameter_names = names
    evidence.device = str(parameters[0].device) if parameters else "cpu"
    watch.threads = limit_cpu_threads(
        evidence.device, sum(p.numel() for p in model.parameters())
    )
    evidence.one_cpu_thread = watch.threads is not None  # the checks' too (gate.py)
    evidence.requires_grad = {
        name: parameter.requires_grad for name, parameter in model.named_parameters()
    }
    evidence.first_grads = gradient_norms(model)
    evidence.parameter_aliases = parameter_aliases(model)
    if watch.calls is not None:
        watch.calls.remove()  # the first update's forward is all it needs
    evidence.module_order = [
        name for name, module in model.named_modules() if id(module) in watch.called
    ]
    evidence.dropout = {
        name: float(module.p)
        for name, module in model.named_modules()
        if is_dropout(module) and module.training and module.p > 0
    }
    with suppress(Exception):  # a model that cannot be copied serves no probe
        watch.initial_model = untrained_copy(model)
