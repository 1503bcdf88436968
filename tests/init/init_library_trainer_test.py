"""``mlsmoke init`` in a repository whose training script trains through
transformers' ``Trainer``: it finds the script, proposes args that keep the output
out of the project, runs the gate in script mode (the Trainer given the gate's steps),
calibrates max-steps and turns the hook on; real pre-commit then passes."""

from __future__ import annotations

import re

import pytest
from adoption import PreCommit, adopt
from init_script_mode_test import _fixture_module, calibrated, gate_table

pytestmark = pytest.mark.e2e

hf_trainer_shaped = _fixture_module("hf_trainer_shaped")


def test_a_transformers_trainer_repository_adopts_the_gate_in_script_mode(
    tmp_path, hook_repo, pre_commit: PreCommit
):
    repo = hf_trainer_shaped.write_hf_trainer_repo(tmp_path / "classifier")
    adopted = adopt(repo, hook_repo)
    output = adopted.init_output
    assert (
        "found: builds transformers.Trainer (line 40) and calls its train() (line 41)"
        in output
    )
    assert "the gate passed; overfit-batch is on" in output, output
    table = gate_table(repo)
    assert table["script"] == "train.py" and "pin" not in table  # its DataLoader
    assert table["args"] == ["--output-dir={out_dir}", "--batch-size=4"]
    max_steps, steps = calibrated(output)
    assert table["max-steps"] == max_steps >= 2 * max(steps)
    assert max(steps) > hf_trainer_shaped.OWN_STEPS  # run past its own 2 epochs
    assert not (repo / "out").exists()

    ran = pre_commit(adopted, "--all-files")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert re.search(r"overfit one batch\.+Passed", ran.stdout), ran.stdout
