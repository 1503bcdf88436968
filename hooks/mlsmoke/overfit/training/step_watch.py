"""The invariants of the project's step function, checked around its first calls.

Cheap by design: a hook on each parameter sees every gradient arrive (before it is
added to ``.grad``), the optimizer's and scheduler's ``step`` are wrapped to see their
order, and tensor version counters show what changed in place. Only the first
``checked_calls`` calls are watched; an accumulating step adds one backward of the
gate's own loss at the update, to compare with. Each broken invariant is a
StepFinding in the evidence, once per code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch

from mlsmoke.overfit.training import step_accumulation, step_coverage, step_lines
from mlsmoke.overfit.training import step_findings as findings
from mlsmoke.overfit.training.evidence import StepFinding
from mlsmoke.overfit.training.run_state import TrainingRun
from mlsmoke.overfit.training.step_function import StepFunction

# Modules that behave differently in eval mode: there eval mode changes what trains.
MODE_DEPENDENT = (
    torch.nn.modules.dropout._DropoutNd,
    torch.nn.modules.batchnorm._NormBase,
)
# What autograd says when backward meets a loss without a graph, and what Python says
# when the loss is a number (.item()).
NO_GRAPH = ("does not require grad", "has no attribute 'backward'")


class StepWatch:
    """Watches one run's calls of the step function; findings go to the evidence."""

    def __init__(self, run: TrainingRun, step: StepFunction, optimizer: Any,
                 scheduler: Any, accumulate: int,
                 on_update: Callable[[], None]) -> None:  # fmt: skip
        self.run, self.step, self.accumulate = run, step, accumulate
        self.model = run.model
        self.parameters = [p for p in self.model.parameters() if p.requires_grad]
        self.built_with = {id(p) for p in self.model.parameters()}
        self.checked_calls = max(3, 2 * accumulate + 1)
        self.mode_dependent = run.train_mode and any(
            isinstance(m, MODE_DEPENDENT) for m in self.model.modules()
        )
        self.optimizer, self.scheduler, self.on_update = optimizer, scheduler, on_update
        self.watching = False
        self.index = 0
        self.events: list[tuple[str, str | None]] = []
        self.arrived = [0] * len(self.parameters)
        self.tracker: int | None = None  # the parameter counting backward passes
        self.passes = 0  # backward passes summed in the gradients now
        self.stepped_since_clear = False
        self.backward_line: str | None = None
        self.forward_training: list[bool] = []
        self.updated = self.got_gradients = self.optimizer_stepped = False
        self.finished = self.cleared_before_update = False
        self.after_update: list[tuple[torch.Tensor, torch.Tensor, int]] = []
        self.comparing = False
        self._restore: list[Callable[[], None]] = []
        self._handles: list[Any] = []

    # -- the run -----------------------------------------------------------------
    def install(self) -> None:
        """Wrap the optimizer's and scheduler's ``step`` for the run."""
        self._wrap(self.optimizer, self._before_update, self._after_update)
        if callable(getattr(self.optimizer, "zero_grad", None)):
            self._wrap(self.optimizer, self._before_clearing, None, "zero_grad")
        if self.scheduler is not None:
            self._wrap(self.scheduler, self._scheduler_stepped, None)

    def uninstall(self) -> None:
        self._disarm()
        for restore in reversed(self._restore):
            restore()
        self._restore.clear()

    def call(self, index: int, values: dict[str, Any]) -> Any:
        """One call of the step function, watched when it is among the first."""
        self.index, self.events = index, []
        if index < self.checked_calls:
            self._arm()
        try:
            returned = self.step.call({**values, "index": index})
        except Exception as error:
            self._disarm()
            self._raised(error)
            raise
        if self.watching:
            self._disarm()
            self._judge()
        if index + 1 == self.checked_calls:
            self.finish()
        return returned

    def finish(self) -> None:
        """Judge what needs every watched call, once: did a gradient ever arrive, did
        an update ever change a parameter."""
        if self.finished:
            return
        self.finished = True
        if not self.got_gradients:
            self._no_backward()
        elif not self.updated:
            self._unchanged()

    # -- wrapping ----------------------------------------------------------------
    def _wrap(self, owner: Any, before: Callable[[], None],
              after: Callable[[], None] | None,
              name: str = "step") -> None:  # fmt: skip
        own = owner.__dict__.get(name)  # a scheduler patches optimizer.step
        inner = getattr(owner, name)

        @functools.wraps(inner)  # keeps the mark torch's schedulers put on it
        def step(*args: Any, **kwargs: Any) -> Any:
            before()
            result = inner(*args, **kwargs)
            if after is not None:
                after()
            return result

        setattr(owner, name, step)
        if own is None:
            self._restore.append(lambda: owner.__dict__.pop(name, None))
        else:
            self._restore.append(lambda: setattr(owner, name, own))

    def _before_update(self) -> None:
        self.optimizer_stepped = True
        self.on_update()
        if not self.watching:
            return
        self.events.append(("optimizer.step", step_lines.calling_line(self.step.code)))
        arrived = [p for p, n in zip(self.parameters, self.arrived) if n]
        if arrived and all(
            p.grad is None or not bool(p.grad.detach().ne(0).any()) for p in arrived
        ):
            self.cleared_before_update = True
        if self.passes > 1 and self.index > 0:
            self._compare_with_fresh_gradient()

    def _after_update(self) -> None:
        self.stepped_since_clear = True
        if self.watching:
            self.events.append(("optimizer.stepped", None))
            self.after_update = [(p, p.grad, p.grad._version) for p in self.parameters
                                 if p.grad is not None]  # fmt: skip

    def _before_clearing(self) -> None:
        """Gradients changed since the update are judged before zero_grad clears
        them (in place, or by dropping them)."""
        if self.watching:
            self._modified_after_update()
            self.after_update = []

    def _scheduler_stepped(self) -> None:
        if self.watching:
            line = step_lines.calling_line(self.step.code)
            self.events.append(("scheduler.step", line))

    # -- one watched call --------------------------------------------------------
    def _arm(self) -> None:
        self.watching = True
        self.arrived = [0] * len(self.parameters)
        self.tracker, self.forward_training, self.after_update = None, [], []
        self.versions = [p._version for p in self.parameters]
        for i, parameter in enumerate(self.parameters):
            self._handles.append(parameter.register_hook(self._arrival(i)))
        self._handles.append(self.model.register_forward_pre_hook(self._forward))

    def _disarm(self) -> None:
        self.watching = False
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def _forward(self, module: Any, args: Any) -> None:
        if not self.comparing:
            self.forward_training.append(module.training)

    def _arrival(self, i: int) -> Callable[[torch.Tensor], None]:
        def arrived(gradient: torch.Tensor) -> None:
            if self.comparing:
                return
            if self.tracker is None:
                self.tracker = i
                self._first_pass(self.parameters[i])
            elif i == self.tracker:
                self.passes += 1
            if i == self.tracker:
                self.events.append(("backward", None))
            self.arrived[i] += 1

        return arrived

    def _first_pass(self, parameter: torch.Tensor) -> None:
        """The call's first backward: the gradients it adds to should be cleared, unless
        the project accumulates (``accumulate``) and has not updated since."""
        self.backward_line = step_lines.calling_line(self.step.code)
        grad = parameter.grad
        carried = grad is not None and bool(grad.detach().ne(0).any())
        if not carried:
            self.passes, self.stepped_since_clear = 1, False
            return
        if self.stepped_since_clear or self.passes >= self.accumulate:
            self._found(findings.gradients_accumulate(
                self.index, self.passes, self.accumulate, self.stepped_since_clear,
                self.backward_line))  # fmt: skip
        self.passes += 1

    def _judge(self) -> None:
        """The invariants one call shows by itself."""
        got = sum(self.arrived) > 0
        self.got_gradients |= got
        if got and any(
            p._version != v
            for p, v, n in zip(self.parameters, self.versions, self.arrived)
            if n
        ):
            self.updated = True
        if self.mode_dependent and False in self.forward_training:
            self._eval_mode()
        self._modified_after_update()
        self._scheduler_order()
        self._outside_the_optimizer()
        self._update_before_backward()

    def _raised(self, error: Exception) -> None:
        if not self.parameters:  # a frozen model: the no-gradient diagnosis's case
            return
        if isinstance(error, (RuntimeError, AttributeError)) and any(
            text in str(error) for text in NO_GRAPH
        ):
            number = isinstance(error, AttributeError)
            line = step_lines.raising_line(error, self.step.code)
            self._found(findings.no_graph(number, line))

    # -- the invariants ----------------------------------------------------------
    def _no_backward(self) -> None:
        self._found(findings.no_backward(self.step, self.checked_calls))

    def _unchanged(self) -> None:
        self._found(findings.unchanged(
            self.step, self.checked_calls, self.cleared_before_update,
            self.optimizer_stepped, self.backward_line))  # fmt: skip

    def _eval_mode(self) -> None:
        modules = sorted({type(m).__name__ for m in self.model.modules()
                          if isinstance(m, MODE_DEPENDENT)})  # fmt: skip
        self._found(findings.eval_mode(self.step, self.index, modules))

    def _modified_after_update(self) -> None:
        for _, grad, version in self.after_update:
            if grad._version != version and bool(grad.detach().ne(0).any()):
                update = self._line_of("optimizer.step")
                self._found(findings.clip_after_step(self.step, update))
                return

    def _scheduler_order(self) -> None:
        order = [event for event, _ in self.events]
        if (
            "scheduler.step" in order
            and "optimizer.step" in order
            and order.index("scheduler.step") < order.index("optimizer.step")
        ):
            update = self._line_of("optimizer.step")
            scheduler = self._line_of("scheduler.step")
            self._found(findings.scheduler_order(update, scheduler))

    def _outside_the_optimizer(self) -> None:
        names = step_coverage.outside_the_optimizer(self.model, self.optimizer)
        if names:
            parameters = dict(self.model.named_parameters())
            new = any(id(parameters[n]) not in self.built_with for n in names)
            self._found(step_coverage.not_held(self.step, self.model, names, new))

    def _update_before_backward(self) -> None:
        """Without accumulation, a call ends with its update: a backward after the
        last one leaves its gradient to the next call's update."""
        order = [event for event, _ in self.events]
        if self.accumulate != 1 or "optimizer.stepped" not in order:
            return
        last_update = len(order) - 1 - order[::-1].index("optimizer.stepped")
        if "backward" in order[last_update:]:
            update = self._line_of("optimizer.step")
            self._found(findings.update_before_backward(
                update, self.backward_line))  # fmt: skip

    def _compare_with_fresh_gradient(self) -> None:
        """Accumulated gradients at the update against one fresh backward of the gate's
        loss (``step_accumulation.py``); the hooks ignore that backward."""
        self.comparing = True
        try:
            ratio = step_accumulation.update_ratio(self.run, self.parameters)
        finally:
            self.comparing = False
        found = None if ratio is None else findings.undivided(
            ratio, self.passes, self.backward_line)  # fmt: skip
        if found is not None:
            self._found(found)

    # -- findings ----------------------------------------------------------------
    def _line_of(self, event: str) -> str | None:
        return next((line for name, line in self.events if name == event), None)

    def _found(self, finding: StepFinding) -> None:
        """Record ``finding``, once per code."""
        recorded = self.run.evidence.step_findings
        if all(earlier.code != finding.code for earlier in recorded):
            recorded.append(finding)
