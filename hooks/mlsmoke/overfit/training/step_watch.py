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
import math
from collections.abc import Callable
from typing import Any

import torch

from mlsmoke.overfit.training import step_lines
from mlsmoke.overfit.training.evidence import (
    STEP_CLIP_AFTER_STEP,
    STEP_EVAL_MODE,
    STEP_GRADIENTS_ACCUMULATE,
    STEP_NO_BACKWARD,
    STEP_NO_GRADIENT,
    STEP_PARAMETERS_UNCHANGED,
    STEP_SCHEDULER_ORDER,
    STEP_UNDIVIDED_ACCUMULATION,
    StepFinding,
)
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
              after: Callable[[], None] | None) -> None:  # fmt: skip
        own = owner.__dict__.get("step")  # a scheduler patches optimizer.step
        inner = owner.step

        @functools.wraps(inner)  # keeps the mark torch's schedulers put on it
        def step(*args: Any, **kwargs: Any) -> Any:
            before()
            result = inner(*args, **kwargs)
            if after is not None:
                after()
            return result

        owner.step = step
        if own is None:
            self._restore.append(lambda: owner.__dict__.pop("step", None))
        else:
            self._restore.append(lambda: setattr(owner, "step", own))

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
            self.after_update = [(p, p.grad, p.grad._version) for p in self.parameters
                                 if p.grad is not None]  # fmt: skip

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
            self._found(
                STEP_GRADIENTS_ACCUMULATE,
                f"the gradients of call {self.index} were added to those of earlier"
                f" calls ({self.passes} backward pass"
                f"{'es' if self.passes > 1 else ''} already in .grad"
                + (", already applied by optimizer.step()" if self.stepped_since_clear
                   else f", accumulate = {self.accumulate}")  # fmt: skip
                + "): optimizer.zero_grad() is never called, or in the wrong place",
                self.backward_line,
                "call optimizer.zero_grad() before loss.backward()",
            )
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

    def _raised(self, error: Exception) -> None:
        if not self.parameters:  # a frozen model: the no-gradient diagnosis's case
            return
        if isinstance(error, (RuntimeError, AttributeError)) and any(
            text in str(error) for text in NO_GRAPH
        ):
            number = isinstance(error, AttributeError)
            self._found(
                STEP_NO_GRADIENT,
                "the step function called backward on a loss "
                + ("that is a Python number (.item() or float()): it has no graph"
                   if number else "with no graph: computed under torch.no_grad()"
                   " or torch.inference_mode(), or detached (.detach(), .data)"),
                step_lines.raising_line(error, self.step.code),
                "compute the loss with gradients enabled and call backward on the"
                " tensor itself",
            )  # fmt: skip

    # -- the invariants ----------------------------------------------------------
    def _no_backward(self) -> None:
        written = step_lines.call_lines(self.step.function, ("backward",))
        if written:
            message = (
                "no gradient reached any of the model's parameters in"
                f" {self.checked_calls} calls: its backward is called on a"
                " loss the model's parameters do not feed, or never runs"
            )
        else:  # fmt: skip
            message = "the step function never calls backward(): nothing trains"
        self._found(STEP_NO_BACKWARD, message, written[0] if written else
                    step_lines.first_body_line(self.step.function),
                    "compute the loss from the model's output and call"
                    " loss.backward() before optimizer.step()")  # fmt: skip

    def _unchanged(self) -> None:
        stepped = step_lines.call_lines(self.step.function, ("step",))
        told = [line for line in stepped if "sched" not in line.lower()]
        fix = ("build the optimizer over this model's parameters, after the model,"
               " and call optimizer.step() after loss.backward()")  # fmt: skip
        if self.cleared_before_update:
            told = step_lines.call_lines(self.step.function, ("zero_grad",)) or told
            why = (
                "the gradients are cleared between loss.backward() and"
                " optimizer.step(): optimizer.zero_grad() is in the wrong place"
            )
            fix = "call optimizer.zero_grad() before loss.backward(), not after it"
        elif self.optimizer_stepped or told:
            why = ("the optimizer it steps does not hold the model's parameters (built"
                   " over another, or an earlier, model)")  # fmt: skip
        else:
            why = "optimizer.step() is never called"
        self._found(
            STEP_PARAMETERS_UNCHANGED,
            f"the parameters that got gradients did not change in {self.checked_calls}"
            f" calls: {why}",
            told[0] if told else self.backward_line,
            fix,
        )

    def _eval_mode(self) -> None:
        modules = sorted({type(m).__name__ for m in self.model.modules()
                          if isinstance(m, MODE_DEPENDENT)})  # fmt: skip
        self._found(
            STEP_EVAL_MODE,
            f"the model ran in eval mode during call {self.index} of the step"
            f" function, so its {', '.join(modules)} behave as at inference; the"
            " model arrives as the project's loop gets it, and nothing calls"
            " model.train() (after a validation pass, or a from_pretrained model)",
            step_lines.first_body_line(self.step.function),
            "call model.train() at the top of the step function",
        )

    def _modified_after_update(self) -> None:
        for parameter, grad, version in self.after_update:
            if (
                parameter.grad is grad
                and grad._version != version
                and bool(grad.detach().ne(0).any())
            ):
                clipped = step_lines.call_lines(
                    self.step.function, ("clip_grad_norm_", "clip_grad_value_")
                )
                update = self._line_of("optimizer.step")
                self._found(
                    STEP_CLIP_AFTER_STEP,
                    "the gradients were changed in place after optimizer.step()"
                    f" ({update or 'the update'}): clipping (or any change) there"
                    " has no effect on the update it was meant for",
                    clipped[0] if clipped else update,
                    "clip the gradients between loss.backward() and optimizer.step()",
                )
                return

    def _scheduler_order(self) -> None:
        order = [event for event, _ in self.events]
        if (
            "scheduler.step" in order
            and "optimizer.step" in order
            and order.index("scheduler.step") < order.index("optimizer.step")
        ):
            update = self._line_of("optimizer.step")
            self._found(
                STEP_SCHEDULER_ORDER,
                "scheduler.step() runs before optimizer.step()"
                f" ({update or 'the update'}), so the first lr of the schedule is"
                " skipped (PyTorch warns about this order too)",
                self._line_of("scheduler.step"),
                "call scheduler.step() after optimizer.step()",
            )

    def _compare_with_fresh_gradient(self) -> None:
        """Accumulated gradients at the update against one fresh backward of the gate's
        loss on the same batch: accumulating N micro-batches without dividing their
        losses gives N times it."""
        with_grad = [p for p in self.parameters if p.grad is not None]
        fresh = self._fresh_gradient(with_grad)
        if fresh is None:
            return
        dot = sum(float((p.grad.float() * g.float()).sum())
                  for p, g in zip(with_grad, fresh) if g is not None)  # fmt: skip
        norm = sum(float(g.float().pow(2).sum()) for g in fresh if g is not None)
        if not norm or not math.isfinite(dot):
            return
        ratio = dot / norm
        if ratio >= math.sqrt(self.passes):
            self._found(
                STEP_UNDIVIDED_ACCUMULATION,
                f"the update applied {ratio:.2g} times the gradient of the batch's loss"
                f" after {self.passes} backward passes: the accumulated losses are"
                " summed, not averaged",
                self.backward_line,
                f"divide each loss by the number of backward passes per update"
                f" ({self.passes}) before loss.backward()",
            )

    def _fresh_gradient(self, parameters: list[torch.Tensor]) -> list | None:
        """The gradient of the gate's own loss on the batch, the model's state and the
        random streams left as they were; None when the gate cannot compute it."""
        buffers = [b.detach().clone() for b in self.model.buffers()]
        self.comparing = True
        phase = self.run.phase
        try:
            with torch.random.fork_rng(devices=[]), torch.enable_grad():
                loss = self.run.forward()
                return list(torch.autograd.grad(loss, parameters, allow_unused=True))
        except Exception:
            return None
        finally:
            self.comparing, self.run.phase = False, phase
            with torch.no_grad():
                for buffer, saved in zip(self.model.buffers(), buffers):
                    buffer.copy_(saved)

    # -- findings ----------------------------------------------------------------
    def _line_of(self, event: str) -> str | None:
        return next((line for name, line in self.events if name == event), None)

    def _found(self, code: str, message: str, where: str | None, fix: str) -> None:
        findings = self.run.evidence.step_findings
        if all(finding.code != code for finding in findings):
            findings.append(StepFinding(code, message, where, fix))
