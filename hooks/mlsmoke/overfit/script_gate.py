"""One gate in script mode: the project's training script trains, pinned to one batch
(``training/script_run.py``); verdicts, diagnoses, hints and checks are the factory
mode's. A probe re-runs the script with its own rules (an lr scale, fewer steps, an
early stop); a probe that needs what a script cannot be given (another model,
float64, another device) is skipped, and ``-v`` says which and why. Probes share the
gate's CPU budget after its run (``script_budget.py``)."""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mlsmoke.overfit.training.evidence import Evidence, ProjectProblem
from mlsmoke.overfit.training.run_state import StepCallback
from mlsmoke.overfit.training.script_points import StepRules
from mlsmoke.overfit.training.script_process import Script
from mlsmoke.overfit.training.script_run import (
    RankPoints,
    ScriptNotRunnable,
    ScriptOutcome,
    run_script,
)
from mlsmoke.overfit import script_budget
from mlsmoke.overfit.training import script_globals
from mlsmoke.overfit.verdict import diagnosis_budget
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import CONFIG_ERROR, Diagnosis, Result

if TYPE_CHECKING:
    from mlsmoke.overfit.process.settings import GateSettings


class ScriptRankHooks(Protocol):
    """What one rank changes in script mode (``training/ranks/script_rank.py``): its
    first run is the distributed one, with these points added, and ``finished``
    reads it (and ends the ranks above 0; rank 0 may run the script alone briefly)."""

    points: RankPoints
    world_size: int

    def finished(
        self, outcome: ScriptOutcome, run_alone: Callable[[RankPoints], ScriptOutcome]
    ) -> None: ...


class ProbeUnavailable(Exception):
    """A probe script mode cannot run; the diagnosis that asked for it is skipped."""


class ScriptTrainer:
    """``engine.train``'s signature, training by running the script again."""

    def __init__(
        self,
        script: Script,
        deadline: float | None,
        ranks: ScriptRankHooks | None = None,
    ) -> None:
        self.script = script
        self.deadline = deadline
        self.ranks = ranks
        self.first: ScriptOutcome | None = None
        self.skipped: list[str] = []
        self.budget: script_budget.ProbeBudget | None = None  # set after the run

    def __call__(
        self,
        model_factory: Any,
        batch_factory: Any,
        loss_fn: Any,
        optimizer_factory: Any,
        *,
        max_steps: int,
        target_loss: float | None,
        target_ratio: float | None,
        timeout: float,
        seed: int,
        lr: float | None = None,
        lr_scale: float = 1.0,
        flat_lr: bool = False,
        device: str | None = None,
        dtype: str | None = None,
        on_step: StepCallback | None = None,
        stop_early: Any = None,
        **other: Any,
    ) -> Evidence:
        if self.first is not None:
            self._check_supported(model_factory, loss_fn, device, dtype, other)
        if self.deadline is not None:
            timeout = min(timeout, max(self.deadline - time.monotonic(), 0.0))
        rules = StepRules(max_steps, target_loss, target_ratio, timeout,
                          lr_scale, flat_lr, on_step, stop_early)  # fmt: skip
        if self.first is not None and self.budget is not None:
            if not self.budget.affords_a_launch():
                return script_budget.not_started(self.first.evidence, rules)
            rules.cpu_deadline = self.budget.deadline
        if self.first is None and self.ranks is not None:
            self.first = run_script(
                dataclasses.replace(self.script, ranks=self.ranks.world_size),
                rules, seed, self.ranks.points,
            )  # fmt: skip
            alone = StepRules(1, None, None, timeout)  # its first update alone
            self.ranks.finished(
                self.first, lambda points: run_script(self.script, alone, seed, points)
            )
            return self.first.evidence
        outcome = run_script(self.script, rules, seed)
        if self.first is None:
            self.first = outcome
        if self.budget is not None:
            self.budget.launched(outcome.watch.launch_cpu)
        return outcome.evidence

    def _check_supported(
        self,
        model_factory: Any,
        loss_fn: Any,
        device: str | None,
        dtype: str | None,
        other: dict,
    ) -> None:
        first = self.first
        assert first is not None
        reason = None
        if model_factory is not None and model_factory != self.model_factory:
            reason = "it trains a changed model, and the script builds its own"
        elif loss_fn is not None:
            reason = "it trains a changed loss, and the script computes its own"
        elif dtype not in (None, "float32"):
            reason = f"it trains in {dtype}, and the script chooses its own dtype"
        elif device is not None and device != first.evidence.device:
            reason = f"it trains on {device}, and the script chooses its own device"
        elif other:
            reason = f"it sets {', '.join(other)}, which a script does not take"
        if reason is not None:
            self.skipped.append(f"a probe was skipped in script mode: {reason}")
            raise ProbeUnavailable(reason)

    def model_factory(self) -> Any:
        """An untrained copy of the script's model, as it was at the first step."""
        if self.first is None or self.first.watch.initial_model is None:
            raise ProbeUnavailable("the script's model could not be found or copied")
        return copy.deepcopy(self.first.watch.initial_model)

    def trained_model(self) -> Any:
        """The script's model as the main run left it."""
        if self.first is None or self.first.watch.model is None:
            raise ProbeUnavailable("the script's model could not be found")
        return self.first.watch.model

    def batch_factory(self) -> Any:
        """A copy of the batch the script was pinned to."""
        if self.first is None or not self.first.pin.fetched:
            raise ProbeUnavailable(
                "the script fetched no batch the gate could pin (set pin)"
            )
        return self.first.pin.copy()


def run_script_gate(
    settings: GateSettings,
    on_step: StepCallback | None = None,
    deadline: float | None = None,
    ranks: ScriptRankHooks | None = None,
) -> tuple[Result, GateRun | None]:
    """The gate's Result for ``settings.script``; with ``ranks``, as one of torchrun's
    ranks (rank 0: its probes then run the script as one process)."""
    assert settings.script is not None
    script = Script(Path.cwd(), settings.script, list(settings.args), settings.pin,
                    globals=dict(settings.globals))  # fmt: skip
    trainer = ScriptTrainer(script, deadline, ranks)
    started = diagnosis_budget.cpu_now()
    try:
        evidence = trainer(
            None, None, None, None,
            max_steps=settings.max_steps,
            target_loss=settings.target_loss,
            target_ratio=settings.target_ratio,
            timeout=settings.timeout,
            seed=settings.seed,
            on_step=on_step,
        )  # fmt: skip
    except ScriptNotRunnable as error:
        summary = f"{settings.key_path(error.key)}: {error}"
        return Result(settings.name, Diagnosis(CONFIG_ERROR, summary, [])), None
    run = GateRun(
        settings,
        evidence,
        trainer.model_factory,
        trainer.batch_factory,
        None,
        _no_recipe,
        trainer,
        trained_model=trainer.trained_model,
    )
    if ranks is None:  # ranks agree on every probe's steps: no per-process budget
        trainer.budget = script_budget.after_run(started, trainer.first)
        run.cpu_deadline = trainer.budget.deadline
    from mlsmoke.overfit import gate

    result = gate.judge(run)
    result.notes = _script_notes(script, evidence, ranks) + run.notes
    result.notes += sorted(set(trainer.skipped))
    if trainer.budget is not None and run.probes:
        result.notes.append(trainer.budget.note())
    result.recipe = gate.recipe_label(settings, evidence)
    return result, run


def _no_recipe(*args: Any) -> Any:
    raise ProjectProblem(
        "script-recipe", "in script mode the script builds its own optimizer"
    )


def _script_notes(
    script: Script, evidence: Evidence, ranks: ScriptRankHooks | None
) -> list[str]:
    """``-v``: what ran, what it was pinned to, and how an update was made."""
    notes = [f"script: `{script.command()}`, one process, torchrun variables unset"]
    if ranks is not None:
        ranked = dataclasses.replace(script, ranks=ranks.world_size)
        notes[0] = (
            f"script: `{ranked.command()}`, then rank 0's probes as"
            f" `{script.command()}`, one process"
        )
    if script.globals:
        notes.append(
            f"globals: {script_globals.described(script.globals)}, given to the"
            f" module-level assignments of {script.path} in place of its own values"
        )
    if evidence.pinned:
        notes.append(f"pinned: every batch is the first of {evidence.pinned}")
    if evidence.trainer_steps:
        notes.append(f"steps: {evidence.trainer_steps}")
    if evidence.backwards_per_update > 1:
        notes.append(
            f"accumulation: {evidence.backwards_per_update} backward() calls per"
            " update; an update's loss is the sum of their losses"
        )
    if evidence.eval_loss is not None:
        notes.append(
            f"eval mode: the pinned batch's loss is {evidence.eval_loss:.4g} with the"
            f" model in eval mode, {evidence.final_loss:.4g} in train mode"
        )
    if evidence.lrs:
        shown = ", ".join(f"{lr:.3g}" for lr in evidence.lrs[:8])
        more = ", ..." if len(evidence.lrs) > 8 else ""
        notes.append(f"lr at each step: {shown}{more} (last {evidence.lrs[-1]:.3g})")
    return notes
