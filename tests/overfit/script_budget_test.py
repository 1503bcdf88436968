"""A failing gate in script mode spends at most its budget after the run: probes end
once their answer is clear, a probe past the budget stops timed out, and one the
budget left cannot launch is not started. The gate runs in this process."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mlsmoke.overfit import script_budget
from mlsmoke.overfit.process.settings import load_gates
from mlsmoke.overfit.script_gate import run_script_gate
from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.training.script_points import StepRules
from mlsmoke.overfit.verdict import diagnosis_budget, probes

TRAIN = """\
import torch
from torch import nn

torch.manual_seed(0)
x, y = torch.randn(64, 16), torch.randint(0, 4, (64,))
model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=LR)
for step in range(100000):
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lr: float):
    (tmp_path / "train.py").write_text(TRAIN.replace("LR", repr(lr)))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mlsmoke.overfit]\nscript = "train.py"\nmax-steps = 300\n'
    )
    monkeypatch.chdir(tmp_path)
    (settings,) = load_gates(tmp_path)
    launches: list[script_budget.ProbeBudget] = []
    after_run = script_budget.after_run

    def kept(started: float, run: object) -> script_budget.ProbeBudget:
        launches.append(after_run(started, run))  # type: ignore[arg-type]
        return launches[-1]

    monkeypatch.setattr(script_budget, "after_run", kept)
    result, run = run_script_gate(settings)
    return result, run, launches[0]


def test_a_probe_that_will_not_memorize_ends_once_that_is_clear(tmp_path, monkeypatch):
    result, run, budget = gate(tmp_path, monkeypatch, lr=1e-6)
    assert result.diagnosis.code == "lr-too-low", result.diagnosis
    assert run.probes and probes.memorized(run.probes[-1])
    given_up = [p for p in run.probes if not p.reached and p.steps < p.max_steps]
    assert given_up, [(p.lr, p.steps, p.max_steps) for p in run.probes]
    assert not any(p.timed_out for p in run.probes)
    assert budget.launches == len(run.probes) and budget.not_started == 0
    assert any(note.startswith("probes and interventions:") for note in result.notes)


def test_a_probe_past_the_budget_is_cut_and_refutes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(diagnosis_budget, "FAILING_GATE_CPU_SECONDS", 0.0)
    monkeypatch.setattr(script_budget, "RUN_MULTIPLE", 0.05)
    result, run, budget = gate(tmp_path, monkeypatch, lr=1e-6)
    spent = diagnosis_budget.cpu_now() - budget.after_run
    allowed = budget.deadline - budget.after_run
    assert run.probes, result.diagnosis
    assert all(p.timed_out for p in run.probes if not p.reached)
    assert budget.not_started >= 1
    # the probes, and everything after them, within the budget and one launch
    assert spent <= allowed + budget.launch + 0.5, (spent, allowed)
    assert result.diagnosis.code != "lr-too-low" or any(
        probes.memorized(p) for p in run.probes
    )


def test_a_probe_the_budget_cannot_launch_is_timed_out_before_its_first_step():
    run = Evidence(max_steps=300, script="train.py", optimizer="Adam", lr=1e-6)
    rules = StepRules(120, 0.1, None, 60.0, lr_scale=1000.0)
    probe = script_budget.not_started(run, rules)
    assert probe.timed_out and not probe.losses and not probe.reached
    assert probe.lr == pytest.approx(1e-3) and probe.target == 0.1
    assert (
        probes.describe_lr_result(probe) == "at lr 0.001: stopped before its first step"
    )


def test_a_launch_is_afforded_while_the_budget_left_pays_for_it():
    now = diagnosis_budget.cpu_now()
    budget = script_budget.ProbeBudget(now, now + 60.0, launch=0.5)
    assert budget.affords_a_launch()
    budget.launched(0.2)
    budget.launched(None)
    assert budget.launch == 0.2 and budget.launches == 2
    spent = script_budget.ProbeBudget(now, time.process_time() + 0.1, launch=0.5)
    assert not spent.affords_a_launch() and spent.not_started == 1
    assert "1 not started" in spent.note()
