"""One gate's run as the diagnoses and checks see it: its settings, the main run's
evidence, and probes that train the same factories again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import diagnosis_budget

if TYPE_CHECKING:
    from mlsmoke.overfit.process.settings import GateSettings


@dataclass
class GateRun:
    """One gate's run: settings, evidence, and probes with the same factories."""

    settings: GateSettings
    evidence: Evidence
    model_factory: Callable[[], Any]
    batch_factory: Callable[[], Any]
    loss_fn: Callable[[Any, Any], Any] | None
    optimizer_factory: Callable[[Any, float | None], Any]  # (model, lr) -> Recipe
    # engine.train, passed in by the gate: this module stays free of the training loop.
    trainer: Callable[..., Evidence]
    probes: list[Evidence] = field(default_factory=list)
    # The probes' answers, one per question (probes.remember); they live as long as
    # the run, so a probe's model and batch are freed with it.
    memo: dict[Any, Any] = field(default_factory=dict, repr=False)
    # What a probe or check could not look at, and why (shown with -v).
    notes: list[str] = field(default_factory=list)
    # The main run's model after training, where the run keeps it (script mode).
    trained_model: Callable[[], Any] | None = None
    # The CPU time (diagnosis_budget.cpu_now()) by which every probe ends; None: no
    # shared budget (script mode, ranks: their probes are bounded by the clock).
    cpu_deadline: float | None = None

    def probe(self, **overrides: Any) -> Evidence:
        """Train again with the same factories; ``overrides`` are train()'s keywords,
        ``model_factory`` (a variant of the model, e.g. without dropout) and
        ``optimizer_factory`` (a variant of the recipe, e.g. without weight decay),
        ``loss_fn`` (a variant of the loss, e.g. without its regularizer) and
        ``cpu_seconds`` (this probe's own share of the CPU budget).

        The target defaults to the main run's absolute target, so that a float64 or
        lower-lr probe is judged by the same bar. lr probes pass ``lr_scale``: it
        scales the project's own recipe, scheduler included.
        """
        options: dict[str, Any] = {
            "lr": self.settings.lr,  # None: the project recipe's own rate
            "lr_scale": 1.0,
            "max_steps": self.settings.max_steps,
            "target_loss": self.evidence.target,
            "target_ratio": None,
            "device": self.evidence.device,
            "timeout": self.settings.timeout,
            "seed": self.settings.seed,
        }
        model_factory = overrides.pop("model_factory", self.model_factory)
        optimizer_factory = overrides.pop("optimizer_factory", self.optimizer_factory)
        loss_fn = overrides.pop("loss_fn", self.loss_fn)
        deadline = diagnosis_budget.earliest(
            self.cpu_deadline, overrides.pop("cpu_seconds", None)
        )
        options.update(overrides)
        if deadline is not None:
            options["stop_early"] = diagnosis_budget.stopping_by(
                deadline, options.get("stop_early")
            )
        evidence = self.trainer(
            model_factory,
            self.batch_factory,
            loss_fn,
            optimizer_factory,
            **options,
        )
        if deadline is not None:
            diagnosis_budget.mark_if_cut(evidence, deadline)
        self.probes.append(evidence)
        return evidence
