"""``mlsmoke init`` in script-style repositories: it finds the training script,
proposes the args of a tiny CPU run, runs the gate in script mode, calibrates
max-steps from three seeds and turns the hook on; real pre-commit then passes, with no
line written by hand. A nanoGPT-shaped repository (a configurator) and a
pytorch/examples-shaped one (argparse, a DataLoader, ``train_one_epoch``)."""

from __future__ import annotations

import importlib.util
import re
import sys
import time

import pytest
from adoption import Adopted, PreCommit, adopt

from gitrepo import ROOT, commit_all

from mlsmoke.adopt import longer_budget
from mlsmoke.adopt.gate_setup import Verdict

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

pytestmark = pytest.mark.e2e


def _fixture_module(name: str):
    """A repository generator of tests/overfit, loaded by its path."""
    spec = importlib.util.spec_from_file_location(
        name, ROOT / "tests" / "overfit" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


nanogpt_shaped = _fixture_module("nanogpt_shaped")
argparse_shaped = _fixture_module("argparse_shaped")
sys.modules.setdefault("nanogpt_shaped", nanogpt_shaped)  # mingpt_shaped imports it
mingpt_shaped = _fixture_module("mingpt_shaped")
makemore_shaped = _fixture_module("makemore_shaped")
lecture_shaped = _fixture_module("lecture_shaped")


def gate_table(repo) -> dict:
    pyproject = tomllib.loads((repo / "pyproject.toml").read_text())
    return pyproject["tool"]["mlsmoke"]["overfit"]


def calibrated(output: str) -> tuple[int, list[int]]:
    """max-steps and each seed's steps, as init printed them."""
    line = re.search(r"max-steps = (\d+): at least 2x .*\((.*)\)", output)
    assert line, output
    steps = [int(n) for n in re.findall(r"seed \d+: (\d+)", line.group(2))]
    return int(line.group(1)), steps


def test_a_nanogpt_repository_adopts_the_gate_in_script_mode(
    tmp_path, hook_repo, pre_commit: PreCommit
):
    repo = nanogpt_shaped.write_nanogpt_repo(tmp_path / "gpt", configure=False)
    started = time.perf_counter()
    adopted = adopt(repo, hook_repo)
    seconds = time.perf_counter() - started
    output = adopted.init_output
    assert "the gate passed; overfit-batch is on" in output, output
    table = gate_table(repo)
    assert table["script"] == "train.py"
    assert table["pin"] == "train:get_batch"
    assert set(nanogpt_shaped.GATE_ARGS) - {"--warmup_iters=10"} <= set(table["args"])
    assert "--warmup_iters=10" in table["args"]  # 2000 would fill the budget
    assert not (repo / "mlsmoke_gate.py").exists()
    max_steps, steps = calibrated(output)
    assert len(steps) == 3 and table["max-steps"] == max_steps >= 2 * max(steps)
    print(f"nanoGPT-shaped: init {seconds:.1f} s, max-steps {max_steps} ({steps})")

    # The gate it turned on blocks a learning rate typed a thousand times too low.
    passes_then_blocks(pre_commit, adopted, nanogpt_shaped.LR_6E7, "FAIL lr-too-low")


def test_an_argparse_repository_adopts_the_gate_in_script_mode(
    tmp_path, hook_repo, pre_commit: PreCommit
):
    repo = argparse_shaped.write_argparse_repo(tmp_path / "classifier")
    started = time.perf_counter()
    adopted = adopt(repo, hook_repo)
    seconds = time.perf_counter() - started
    output = adopted.init_output
    assert "the gate passed; overfit-batch is on" in output, output
    table = gate_table(repo)
    assert table["script"] == "train.py" and "pin" not in table  # its DataLoader
    assert table["args"] == [
        "--batch-size=4",
        "--hidden-size=32",
        "--num-layers=2",
        "--no-cuda",
        "--num-workers=0",
        "--output-dir={out_dir}",
    ]
    max_steps, steps = calibrated(output)
    assert table["max-steps"] == max_steps >= 2 * max(steps)
    assert len(set(steps)) > 1, steps  # the gate's seed varies the script's own
    print(f"argparse-shaped: init {seconds:.1f} s, max-steps {max_steps} ({steps})")
    assert not (repo / "runs").exists()  # its output went to the gate's directory

    passes_then_blocks(pre_commit, adopted, argparse_shaped.DETACHED_BODY, "FAIL")


def test_a_mingpt_repository_adopts_the_script_that_trains_through_its_trainer(
    tmp_path, hook_repo, pre_commit: PreCommit
):
    repo = mingpt_shaped.write_mingpt_repo(tmp_path / "mingpt", configure=False)
    adopted = adopt(repo, hook_repo)
    output = adopted.init_output
    assert "the gate passed; overfit-batch is on" in output, output
    assert "calls Trainer.run of tinygpt/trainer.py, which builds" in output
    table = gate_table(repo)
    assert table["script"] == "projects/adder/adder.py"
    # Its config object's output directory, as the object reads it back: a literal.
    assert table["args"] == ["--system.work_dir='{out_dir}'"]
    assert "script-writes-project" not in output
    assert not (repo / "out").exists()

    passes_then_blocks(
        pre_commit, adopted, mingpt_shaped.DETACHED_ATTENTION, "FAIL no-gradient"
    )


def test_a_makemore_repository_is_calibrated_from_when_its_floor_was_reached(
    tmp_path, hook_repo, pre_commit: PreCommit
):
    repo = makemore_shaped.write_makemore_repo(tmp_path / "makemore", configure=False)
    adopted = adopt(repo, hook_repo)
    output = adopted.init_output
    assert "memorized the batch as far as its targets allow" in output, output
    assert "the gate passed; overfit-batch is on" in output, output
    table = gate_table(repo)
    assert table["script"] == "makemore.py"
    assert table["args"] == makemore_shaped.GATE_ARGS
    # Each seed's steps are those to the bar it met, not the whole budget it ran.
    max_steps, steps = calibrated(output)
    assert table["max-steps"] == max_steps >= 2 * max(steps)
    assert max_steps < 300, output
    assert not (repo / "out").exists()

    passes_then_blocks(
        pre_commit, adopted, makemore_shaped.LR_DIVIDED, "FAIL lr-too-low"
    )


def test_a_gate_only_short_of_steps_is_run_longer_and_calibrated(tmp_path, hook_repo):
    slower = nanogpt_shaped.Change(
        "train.py", "learning_rate = 6e-4", "learning_rate = 2e-4"
    )
    repo = nanogpt_shaped.write_nanogpt_repo(tmp_path / "gpt", slower, configure=False)
    output = adopt(repo, hook_repo).init_output
    assert "FAIL too-slow" in output, output
    assert "running the gate once more with up to 1200 steps" in output
    assert "the gate passed; overfit-batch is on" in output
    max_steps, steps = calibrated(output)
    assert gate_table(repo)["max-steps"] == max_steps >= 2 * max(steps) > 600


def test_only_a_failure_for_want_of_steps_is_retried():
    retried = longer_budget.short_of_steps
    assert retried(Verdict(False, "too-slow: the loss falls steadily but needs 546"))
    assert not retried(Verdict(False, "lr-too-low: the learning rate 6e-07 is too low"))
    assert not retried(Verdict(True, "passed"))


def test_a_script_that_reads_no_settings_is_made_small_through_its_globals(
    tmp_path, hook_repo, pre_commit: PreCommit
):
    repo = lecture_shaped.write_lecture_repo(
        tmp_path / "lecture", "gpt.py", lecture_shaped.LECTURE_SIZES, configure=False
    )
    adopted = adopt(repo, hook_repo)
    output = adopted.init_output
    assert "the gate passed; overfit-batch is on" in output, output
    table = gate_table(repo)
    assert table["script"] == "gpt.py" and "args" not in table
    assert table["globals"] == {"batch_size": 4, "block_size": 16, "device": "cpu",
                                "eval_iters": 1, "n_embd": 32, "n_head": 2,
                                "n_layer": 2}  # fmt: skip
    max_steps, steps = calibrated(output)
    assert table["max-steps"] == max_steps >= 2 * max(steps)
    assert "globals = { dropout = 0.0 }" in output  # dropout-active's advice

    passes_then_blocks(
        pre_commit, adopted, lecture_shaped.GPT_LR_DIVIDED, "FAIL lr-too-low"
    )


def passes_then_blocks(
    pre_commit: PreCommit, adopted: Adopted, change, verdict: str
) -> None:
    """The adopted repository passes its hooks; with ``change`` committed, the gate
    blocks it with ``verdict``."""
    ran = pre_commit(adopted, "--all-files")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert re.search(r"overfit one batch\.+Passed", ran.stdout), ran.stdout
    path = adopted.path / change.file
    path.write_text(path.read_text().replace(change.old, change.new))
    commit_all(adopted.path, f"a change to {change.file}")
    ran = pre_commit(adopted, "--all-files")
    assert ran.returncode == 1, ran.stdout
    assert verdict in ran.stdout
