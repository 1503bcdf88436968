"""The sparkline and the verdict block, from plain values."""

from __future__ import annotations

import io
import math

import pytest

from mlsmoke.overfit.process import spawn
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.verdict.report import (
    curves_differ,
    progress_line,
    sparkline,
    verdict_block,
)
from mlsmoke.overfit.verdict.result import Diagnosis, Result, Warning


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([], ""),
        ([1.0, 1.0, 1.0], "▅▅▅"),
        ([0.0, 0.5, 1.0], "▁▅█"),  # linear: under a decade
        ([100.0, 10.0, 1.0], "█▅▁"),  # logarithmic: a falling loss spans decades
        ([1.0, math.nan], "▅!"),
        ([math.inf], "!"),
    ],
)
def test_sparkline(values, expected):
    assert sparkline(values) == expected


def test_sparkline_keeps_first_and_last_when_downsampling():
    line = sparkline([float(v) for v in range(1000, 0, -1)], width=10)
    assert len(line) == 10 and line[0] == "█" and line[-1] == "▁"


def test_progress_line():
    assert progress_line("lm", 40, 300, 0.51234, 88.4) == (
        "overfit lm: step 40/300  loss 0.5123  88 steps/s"
    )


def test_verdict_block_of_a_failure():
    result = Result(
        gate="lm",
        diagnosis=Diagnosis(
            "lr-too-high", "the loss explodes", ["at lr 1: nan", "Traceback\n  line"],
            ["lower the lr"]),
        warnings=[Warning("dropout-active", "dropout slows memorization")],
        device="cpu", steps=3, initial_loss=2.0, final_loss=4.0, target=0.1,
        losses=[2.0, 3.0, 4.0, 4.0], seconds=0.5,
    )  # fmt: skip
    assert verdict_block(result).splitlines() == [
        "overfit lm: FAIL lr-too-high",
        "  loss    ▁▅██",
        "  2 -> 4  target 0.1  in 3 steps, cpu, 0.50 s",
        "  the loss explodes",
        "    - at lr 1: nan",
        "    - Traceback",
        "        line",
        "  try:",
        "    - lower the lr",
        "  warning dropout-active: dropout slows memorization",
    ]


def test_result_json_round_trip():
    result = Result("a", Diagnosis("memorized", "ok"), losses=[1.0, 0.01], cached=True)
    data = result.to_json()
    assert data["verdict"] == "pass" and data["diagnosis"]["code"] == "memorized"
    assert Result.from_json(data) == result


def test_progress_is_drawn_on_a_terminal_and_cleared(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(spawn.sys, "stderr", terminal)
    lines = io.StringIO('{"gate": "mlp", "step": 0, "loss": 1.5}\nnot json\n')
    drawer = spawn._ProgressDrawer(lines, [GateSettings("mlp", "m:f", "b:f")])
    drawer.run()
    assert terminal.getvalue() == ("\r\033[Koverfit mlp: step 0/300  loss 1.5\r\033[K")


def test_no_progress_when_not_a_terminal(monkeypatch, capsys):
    lines = io.StringIO('{"gate": "mlp", "step": 0, "loss": 1.5}\n')
    spawn._ProgressDrawer(lines, [GateSettings("mlp", "m:f", "b:f")]).run()
    assert capsys.readouterr().err == ""


def test_the_curve_of_the_diagnosis_is_drawn_instead_of_the_gates_own():
    probe = [-1.5, -4.0, -9.0, -20.0, -29.0]
    result = Result(
        gate="neg",
        diagnosis=Diagnosis("wrong-objective", "falls without bound", losses=probe,
                            steps=4),
        device="cpu", steps=0, initial_loss=-1.5, final_loss=-1.5, target=None,
        losses=[-1.5], seconds=0.25,
    )  # fmt: skip
    assert verdict_block(result).splitlines()[1:3] == [
        "  loss    " + sparkline(probe),
        "  -1.5 -> -29  in 4 steps, cpu, 0.25 s",
    ]
    assert Result.from_json(result.to_json()) == result


@pytest.mark.parametrize(
    ("tier", "cached", "headline"),
    [
        ("commit", False, "overfit a: PASS memorized"),
        ("commit", True, "overfit a: PASS memorized (cached)"),
        ("pr", False, "overfit a: PASS memorized at tier pr"),
        ("nightly", True, "overfit a: PASS memorized at tier nightly (cached)"),
    ],
)
def test_the_headline_names_any_tier_but_the_commit_one(tier, cached, headline):
    result = Result("a", Diagnosis("memorized", "ok"), tier=tier, cached=cached)
    assert verdict_block(result).splitlines()[0] == headline


def _ranked(curves: list[list[float]]) -> Result:
    return Result(
        gate="ddp", diagnosis=Diagnosis("memorized", "memorized the batch"),
        device="cpu", steps=2, initial_loss=1.0, final_loss=0.01, target=0.1,
        losses=curves[0], rank_losses=curves, seconds=1.0,
    )  # fmt: skip


def test_ranks_whose_curves_differ_get_one_line_each():
    rank_0, rank_1 = [1.0, 0.5, 0.01], [1.5, 0.2, 0.02]
    result = _ranked([rank_0, rank_1])
    assert verdict_block(result).splitlines()[1:4] == [
        "  rank 0   " + sparkline(rank_0) + "  1 -> 0.01 in 2 steps",
        "  rank 1   " + sparkline(rank_1) + "  1.5 -> 0.02 in 2 steps",
        "  1 -> 0.01  target 0.1  in 2 steps, cpu, 1.00 s",
    ]
    assert Result.from_json(result.to_json()) == result


@pytest.mark.parametrize(
    "other",
    [[1.0, 0.5, 0.01], [1.0 + 1e-9, 0.5, 0.01]],
    ids=["equal", "within-float-noise"],
)
def test_ranks_whose_curves_agree_get_one_line(other):
    rank_0 = [1.0, 0.5, 0.01]
    lines = verdict_block(_ranked([rank_0, other])).splitlines()
    assert lines[1] == "  loss    " + sparkline(rank_0)
    assert not any(line.startswith("  rank ") for line in lines)


@pytest.mark.parametrize(
    ("curves", "differ"),
    [
        ([], False),
        ([[1.0, 0.5]], False),
        ([[1.0, 0.5], [1.0, 0.5], [1.0, 0.4]], True),
        ([[1.0, 0.5], [1.0]], True),  # a rank that stopped early
    ],
)
def test_curves_differ(curves, differ):
    assert curves_differ(curves) is differ
