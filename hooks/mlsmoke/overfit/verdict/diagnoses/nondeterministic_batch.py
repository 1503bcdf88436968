"""``nondeterministic-batch``: two calls of the batch factory give different batches, or
two identical eval-mode forward passes give different outputs. Either one makes the loss
oscillate, and makes every other probe unreliable. Random numbers the objective draws
outside every module (a diffusion loss's noise) are not a bug: the engine replays
them at every step (``Evidence.replayed_draws``), and this diagnosis leaves them
alone."""

from __future__ import annotations

from mlsmoke.overfit.verdict import batch_probes, curve_measures, forward_probes
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "nondeterministic-batch"
# The curve's jitter, as a share of its distance to the target, from which randomness
# in forward can be what keeps it from the target.
NOISE_SHARE = 0.1

BATCH_SUGGESTIONS = [
    "build the gate's batch deterministically: no unseeded generators"
    " (random.Random(), numpy.random.default_rng()), no time-based seeds, no shuffling",
    "turn off data augmentation for the gate",
]
MODEL_SUGGESTIONS = [
    "gate noise and dropout on self.training: F.dropout(x, p, training=self.training)",
    "turn off augmentation and dropout while debugging (Karpathy's recipe)",
]


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if not evidence.stopped_short(1):
        return None
    field = batch_probes.differing_batch_field(run)
    if field is not None:
        return Diagnosis(
            CODE,
            f"the batch factory returns a different batch at each call ({field})",
            [
                f"two calls under one seed ({run.settings.seed}) differ in {field}",
                "each probe and each run then trains on other data",
            ],
            BATCH_SUGGESTIONS,
        )
    if evidence.replayed_draws:
        return None  # the objective's own randomness, replayed at every step
    if _noise_matters(evidence) and forward_probes.eval_outputs_differ(run):
        return Diagnosis(
            CODE,
            "two identical forward passes in eval mode give different losses",
            [
                "the model was put in eval mode and called twice on the same batch",
                "randomness in forward that ignores model.eval() (noise, F.dropout with"
                " training=True, sampling) makes the loss a moving target",
                f"the loss went {evidence.losses[0]:.4g} -> {evidence.losses[-1]:.4g}"
                f" in {evidence.steps} steps",
            ],
            MODEL_SUGGESTIONS,
        )
    return None


def _noise_matters(evidence) -> bool:
    """Whether the curve is noisy enough, near its end, for randomness in forward to
    be what keeps it from the target: a smooth curve far above its target stopped
    for another reason (a VAE samples in eval mode by design, and its KL weight
    sets its floor)."""
    losses, target = evidence.losses, evidence.target
    if target is None or len(losses) < 6:
        return True
    gap = curve_measures.tail_level(losses) - target
    return gap <= 0 or curve_measures.tail_jitter(losses) >= NOISE_SHARE * gap
