"""A worker killed by SIGKILL (the OOM killer's signal) and a factory that runs out of
memory: each is named, with the figures there are."""

from __future__ import annotations

import re
import signal

from .faultkit import Fault, assert_clean


def test_a_worker_killed_by_sigkill_names_the_oom_killer_and_the_peak(
    fault_project, mlsmoke
):
    fault_project(model="fault_factories:hogging_model", timeout=60)
    fault = Fault(signal.SIGKILL, reached="model", target="worker")
    outcome = mlsmoke("overfit", "--no-cache", fault=fault)
    assert outcome.code == 1, outcome.output
    assert "overfit smoke: FAIL killed" in outcome.stdout
    assert "was killed by SIGKILL before the gate finished" in outcome.stdout
    assert "out-of-memory killer" in outcome.stdout
    peak = re.search(r"memory peaked at ([\d,]+) MiB", outcome.stdout)
    assert peak and int(peak.group(1).replace(",", "")) >= 50  # it held 50 MiB
    assert outcome.seconds < 5.0, outcome.seconds
    assert_clean(outcome)


def test_a_model_too_large_to_build_is_out_of_memory_while_building_it(
    fault_project, mlsmoke
):
    fault_project(model="fault_factories:huge_model")
    outcome = mlsmoke("overfit", "--no-cache")
    assert outcome.code == 1, outcome.output
    assert "out of memory on cpu while building the model" in outcome.stdout
    assert "the loss" not in outcome.stdout
    assert_clean(outcome)
