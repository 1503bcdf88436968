"""``mlsmoke profile`` on a training script, end to end: the nanoGPT-shaped
repository's ``train.py`` run unpinned in a process of its own, its real model and
batch reported, its updates' phases timed."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from profile_cli import run_profile
from profiled_scripts import (
    BATCH,
    BLOCK,
    GATE_ARGS,
    LOADER_SCRIPT,
    MICRO_STEPS,
    QUICK,
    gpt_parameters,
    nanogpt_repo,
    write_script,
)

from mingpt_shaped import write_mingpt_repo  # tests/overfit, on the path from above

from mlsmoke.profile.phases import BACKWARD, DATA_WAIT, FORWARD, OPTIMIZER, range_name


def test_the_overfit_gates_script_is_profiled_with_its_real_model_and_batch(
    tmp_path: Path,
) -> None:
    root = nanogpt_repo(tmp_path / "nanogpt")
    run = run_profile(root, *QUICK, one_cpu=True)
    assert run.code == 0, run.stdout + run.stderr
    figures = run.outcome["figures"]
    parameters = gpt_parameters(root, GATE_ARGS)
    assert figures["model"]["name"] == "GPT"
    assert figures["model"]["parameters"] == parameters
    assert "model: GPT (model.py:" in run.stdout
    assert f"{parameters:,} parameters" in run.stdout
    assert figures["batch_size"] == BATCH
    assert figures["forwards_per_step"] == MICRO_STEPS
    assert figures["tokens_per_step"] == BATCH * BLOCK * MICRO_STEPS
    assert f"(batch {BATCH} x {MICRO_STEPS} micro-batches a step)" in run.stdout
    assert "tokens/s" in run.stdout
    assert figures["script"].startswith("python train.py --device=cpu")
    # the phases and "other" make up the profiled step
    split = figures["split"]
    assert set(split) == {DATA_WAIT, FORWARD, BACKWARD, OPTIMIZER, "other"}
    assert split[FORWARD] > 0 and split[BACKWARD] > 0 and split[OPTIMIZER] > 0
    assert sum(split.values()) == pytest.approx(figures["step_seconds"], rel=0.02)
    assert "profiler overhead:" in run.stdout
    assert 0 <= figures["profiler_overhead_share"] < 1
    trace = root / ".mlsmoke" / "profile" / "default.json.gz"
    assert f"trace: {trace}" in run.stdout
    names = {event.get("name") for event in json.loads(gzip.open(trace).read())[
        "traceEvents"]}  # fmt: skip
    assert {range_name(p) for p in (FORWARD, BACKWARD, OPTIMIZER)} <= names


PROFILE_TABLE = """\
[tool.mlsmoke.profile]
script = "train.py"
args = [{args}]
"""


@pytest.mark.parametrize("how", ["--script", "[tool.mlsmoke.profile]"])
def test_a_script_from_the_command_line_or_its_table_runs_with_its_args(
    tmp_path: Path, how: str
) -> None:
    args = [*GATE_ARGS, "--batch_size=2", "--gradient_accumulation_steps=1"]
    if how == "--script":
        root = nanogpt_repo(tmp_path / "nanogpt", pyproject="")
        run = run_profile(root, *QUICK, "--script", "train.py", "--", *args,
                          one_cpu=True)  # fmt: skip
        name = "train.py"
    else:
        quoted = ", ".join(f'"{arg}"' for arg in args)
        table = PROFILE_TABLE.format(args=quoted)
        root = nanogpt_repo(tmp_path / "nanogpt", pyproject=table)
        run = run_profile(root, *QUICK, one_cpu=True)
        name = "train.py"
    assert run.code == 0, run.stdout + run.stderr
    assert run.outcome["gate"] == name
    figures = run.outcome["figures"]
    assert figures["batch_size"] == 2 and figures["forwards_per_step"] == 1
    assert figures["tokens_per_step"] == 2 * BLOCK


def test_a_dataloaders_next_is_the_data_phase(tmp_path: Path) -> None:
    root = write_script(tmp_path / "p", "loop.py",
                        LOADER_SCRIPT.format(item_sleep=0.01))  # fmt: skip
    run = run_profile(root, *QUICK, "--script", "loop.py", one_cpu=True)
    assert run.code == 0, run.stdout + run.stderr
    figures = run.outcome["figures"]
    assert figures["data_from"].startswith("DataLoader.__next__")
    assert figures["loader"]["num_workers"] == 0
    assert figures["loader"]["where"].startswith("loop.py:")
    assert figures["shares"][DATA_WAIT] > 0.5  # 2 samples of 10 ms, a tiny Linear
    assert "data-workers" in run.rules
    assert figures["model"] == {"name": "Linear", "parameters": 27, "where": ""}


@pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2, reason="one CPU: no other thread count"
)
def test_on_the_cpu_the_step_is_timed_at_both_thread_counts(tmp_path: Path) -> None:
    root = nanogpt_repo(tmp_path / "nanogpt")
    run = run_profile(root, "--steps", "1", "--warmup", "1")  # OMP_NUM_THREADS=1
    assert run.code == 0, run.stdout + run.stderr
    threads = run.outcome["figures"]["threads"]
    assert threads["default"] == 1 and threads["other"] >= 2
    assert threads["default_step_seconds"] > 0 and threads["other_step_seconds"] > 0
    assert "CPU threads:" in run.stdout and "on 1 thread (this process's)" in run.stdout


def test_a_loader_a_library_trainer_draws_from_is_named_where_it_is_drawn(
    tmp_path: Path,
) -> None:
    root = write_mingpt_repo(tmp_path / "mingpt")
    run = run_profile(root, *QUICK, one_cpu=True)
    assert run.code == 0, run.stdout + run.stderr
    where = run.outcome["figures"]["loader"]["where"]
    assert where.startswith("tinygpt/trainer.py:") and where.endswith(" in run")
