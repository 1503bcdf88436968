"""``dead-weights``: the batch was memorized, but trainable parameters got no gradient
at any step. The loss fell through the rest of the model, and these weights never
learned: a detached branch, a layer the forward skips. Named by module, with the
cause checked on an untrained copy (``verdict/dead_weights.py``)."""

from __future__ import annotations

from mlsmoke.overfit.verdict.batch_probes import seeded
from mlsmoke.overfit.verdict.dead_weights import DeadModule, cause_of, dead_modules
from mlsmoke.overfit.verdict.forward_probes import fresh_model_and_batch
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.probes import memorized
from mlsmoke.overfit.verdict.result import Warning

CODE = "dead-weights"
SHOWN = 4


def check(run: GateRun) -> list[Warning]:
    evidence = run.evidence
    dead = set(evidence.never_got_gradient or [])
    if not dead or not memorized(evidence):
        return []
    with seeded(run):
        model, batch = fresh_model_and_batch(run)
    modules = dead_modules(model, dead)
    for module in modules:
        module.cause = cause_of(model, batch, module.name) if module.name else ""
    by_cause: dict[str, list[DeadModule]] = {}
    for module in modules:
        by_cause.setdefault(module.cause, []).append(module)
    parts = [_describe(cause, group) for cause, group in by_cause.items()]
    total = sum(len(m.parameters) for m in modules)
    return [
        Warning(
            CODE,
            f"{total} trainable parameter tensor{'s' if total > 1 else ''} got no"
            " gradient at any step, and the batch was memorized without them: "
            + "; ".join(parts),
        )
    ]


def _describe(cause: str, group: list[DeadModule]) -> str:
    names = [m.name or m.parameters[0] for m in group]
    listed = ", ".join(names[:SHOWN])
    if len(names) > SHOWN:
        listed += f" and {len(names) - SHOWN} more"
    values = sum(m.values for m in group)
    tensors = sum(len(m.parameters) for m in group)
    sized = f"{listed} ({tensors} tensors, {values:,} values)"
    return f"{sized}: {cause}" if cause else sized
