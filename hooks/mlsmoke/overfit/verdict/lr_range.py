"""A learning-rate range test (Smith's, on one batch): short probes of the same recipe
with every lr scaled by powers of ten (``lr_scale``: a project scheduler's rates too),
in both directions, stopping at the first rate that memorizes.

The likely direction runs first: down for a curve that oscillates or spikes, and only
down for one that rises, explodes or has converged to a floor; up, then down, for one
that is slow or flat. Upward, the first decade tried is the one the run's own pace
points at (a curve that needs 1000 times its steps wants an lr about 1000 times
larger), so a rate typed three decades off is found in a probe or two; the decades
below it follow if that one is unstable. A stretch of decades ends at a rate that
memorizes, at an unstable one (going up), at one no better than the last or one that
barely moves (going down), or after MAX_DECADES. All probes together take at most
PROBE_BUDGET times the run's own steps (at least MIN_BUDGET_STEPS), each a
PROBES_PER_BUDGET-th of it, and the likely direction leaves one share for the other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import curve, curve_measures, probes
from mlsmoke.overfit.verdict.gate_run import GateRun

MAX_DECADES = 6
MIN_DECADES = 3  # the first decade up when the run's pace says nothing
PROBE_BUDGET = 3  # all probes' steps, at most this many times the run's own
PROBES_PER_BUDGET = 5  # one probe's share of the budget
MIN_PROBE_STEPS = 12
MIN_BUDGET_STEPS = 60  # a run that broke in a few steps still gets a few probes
UNSTABLE = (curve.RISING, curve.EXPLODING, curve.OSCILLATING)
UP, DOWN = 1, -1
MEMO_KEY = "lr-range"


@dataclass
class RangeTest:
    """The probes of one range test, in the order they ran."""

    lr: float  # the run's own lr
    probes: list[Evidence] = field(default_factory=list)

    @property
    def working(self) -> Evidence | None:
        """The first probe that memorized."""
        return probes.memorizing_probe(self.probes)

    def side(self, direction: int) -> list[Evidence]:
        """The probes above (UP) or below (DOWN) the run's lr, nearest first."""
        chosen = [p for p in self.probes if (p.lr - self.lr) * direction > 0]
        return sorted(chosen, key=lambda p: abs(math.log10(p.lr / self.lr)))


def lr_range_test(run: GateRun) -> RangeTest:
    """The range test of ``run``, once per gate run."""
    return probes.remember(run, MEMO_KEY, lambda: _range_test(run))


def _range_test(run: GateRun) -> RangeTest:
    evidence = run.evidence
    test = RangeTest(evidence.lr)
    if not probes.may_probe(run) or evidence.lr <= 0:
        return test
    # one budget for every training probe of the run: what others spent is gone
    budget = PROBE_BUDGET * max(evidence.steps, MIN_BUDGET_STEPS)
    budget -= probes.steps_spent(run)
    share = max(MIN_PROBE_STEPS, budget // PROBES_PER_BUDGET)
    length = min(run.settings.max_steps, share)
    first, second = _directions(evidence)
    # the likely direction may spend all but a share kept for the other one
    spent = _probe_direction(run, test, first, length, budget - share)
    if test.working is None and second is not None:
        _probe_direction(run, test, second, length, budget - spent)
    return test


def _probe_direction(
    run: GateRun, test: RangeTest, direction: int, length: int, budget: int
) -> int:
    """Probe ``direction``'s decades into ``test`` within ``budget`` steps, up to the
    first rate that memorizes; the steps spent."""
    spent = 0
    for lrs_rise, decades in _stretches(run.evidence, direction, length):
        last = run.evidence
        for decade in decades:
            steps = min(length, budget - spent)
            if steps < MIN_PROBE_STEPS:
                return spent
            probe = probes.at_scale(run, 10.0 ** (direction * decade), steps)
            spent += probe.steps
            test.probes.append(probe)
            if probes.memorized(probe) or _stretch_ends(last, probe, lrs_rise):
                break
            last = probe
        if test.working is not None:
            break
    return spent


def _directions(evidence: Evidence) -> tuple[int, int | None]:
    """The likely direction first. A curve that rises or explodes goes only down (a
    larger step climbs or explodes faster); so does one that converged to a floor (a
    larger step only gets there sooner; a smaller one may settle lower)."""
    shape = curve.classify_curve(evidence.losses, evidence.target).shape
    if shape in (curve.RISING, curve.EXPLODING, curve.FLOOR):
        return DOWN, None
    if shape in UNSTABLE or curve_measures.early_spike(evidence.losses) is not None:
        return DOWN, UP
    return UP, DOWN


def likely_up(evidence: Evidence) -> bool:
    """Whether the range test goes up first: a higher lr is the likely cure."""
    return _directions(evidence)[0] == UP


def _stretches(
    evidence: Evidence, direction: int, length: int
) -> list[tuple[bool, list[int]]]:
    """The decades to try in ``direction``, as stretches of (lr rises along it,
    decades in order). Upward: from the decade the run's pace points at, up; then
    the decades below it, down. Downward: 1, 2, 3... decades down."""
    every = list(range(1, MAX_DECADES + 1))
    if direction == DOWN:
        return [(False, every)]
    likely = _likely_decade(evidence, length)
    above = [d for d in every if d >= likely]
    below = [d for d in reversed(every) if d < likely]
    return [(True, above), (False, below)]


def _likely_decade(evidence: Evidence, length: int) -> int:
    """How many decades up the lr should go for the run's pace to reach the target
    within one probe: at small rates the curve is a function of lr x steps."""
    progress = curve_measures.relative_progress(evidence.losses, evidence.target)
    if progress <= 0 or evidence.steps == 0:
        return MIN_DECADES
    factor = evidence.steps / min(progress, 1.0) / max(length, 1)
    decade = math.ceil(math.log10(factor)) if factor > 1 else 1
    return max(1, min(MAX_DECADES, decade))


def _stretch_ends(last: Evidence, probe: Evidence, lrs_rise: bool) -> bool:
    """Whether going further along a stretch is pointless: with the lr rising, the
    probe is unstable (higher is worse); with it falling, the probe is stable and no
    better than the point before it (lower is slower)."""
    if probe.error is not None:
        return True
    if lrs_rise:
        return _unstable(probe)
    length = len(probe.losses)
    return not _unstable(probe) and score(probe.losses) >= score(last.losses[:length])


def _unstable(probe: Evidence) -> bool:
    if not all(math.isfinite(v) for v in probe.losses):
        return True
    reading = curve.classify_curve(probe.losses, probe.target)
    return reading.shape in UNSTABLE


def score(losses: list[float]) -> float:
    """Where a curve ended (lower is better): its tail's level, inf if it broke."""
    if not losses or not all(math.isfinite(v) for v in losses):
        return math.inf
    return curve_measures.tail_level(losses)


def improves_upward(test: RangeTest, evidence: Evidence) -> bool:
    """Better as the lr rises: each probe above the run's lr ends lower than the one
    below it, the run itself at the same length included, over two decades or more."""
    upward = test.side(UP)
    if len(upward) < 2:
        return False
    length = min(len(p.losses) for p in upward)
    scores = [score(evidence.losses[:length])]
    scores += [score(p.losses[:length]) for p in upward]
    return all(later < earlier for earlier, later in zip(scores, scores[1:]))
