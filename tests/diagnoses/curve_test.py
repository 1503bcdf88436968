from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlsmoke.overfit.verdict import curve, curve_measures, decay_fit


def decay(start: float, rate: float, steps: int, floor: float = 0.0) -> list[float]:
    return [floor + (start - floor) * math.exp(-rate * i) for i in range(steps)]


def wobble(values: list[float], amplitude: float) -> list[float]:
    return [v + amplitude * (-1) ** i for i, v in enumerate(values)]


@pytest.mark.parametrize(
    ("losses", "target", "shape"),
    [
        pytest.param([2.3, 2.4, math.nan, math.nan], 0.1, curve.EXPLODING, id="nan"),
        pytest.param([2.3, 5.0, 40.0, math.inf], 0.1, curve.EXPLODING, id="inf"),
        pytest.param([2.3, 3.0, 9.0, 30.0, 25.0], 0.1, curve.EXPLODING, id="grows-10x"),
        pytest.param([2.3 + 0.05 * i for i in range(40)], 0.1, curve.RISING, id="rise"),
        pytest.param(
            wobble([1.0] * 40, 0.4), 0.05, curve.OSCILLATING, id="alternating"
        ),
        pytest.param(
            wobble(decay(2.3, 0.05, 40, floor=1.0), 0.3),
            0.1,
            curve.OSCILLATING,
            id="falling-but-swinging",
        ),
        pytest.param([2.3] * 40, 0.1, curve.PLATEAU, id="flat"),
        pytest.param(
            wobble([2.3 - 0.0001 * i for i in range(40)], 0.001),
            0.1,
            curve.PLATEAU,
            id="barely-moves-with-noise",
        ),
        pytest.param(
            decay(2.3, 0.3, 40, floor=1.2), 0.1, curve.FLOOR, id="fell-then-stuck"
        ),
        pytest.param(
            decay(2.3, 0.3, 40, floor=2.25), 0.1, curve.PLATEAU, id="barely-fell"
        ),
        pytest.param(
            decay(2.3, 0.03, 40), 0.01, curve.FALLING_TOO_SLOWLY, id="slow-decay"
        ),
        pytest.param(
            [-0.1 * 2**i for i in range(12)],
            0.01,
            curve.UNBOUNDED_BELOW,
            id="flipped-sign",
        ),
        pytest.param(decay(2.3, 0.3, 40), 0.01, curve.FALLING, id="reached"),
    ],
)
def test_classify_curve(losses: list[float], target: float, shape: str) -> None:
    reading = curve.classify_curve(losses, target)
    assert reading.shape == shape, reading.reason


def test_too_slow_estimates_the_steps_of_an_exponential_decay() -> None:
    losses = decay(2.0, 0.02, 50)
    target = 2.0 * math.exp(-0.02 * 200)  # reached at step 200
    reading = curve.classify_curve(losses, target)
    assert reading.shape == curve.FALLING_TOO_SLOWLY
    assert reading.steps_needed is not None
    assert 190 <= reading.steps_needed <= 210
    assert "200" in reading.reason or str(reading.steps_needed) in reading.reason


@pytest.mark.parametrize(
    ("floor", "rate", "start"), [(0.0, 0.01, 2.0), (0.7, 0.05, 1.4), (-3.0, 0.002, 5.0)]
)
def test_fit_decay_recovers_the_floor_and_rate_from_the_tail(floor, rate, start):
    fit = decay_fit.fit_decay(decay(start, rate, 300, floor=floor))
    assert fit is not None
    assert fit.floor == pytest.approx(floor, abs=1e-3 * abs(start - floor))
    assert fit.rate == pytest.approx(rate, rel=1e-2)


def test_fit_decay_reads_noisy_curves_and_ignores_rising_ones():
    noisy = wobble(decay(1.4, 0.05, 300, floor=0.74), 0.002)
    fit = decay_fit.fit_decay(noisy)
    assert fit is not None and fit.floor == pytest.approx(0.74, abs=0.01)
    assert decay_fit.fit_decay([1.0 + 0.01 * i for i in range(50)]) is None


@pytest.mark.parametrize(("steps", "ratio"), [(300, 0.05), (2000, 0.02), (10000, 0.01)])
def test_a_floor_reads_as_a_floor_at_every_tier(steps: int, ratio: float) -> None:
    # softmax applied twice before cross_entropy: it levels off near 0.74
    losses = decay(1.386, 0.02, steps, floor=0.7437)
    reading = curve.classify_curve(losses, 1.386 * ratio)
    assert reading.shape == curve.FLOOR, reading.reason
    assert reading.floor == pytest.approx(0.7437, abs=1e-3)
    assert "floor of 0.7437" in reading.reason


def test_a_curve_still_falling_toward_a_floor_is_not_yet_at_it() -> None:
    # at too low an lr: a third of the way down to where the fit says it levels off
    losses = decay(3.5, 0.003, 300, floor=1.2)
    reading = curve.classify_curve(losses, 0.17)
    assert reading.shape == curve.PLATEAU and "toward 1.2" in reading.reason


def test_a_floor_below_the_target_is_slowness_with_the_fitted_steps() -> None:
    losses = decay(2.0, 0.01, 100, floor=0.5)
    target = 0.5 + 1.5 * math.exp(-0.01 * 400)  # the fitted curve gets there at 400
    reading = curve.classify_curve(losses, target)
    assert reading.shape == curve.FALLING_TOO_SLOWLY
    assert reading.steps_needed == pytest.approx(400, abs=4)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([-0.1 * i for i in range(20)], False),  # steady fall: logits growing
        ([-(1.2**i) for i in range(20)], False),  # accelerating
        ([-1 + math.exp(-0.5 * i) for i in range(20)], True),  # -cosine similarity
        ([-2.0] * 10, True),
    ],
)
def test_levels_off(values: list[float], expected: bool) -> None:
    assert curve_measures.levels_off(values) is expected


def test_linear_descent_is_extrapolated_linearly_below_zero_targets() -> None:
    losses = [1.0 - 0.01 * i for i in range(50)]
    assert curve_measures.estimate_steps_to_target(losses, -1.0) == pytest.approx(
        200, abs=2
    )


@pytest.mark.parametrize(
    ("losses", "min_swing", "expected"),
    [
        ([1, 2, 1, 2, 1], 0.5, 3),
        ([1, 1.1, 1, 1.1, 1], 0.5, 0),
        ([5, 4, 3, 2, 1], 0.5, 0),
        ([1, 3, 2.9, 3.1, 1], 0.5, 1),
    ],
)
def test_count_reversals(losses: list[float], min_swing: float, expected: int) -> None:
    assert curve_measures.count_reversals(losses, min_swing) == expected


@pytest.mark.parametrize(
    ("losses", "expected"),
    [
        ([2.0, 1.0, -1.0, -3.0, -6.0], True),
        ([2.0, 1.0, 0.5, 0.2, 0.1], False),
        ([-2.0, -2.1, -2.2, -2.3], False),  # negative but bounded: an ELBO-style loss
        ([-2.0, -3.0, -5.0, -9.0], True),
    ],
)
def test_is_unbounded_below(losses: list[float], expected: bool) -> None:
    assert curve_measures.is_unbounded_below(losses) is expected


def test_relative_progress_ignores_nonfinite_values() -> None:
    assert curve_measures.relative_progress([2.0, 1.0, math.nan], 0.0) == pytest.approx(
        0.5
    )
    assert curve_measures.relative_progress([math.nan], 0.0) == 0.0


def test_short_curves_are_read_as_plateaus() -> None:
    assert curve.classify_curve([1.0, 0.9], 0.1).shape == curve.PLATEAU


@pytest.mark.parametrize(
    ("losses", "step"),
    [
        ([2.3, 4.8, 2.2] + [2.3] * 20, 1),
        ([2.3, 2.5, 2.2] + [2.3] * 20, None),  # a wobble, not a spike
        ([2.3] * 10 + [9.0] + [2.3] * 10, None),  # late: not the first update's doing
        ([math.nan, 9.0, 2.0], None),
    ],
)
def test_early_spike(losses: list[float], step: int | None) -> None:
    assert curve_measures.early_spike(losses) == step


finite_losses = st.lists(
    st.floats(min_value=0.01, max_value=100.0), min_size=3, max_size=60
)


@given(finite_losses, st.floats(min_value=0.001, max_value=1.0))
def test_the_reading_does_not_depend_on_the_loss_units(
    losses: list[float], ratio: float
) -> None:
    target = losses[0] * ratio
    scaled = [1000.0 * v for v in losses]
    assert (
        curve.classify_curve(scaled, 1000.0 * target).shape
        == curve.classify_curve(losses, target).shape
    )


@given(finite_losses, st.integers(min_value=0), st.sampled_from([math.nan, math.inf]))
def test_a_non_finite_loss_anywhere_is_an_explosion(
    losses: list[float], where: int, bad: float
) -> None:
    losses[where % len(losses)] = bad
    assert curve.classify_curve(losses, 0.01).shape == curve.EXPLODING


@given(
    st.floats(min_value=0.1, max_value=10.0),
    st.floats(min_value=0.001, max_value=0.5),
    st.integers(min_value=4, max_value=200),
)
def test_a_steady_decay_never_reads_as_unstable(
    start: float, rate: float, steps: int
) -> None:
    reading = curve.classify_curve(decay(start, rate, steps), start * 1e-4)
    assert reading.shape not in (curve.RISING, curve.EXPLODING, curve.OSCILLATING)
