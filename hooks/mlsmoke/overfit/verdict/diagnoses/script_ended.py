"""``script-ended``: the training script ended its own training (its epochs, its
iterations) before the gate's max-steps, short of the target, with the loss still
falling or the lr decayed by the script's own schedule. The run was too short to judge
the model: a curve that flattens because the lr reached 0 is no floor of the
objective. (A library trainer the gate can give its steps to is extended instead:
``training/script_trainers.py``.)

Checked, where the schedule decayed the lr, by an intervention: a probe re-runs the
script with every update at the lr its optimizer was built with. Script mode only.
"""

from __future__ import annotations

import math
import re

from mlsmoke.script_settings import Setting
from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import curve_measures, probes
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis
from mlsmoke.overfit.verdict.script_options import settings_named

CODE = "script-ended"
DECAYED = 0.5  # the last update's lr was under this fraction of the optimizer's
# Names only pick which of the script's settings the fix mentions; whether the script
# ended itself is read from the run (it returned before max-steps, its lr, its loss).
# A setting of the run's length: epochs, max_iters, num_train_epochs, max_steps, ...
LENGTH = re.compile(
    r"^(max_|num_|n_|total_)?(train_)?(epochs?|iters|iterations|steps)$"
)
# A schedule's length, which a longer run needs too: lr_decay_iters, decay_steps, ...
SCHEDULE_LENGTH = re.compile(r"(decay|anneal|cosine|schedule)_?(iters|steps|epochs)")


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if not (evidence.script and evidence.script_ended and evidence.stopped_short(4)):
        return None
    if evidence.steps >= evidence.max_steps or evidence.timed_out:
        return None
    decayed = _decayed(evidence)
    falling = not curve_measures.levels_off(evidence.losses)
    if not (decayed or falling):
        return None
    why = []
    if decayed:
        why.append(
            f"its schedule took the lr from {evidence.unscheduled_lr:g} to"
            f" {evidence.lrs[-1]:.3g} by its last step"
        )
    if falling:
        why.append("the loss was still falling")
    flat = _at_flat_lr(run) if decayed else None
    checked = (
        [f"at its lr {evidence.unscheduled_lr:g} every step, the script memorizes"
         f" the batch in {flat.steps} steps"]
        if flat is not None
        else []
    )  # fmt: skip
    return Diagnosis(
        CODE,
        f"{evidence.script} ended its own training after {evidence.steps} steps,"
        f" before the gate's max-steps ({evidence.max_steps}), and "
        + " and ".join(why)
        + ": the run was too short to judge the model",
        [
            f"the loss went {evidence.losses[0]:.4g} -> {evidence.losses[-1]:.4g};"
            f" the target is {evidence.target:.4g}",
            *checked,
        ],
        _fixes(evidence, list(run.settings.args)),
    )


def _decayed(evidence: Evidence) -> bool:
    peak = evidence.unscheduled_lr
    return bool(peak and evidence.lrs and evidence.lrs[-1] < DECAYED * peak)


def _at_flat_lr(run: GateRun) -> Evidence | None:
    """The flat-lr probe, when it memorized: the schedule's decay was the cause."""
    if not probes.may_probe(run):
        return None
    flat = probes.at_flat_lr(run)
    return flat if probes.memorized(flat) else None


def _fixes(evidence: Evidence, args: list[str]) -> list[str]:
    """Make the script's run last the gate's max-steps: its own length setting,
    scaled by the steps it fell short, when it has one."""
    script = evidence.script or ""
    scale = math.ceil(evidence.max_steps / max(evidence.steps, 1))
    longer = _scaled(settings_named(script, LENGTH), args, scale)
    if longer:
        schedule = _scaled(settings_named(script, SCHEDULE_LENGTH), args, scale)
        return [
            f"let it run the gate's max-steps: set {longer[0]} in"
            " [tool.mlsmoke.overfit] args"
            + (
                f", and its schedule's length with it: {schedule[0]}"
                if schedule
                else ""
            )
        ]
    return [
        f"let it run the gate's max-steps ({evidence.max_steps}): give it more"
        " epochs or iterations in [tool.mlsmoke.overfit] args, through a setting"
        f" {script} reads"
    ]


def _scaled(settings: list[Setting], args: list[str], scale: int) -> list[str]:
    """``--name=value (now value)`` for each numeric setting, its value times
    ``scale``."""
    scaled = []
    for setting in settings:
        now = _given(setting.option, args, setting.default)
        if isinstance(now, (int, float)) and not isinstance(now, bool):
            scaled.append(f"{setting.option}={type(now)(now * scale):g} (now {now:g})")
    return scaled


def _given(option: str, args: list[str], default: object) -> object:
    """The value ``args`` give ``option`` (``--epochs=2``, ``--epochs 2``), else
    ``default``."""
    for index, arg in enumerate(args):
        name, equals, value = arg.partition("=")
        if name != option:
            continue
        if not equals:
            value = args[index + 1] if index + 1 < len(args) else ""
        try:
            return float(value) if isinstance(default, float) else int(value)
        except ValueError:
            return default
    return default
