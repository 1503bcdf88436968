"""The registry of diagnoses: each turns a GateRun into a Diagnosis, or passes (None).

Diagnosers are tried in order and the first answer wins. The step function's
invariants come first (a forgotten zero_grad still memorizes), then ``memorized``;
then a repair of the batch checked on a copy, then evidence before error text (what
the batch held, which tensors train), then ``config-error``; the specific causes of a
failure follow; the two fallbacks, ``train-error`` and ``not-memorized``, come last and
always answer. A new diagnosis is a
new module here plus a line in REGISTRY.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from mlsmoke.overfit.verdict.diagnoses import (
    ambiguous_targets,
    bounded_output,
    checked_repair,
    config_error,
    data_error,
    edge_list_error,
    label_range_error,
    lr_too_high,
    lr_too_low,
    memorized,
    model_made_value,
    no_gradient,
    optimizer_mismatch,
    non_finite,
    nondeterministic_batch,
    not_learning,
    not_memorized,
    out_of_memory,
    regularizer_floor,
    schedule_holds_lr,
    script_ended,
    shape_error,
    step_function,
    too_slow,
    train_error,
    unreadable_file,
    unregistered_parameters,
    weight_decay_floor,
    wrong_objective,
)

from mlsmoke.overfit.verdict import internal_errors
from mlsmoke.overfit.verdict.interventions import runner

if TYPE_CHECKING:
    from mlsmoke.overfit.verdict.gate_run import GateRun
    from mlsmoke.overfit.verdict.result import Diagnosis


class Diagnoser(Protocol):
    code: str

    def __call__(self, run: GateRun) -> Diagnosis | None: ...


REGISTRY: list[Diagnoser] = [
    # a step function's broken invariant fails even a run that memorized
    *step_function.DIAGNOSERS,
    memorized.diagnose,
    # short of the target only by what no model can learn: targets inputs do not decide
    ambiguous_targets.diagnose,
    # a negative loss at init that its regularizer alone makes negative
    regularizer_floor.diagnose_negative_at_init,
    wrong_objective.diagnose,  # before config-error: it explains a negative init loss
    # a repair of the batch that made the failing step run, tried on a copy
    checked_repair.diagnose,
    unreadable_file.diagnose,  # a factory's missing file: not its data's shape
    # evidence before error text: what the batch held and which tensors train
    data_error.diagnose_evidence,  # before config-error: a misnamed key loses the loss
    model_made_value.diagnose,  # a non-tensor no batch field held: the model's code
    no_gradient.diagnose_zero_loss,  # before config-error: a 0 loss is no config
    config_error.diagnose,
    out_of_memory.diagnose,
    non_finite.diagnose_batch,
    unregistered_parameters.diagnose,
    optimizer_mismatch.diagnose,
    # make it run: the errors, most specific first
    edge_list_error.diagnose,  # a graph layer's edges: before ids read as labels
    label_range_error.diagnose,
    data_error.diagnose,
    shape_error.diagnose,
    no_gradient.diagnose,
    # it runs but does not memorize: cheap evidence first, then the probes
    nondeterministic_batch.diagnose,
    not_learning.diagnose_dropout,  # before the lr range test it can spare
    not_learning.diagnose_label_smoothing,  # so can this one
    bounded_output.diagnose,  # and this one
    weight_decay_floor.diagnose,  # and this one
    regularizer_floor.diagnose,  # and this one
    schedule_holds_lr.diagnose,  # a script's warmup: before the lr range test
    script_ended.diagnose,  # a script's own end, not the model: before it too
    lr_too_high.diagnose,
    non_finite.diagnose,
    lr_too_low.diagnose,
    too_slow.diagnose,
    regularizer_floor.diagnose_unchecked,  # the copy could not run: evidence alone
    not_learning.diagnose,
    train_error.diagnose,
    not_memorized.diagnose,
]


def diagnose(run: GateRun) -> Diagnosis:
    """The first diagnosis in REGISTRY that answers for ``run``."""
    for diagnoser in REGISTRY:
        # A broken diagnosis, or a factory's sys.exit() in a probe, must not hide
        # the verdict.
        try:
            found = diagnoser(run)
        except (Exception, SystemExit) as error:
            internal_errors.note_or_raise(diagnoser, error, run.notes)
            continue
        if found is not None:
            found = checked_repair.annotate(run, found)
            found = no_gradient.report_unused(run, found)
            return runner.annotate(run, found)
    raise AssertionError("the fallback diagnoses always answer")
