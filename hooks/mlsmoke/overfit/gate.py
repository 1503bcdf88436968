"""One gate, start to verdict, inside the project's interpreter: load the factories,
pick the device, train, re-run CUDA errors on the CPU, diagnose, and run the checks."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from mlsmoke.overfit.training.device import (
    limit_cpu_threads_as_trained,
    restore_cpu_threads,
)
from mlsmoke.overfit.training.engine import StepCallback, train
from mlsmoke.overfit.verdict import diagnosis_budget
from mlsmoke.overfit.verdict.checks import run_checks
from mlsmoke.overfit.verdict.diagnoses import diagnose
from mlsmoke.overfit.training.evidence import (
    DEVICE_ASSERT,
    ILLEGAL_MEMORY_ACCESS,
    Evidence,
    ProjectProblem,
)
from mlsmoke.overfit.factories import NotConfigured, load_factories
from mlsmoke.overfit.preparation import prepare
from mlsmoke.overfit.process.settings import OPTIMIZERS, GateSettings
from mlsmoke.overfit.training.step_function import StepFunction, bind
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import CONFIG_ERROR, Diagnosis, Result

RERUN_ON_CPU = (DEVICE_ASSERT, ILLEGAL_MEMORY_ACCESS)


class RankHooks(Protocol):
    """What one rank changes in the gate (``training/ranks/rank.py``)."""

    trainer: Callable[..., Evidence]

    def factories(
        self, loaded: dict[str, Callable[..., Any]]
    ) -> dict[str, Callable[..., Any]]: ...


def run_gate(
    settings: GateSettings,
    device: str | None = None,
    on_step: StepCallback | None = None,
    factories: dict[str, Callable[..., Any]] | None = None,
    deadline: float | None = None,
    ranks: RankHooks | None = None,
) -> tuple[Result, GateRun | None]:
    """The gate's Result; ``factories`` (model, batch, loss, optimizer) replace the
    configured specs (the Python API passes objects, not import paths). With a
    ``deadline`` (time.monotonic()), every training run, probes included, stops by it.
    ``ranks``: one rank's factories and first run under torch.distributed.
    """
    if settings.script is not None:
        from mlsmoke.overfit.script_gate import run_script_gate

        return run_script_gate(settings, on_step, deadline)
    started = diagnosis_budget.cpu_now()
    trainer = train if ranks is None else ranks.trainer
    trainer = trainer if deadline is None else _within(deadline, trainer)
    try:
        if ranks is not None and factories is None:
            factories = ranks.factories(load_factories(settings))
        prepared = prepare(settings, device, factories)
    except NotConfigured as error:
        return _config_error(settings, error.key, str(error), error.traceback), None
    settings, adapted = prepared.settings, prepared.adapted
    loaded, build_optimizer = adapted.factories, prepared.build_optimizer
    resolved_device = prepared.device
    try:
        step = _step_function(settings, loaded)
    except ProjectProblem as error:
        return _config_error(settings, settings.key_path("step"), str(error)), None
    evidence = _train(
        trainer, settings, loaded, build_optimizer, resolved_device, on_step, step
    )
    if evidence.cuda_error in RERUN_ON_CPU:
        on_cpu = _train(
            trainer, settings, loaded, build_optimizer, "cpu", on_step, step
        )
        if on_cpu.error is not None:
            on_cpu.rerun_of = evidence
            evidence = on_cpu
    run = GateRun(
        settings,
        evidence,
        loaded["model"],
        loaded["batch"],
        loaded.get("loss"),
        build_optimizer,
        trainer,
    )
    after_run = diagnosis_budget.cpu_now()
    if ranks is None:  # ranks agree on every probe's steps: no per-process budget
        run.cpu_deadline = diagnosis_budget.deadline_after_run(started)
    result = judge(run)
    result.notes = adapted.run_notes() + _lr_notes(settings, adapted.module_lr)
    result.notes += run.notes + _step_notes(step, run)
    if run.probes and run.cpu_deadline is not None:
        result.notes.append(diagnosis_budget.note(after_run, run.cpu_deadline))
    result.recipe = recipe_label(settings, evidence)
    return result, run


def _step_function(
    settings: GateSettings, loaded: dict[str, Callable[..., Any]]
) -> StepFunction | None:
    """The project's step function, bound to what the gate passes it."""
    if "step" not in loaded:
        return None
    name = settings.step or getattr(loaded["step"], "__qualname__", "step")
    return bind(loaded["step"], name)


def _step_notes(step: StepFunction | None, run: GateRun) -> list[str]:
    """``-v``: which run the step function trained, and which the gate's own loop."""
    if step is None:
        return []
    arguments = ", ".join(step.roles)
    notes = [f"step: {step.name}({arguments}), called once per gate step"]
    if run.probes:
        notes.append(
            f"probes: {len(run.probes)} diagnostic re-run(s) trained with the gate's"
            " own forward and backward on the same model and batch, not the step"
            " function"
        )
    return notes


def _lr_notes(settings: GateSettings, module_lr: float | None) -> list[str]:
    """``-v``: an lr key that replaces the project's own lr."""
    if "lr" in settings.unset or settings.lr is None:
        return []
    if module_lr is not None:
        return [
            f"lr: {settings.lr:g} from {settings.key_path('lr')}, replacing"
            f" configure_optimizers' {module_lr:g}"
        ]
    if settings.optimizer not in OPTIMIZERS:
        return [
            f"lr: {settings.lr:g} from {settings.key_path('lr')}, replacing the"
            " optimizer callable's own"
        ]
    return []


def recipe_label(settings: GateSettings, evidence: Evidence) -> str:
    """The optimizer and lr that trained, and where they came from, e.g.
    ``AdamW lr 0.003 (from configure_optimizers)``; "" when no optimizer was built."""
    if not evidence.optimizer:
        return ""
    built_in = evidence.optimizer_source.startswith("built-in")
    source = "built-in" if built_in else f"from {evidence.optimizer_source}"
    if "lr" not in settings.unset and not built_in:
        source = f"lr key, optimizer {source}"
    schedule = f" + {evidence.scheduler}" if evidence.scheduler else ""
    lr = evidence.configured_lr
    return f"{evidence.optimizer} lr {lr:g}{schedule} ({source})"


def judge(run: GateRun) -> Result:
    """The run's diagnosis and checks, on one CPU thread when it trained on one (the
    probes and checks run the same small model)."""
    threads = limit_cpu_threads_as_trained(run.evidence.one_cpu_thread)
    try:
        diagnosis = mention_timeout(diagnose(run), run.evidence, run.settings)
        return result_of(run.settings, run.evidence, diagnosis, run_checks(run))
    finally:
        restore_cpu_threads(threads)


def mention_timeout(
    diagnosis: Diagnosis, evidence: Evidence, settings: GateSettings
) -> Diagnosis:
    """Whatever the diagnosis, a run cut short by the timeout says so."""
    text = " ".join([diagnosis.summary, *diagnosis.evidence])
    if evidence.timed_out and "timeout" not in text:
        diagnosis.evidence.insert(
            0,
            f"stopped at the timeout ({settings.timeout:g} s) after {evidence.steps}"
            f" of {settings.max_steps} steps",
        )
    return diagnosis


def _within(
    deadline: float, trainer: Callable[..., Evidence]
) -> Callable[..., Evidence]:
    """``trainer`` whose ``timeout`` never reaches past ``deadline``."""

    def bounded(*args: Any, timeout: float, **options: Any) -> Evidence:
        left = max(deadline - time.monotonic(), 0.0)
        return trainer(*args, timeout=min(timeout, left), **options)

    return bounded


def _train(
    trainer: Callable[..., Evidence],
    settings: GateSettings,
    loaded: dict[str, Callable[..., Any]],
    build_optimizer: Callable,
    device: str,
    on_step: StepCallback | None,
    step: StepFunction | None,
) -> Evidence:
    extra: dict[str, Any] = {}
    if step is not None:
        extra = {"step": step, "accumulate": settings.accumulate,
                 "train_mode": settings.train_mode}  # fmt: skip
    return trainer(
        loaded["model"],
        loaded["batch"],
        loaded.get("loss"),
        build_optimizer,
        lr=settings.lr,
        max_steps=settings.max_steps,
        target_loss=settings.target_loss,
        target_ratio=settings.target_ratio,
        device=device,
        timeout=settings.timeout,
        seed=settings.seed,
        on_step=on_step,
        **extra,
    )


def result_of(
    settings: GateSettings, evidence: Evidence, diagnosis: Diagnosis, warnings: list
) -> Result:
    return Result(
        gate=settings.name,
        diagnosis=diagnosis,
        warnings=warnings,
        device=evidence.device,
        steps=evidence.steps,
        initial_loss=evidence.initial_loss,
        final_loss=evidence.final_loss,
        target=evidence.target,
        losses=list(evidence.losses),
        seconds=round(evidence.seconds, 3),
        tier=settings.tier,
    )


def _config_error(
    settings: GateSettings, key: str | None, message: str, traceback: str | None = None
) -> Result:
    summary = f"{key}: {message}" if key else message
    evidence = [traceback] if traceback else []
    return Result(settings.name, Diagnosis(CONFIG_ERROR, summary, evidence))
