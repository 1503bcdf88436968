"""A failing gate's probes and interventions share one budget of CPU time after its
run: a probe past it stops and refutes nothing, an intervention past it does not
start, and the gate still answers."""

from __future__ import annotations

import intervention_models as m
from mlsmoke.overfit.training.evidence import Evidence
from mlsmoke.overfit.verdict import diagnosis_budget

from catalog.cases import Case
from catalog.runner import run_case

SLOW_ADAPTERS = Case(
    "adapters-2e-5", "low-rank adapters", m.adapted_classifier, m.token_batch,
    loss=m.classify, optimizer=m.adam(2e-5),
)  # fmt: skip


def test_the_budget_after_a_short_run_fills_the_failing_gate_bound():
    started = diagnosis_budget.cpu_now()
    deadline = diagnosis_budget.deadline_after_run(started)
    budget = diagnosis_budget.FAILING_GATE_CPU_SECONDS
    assert budget - 0.5 < deadline - started <= budget + 0.01


def test_a_long_run_gets_a_multiple_of_its_own_time():
    now = diagnosis_budget.cpu_now()
    run_seconds = 2 * diagnosis_budget.FAILING_GATE_CPU_SECONDS
    deadline = diagnosis_budget.deadline_after_run(now - run_seconds)
    multiple = diagnosis_budget.RUN_MULTIPLE * run_seconds
    assert multiple <= deadline - now < multiple + 0.5


def test_a_probe_past_the_deadline_stops_and_is_marked_cut():
    past = diagnosis_budget.cpu_now() - 1
    stop = diagnosis_budget.stopping_by(past, None)
    assert stop([1.0, 0.9], 0.1)
    cut = diagnosis_budget.mark_if_cut(Evidence(losses=[1.0, 0.9]), past)
    assert cut.timed_out
    reached = diagnosis_budget.mark_if_cut(Evidence(reached=True), past)
    assert not reached.timed_out


def test_before_the_deadline_the_probe_keeps_its_own_rule():
    later = diagnosis_budget.cpu_now() + 60
    assert not diagnosis_budget.stopping_by(later, None)([1.0], 0.1)
    assert diagnosis_budget.stopping_by(later, lambda losses, target: True)([1.0], 0.1)


def test_with_the_budget_spent_the_gate_answers_without_a_checked_cause(monkeypatch):
    monkeypatch.setattr(diagnosis_budget, "FAILING_GATE_CPU_SECONDS", 0.0)
    monkeypatch.setattr(diagnosis_budget, "RUN_MULTIPLE", 0.0)
    outcome = run_case(SLOW_ADAPTERS)
    assert outcome.result.verdict == "fail"
    assert outcome.code != "lr-too-low", outcome.result.report()
    assert "refuted" not in outcome.result.report()
    assert all(step <= 2 for step in outcome.probe_steps), outcome.probe_steps
    assert any(
        "of the 0.00 s the gate allows after its run" in note
        for note in outcome.result.notes
    ), outcome.result.notes


def test_within_the_budget_the_lr_is_checked_and_the_spending_stated():
    outcome = run_case(SLOW_ADAPTERS)
    assert outcome.code == "lr-too-low", outcome.result.report()
    spent = next(n for n in outcome.result.notes if n.startswith("probes and"))
    assert "s CPU, of the" in spent
