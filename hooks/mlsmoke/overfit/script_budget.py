"""How much a failing gate in script mode may spend after its run.

Model mode's rule (``verdict/diagnosis_budget.py``), with RUN_MULTIPLE times the run
after it: the run and everything after it take at most FAILING_GATE_CPU_SECONDS of
CPU, or, when the run alone took most of that, (1 + RUN_MULTIPLE) times the run. In
script mode a failing run has taken all of ``max-steps`` (or met its timeout), through
the script's own launch and loop: the user has already sized it to what a commit may
cost. Its probes run the same script at another lr, shorter and ending once their
answer is clear, so one run's worth of CPU pays for the lr range test and the
script's launch again per probe: a failing gate costs at most twice its run.

Each probe relaunches the script: it pays the script's imports (cached after the run),
its setup and its own work around its first update (minGPT's adder evaluates at
iteration 0) again before its curve says anything. A probe the budget left cannot pay
that launch for is not started: it would be cut at once and refute nothing. The
budget is read at every optimizer step; the script's own work between two later
updates (an eval, a checkpoint) may run past it once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.training.script_points import StepRules
from mlsmoke.overfit.training.script_run import ScriptOutcome
from mlsmoke.overfit.verdict import diagnosis_budget

RUN_MULTIPLE = 1.0


@dataclass
class ProbeBudget:
    """The CPU deadline of one gate's probes, and what a launch of its script costs."""

    after_run: float  # diagnosis_budget.cpu_now() when the run ended
    deadline: float
    launch: float  # CPU seconds from a launch to its second update: the cheapest seen
    launches: int = 0  # probes that ran the script
    not_started: int = 0  # probes the budget left could not launch

    def affords_a_launch(self) -> bool:
        """Whether a probe started now reaches its second update within the budget."""
        if diagnosis_budget.left(self.deadline) > self.launch:
            return True
        self.not_started += 1
        return False

    def launched(self, launch: float | None) -> None:
        self.launches += 1
        if launch is not None:
            self.launch = min(self.launch, launch)

    def note(self) -> str:
        """``-v``: what the probes spent, and how many the budget did not start."""
        spent = diagnosis_budget.note(self.after_run, self.deadline, RUN_MULTIPLE)
        launches = (
            f"; {self.launches} probe(s) ran the script, each {self.launch:.2f} s CPU"
            " to its second update"
        )
        if self.not_started:
            launches += (
                f"; {self.not_started} not started: the budget left could not pay"
                " a launch"
            )
        return spent + launches


def after_run(started: float, run: ScriptOutcome | None) -> ProbeBudget:
    """The budget of a gate whose run began at ``started`` (cpu_now()) and has
    just ended."""
    launch = math.inf if run is None else run.watch.launch_cpu or 0.0
    deadline = diagnosis_budget.deadline_after_run(started, RUN_MULTIPLE)
    return ProbeBudget(diagnosis_budget.cpu_now(), deadline, launch)


def not_started(run: Evidence, rules: StepRules) -> Evidence:
    """A probe of ``rules`` the budget did not launch: timed out before its first
    update, so that it refutes nothing."""
    scale = rules.lr_scale
    return Evidence(
        max_steps=rules.max_steps,
        script=run.script,
        optimizer=run.optimizer,
        device=run.device,
        target=rules.target_loss,
        lr=run.lr * scale,
        lr_scale=scale,
        scheduler=run.scheduler,
        unscheduled_lr=(
            None if run.unscheduled_lr is None else run.unscheduled_lr * scale
        ),
        timed_out=True,
    )
