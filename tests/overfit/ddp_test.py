"""The gate with ``world-size = 2``: two real gloo ranks on the CPU, started by the
worker through ``mlsmoke overfit``. A correct DDP project passes; each bug that only
exists across ranks fails with its code. Rank faults (a rank that dies, hangs or exits
early, SIGTERM to the hook) are in tests/faults/ranks_test.py."""

from __future__ import annotations

import json
import re
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from mlsmoke.cli import main as cli_main
from mlsmoke.overfit.verdict.report import BARS
from mlsmoke.overfit.verdict.result import Result

HERE = Path(__file__).parent
TIMEOUT = 30
COLLECTIVE_TIMEOUT = 10  # gloo's limit: a loaded machine lags ranks by seconds
LR = 0.02  # memorizes the tiny classifier in about 25 steps: a collective or two each


def _project(root: Path, extra: str = "", **keys: str) -> Path:
    root.mkdir()
    shutil.copy(HERE / "ddp_models.py", root)
    settings = {"model": "ddp_models:Classifier", "batch": "ddp_models:sharded_loader",
                "loss": "ddp_models:classifier_loss", "lr": LR, **keys}  # fmt: skip
    lines = "".join(
        f"{key} = {json.dumps(value)}\n"
        for key, value in settings.items()
        if value is not None  # None: the key left unset
    )
    (root / "pyproject.toml").write_text(
        "[tool.mlsmoke.overfit]\n" + lines + textwrap.dedent(f"""
            world-size = 2
            timeout = {TIMEOUT}
            collective-timeout = {COLLECTIVE_TIMEOUT}
            """) + extra
    )
    return root


def _gate(root: Path, monkeypatch, *args: str) -> tuple[int, dict]:
    monkeypatch.chdir(root)
    monkeypatch.setenv("MLSMOKE_PYTHON", sys.executable)
    report = root / "result.json"
    code = cli_main(["overfit", "--no-cache", "--json", str(report), *args])
    return code, json.loads(report.read_text())[0]


def _text(result: dict) -> str:
    diagnosis = result["diagnosis"]
    return "\n".join([diagnosis["summary"], *diagnosis["evidence"]])


def _curve_lines(result: dict) -> list[str]:
    """The loss curves the report draws: "loss" (one), or "rank 0", "rank 1"."""
    lines = Result.from_json(result).report().splitlines()[1:]
    bars = re.compile(f"[{BARS}]")
    return [bars.split(line)[0].strip() for line in lines if bars.search(line)]


CORRECT = {
    "gate wraps the model": {},
    "the factory returns DDP": {"model": "ddp_models:ddp_classifier"},
    "FSDP fully_shard on the CPU": {"model": "ddp_models:fsdp_classifier"},
    "accumulation with no_sync": {
        "model": "ddp_models:ddp_for_accumulation",
        "step": "ddp_models:accumulating_step",
        "accumulate": 2,
    },
    "a step function that averages by hand": {
        "model": "ddp_models:broadcast_classifier",
        "step": "ddp_models:averaging_step",
    },
    "a loader object that tells its sampler each epoch": {
        "batch": "ddp_models:epoch_loader",
    },
    "an lr scaled linearly by its optimizer factory": {
        "optimizer": "ddp_models:adam_scaled_linearly",
        "lr": None,
    },
    "an lr scaled by the square root": {
        "optimizer": "ddp_models:adam_scaled_by_sqrt",
        "lr": None,
    },
}


@pytest.mark.parametrize("keys", CORRECT.values(), ids=CORRECT.keys())
def test_a_correct_distributed_project_memorizes(tmp_path, monkeypatch, keys):
    code, result = _gate(_project(tmp_path / "p", **keys), monkeypatch)
    assert (code, result["diagnosis"]["code"]) == (0, "memorized"), _text(result)
    assert not result["warnings"]
    assert _curve_lines(result) == ["rank 0", "rank 1"]  # each rank its own shard


BUGS = {
    "missing-distributed-sampler": (
        {"batch": "ddp_models:unsharded_loader"},
        ["all 2 ranks trained on the same batch", "RandomSampler"],
    ),
    "unused-parameters": (
        {"model": "ddp_models:WithUnusedHead"},
        ["module(s) aux_head", "aux_head.weight, aux_head.bias"],
    ),
    "params-out-of-sync": (
        {"step": "ddp_models:averaging_step"},
        ["differ between rank 0 and rank(s) 1 after construction"],
    ),
    "gradient-not-averaged": (
        {"model": "ddp_models:broadcast_classifier", "step": "ddp_models:summing_step"},
        ["the sum over the 2 ranks, not their mean"],
    ),
    "gradient-not-averaged (a loss times N)": (
        {"loss": "ddp_models:loss_times_world_size"},
        ["each rank's loss is 2 times larger with 2 ranks than alone"],
    ),
    "no-sync-misplaced": (
        {"model": "ddp_models:ddp_for_accumulation",
         "step": "ddp_models:syncing_every_micro_step", "accumulate": 2},
        ["every one of its 2 backward passes synced the gradients; exactly one"],
    ),
    "lr-scaled-twice": (
        {"optimizer": "ddp_models:adam_scaled_twice", "lr": None},
        ["lr under 2 ranks is 0.04, 4 times its 0.01 as one process",
         "ddp_models.py:", "adam_scaled_twice"],
    ),
    "set-epoch-missing": (
        {"batch": "ddp_models:epoch_loader_never_telling"},
        ["DistributedSampler gave rank 0 the same order in its first two epochs",
         "(iterated at ddp_models.py:", "in __iter__)"],
    ),
    "collective-mismatch": (
        {"loss": "ddp_models:rank_zero_logs_loss"},
        ["a collective the other ranks did not make",
         "ddp_models.py", "dist.all_reduce(logged)  # only rank 0 gets here"],
    ),
    "collective-mismatch (named by the monitored barrier)": (
        {"model": "ddp_models:broadcast_classifier",
         "step": "ddp_models:rank_zero_evaluates"},
        ["rank(s) 0 never reached the step's monitored barrier",
         "rank(s) 1 arrived, rank(s) 0 did not",
         "dist.barrier()  # an evaluation only rank 0 runs"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", BUGS, ids=BUGS.keys())
def test_each_distributed_bug_fails_with_its_code(tmp_path, monkeypatch, case):
    keys, phrases = BUGS[case]
    code = case.partition(" ")[0]
    exit_code, result = _gate(_project(tmp_path / "p", **keys), monkeypatch)
    assert (exit_code, result["diagnosis"]["code"]) == (1, code), _text(result)
    for phrase in phrases:
        assert phrase in _text(result)
    if code == "missing-distributed-sampler":
        assert _curve_lines(result) == ["loss"]  # the ranks' curves agree: one line


def test_an_unsynced_step_is_named_a_gradient_never_averaged(tmp_path, monkeypatch):
    keys = {"model": "ddp_models:broadcast_classifier",
            "step": "ddp_models:unsynced_step"}  # fmt: skip
    exit_code, result = _gate(_project(tmp_path / "p", **keys), monkeypatch)
    assert result["diagnosis"]["code"] == "gradient-not-averaged", _text(result)
    assert "never averaged with the other ranks'" in _text(result)


def test_batchnorm_on_small_per_rank_batches_warns(tmp_path, monkeypatch):
    root = _project(tmp_path / "p", model="ddp_models:BatchNormClassifier")
    _, result = _gate(root, monkeypatch)
    warnings = {w["code"]: w["message"] for w in result["warnings"]}
    assert "body.1" in warnings["sync-batchnorm"]


def test_a_sync_batchnorm_model_passes_without_the_warning(tmp_path, monkeypatch):
    """SyncBatchNorm normalizes over both ranks' samples (simulated on the CPU)."""
    root = _project(tmp_path / "p", model="ddp_models:sync_batchnorm_classifier")
    code, result = _gate(root, monkeypatch)
    assert (code, result["diagnosis"]["code"]) == (0, "memorized"), _text(result)
    assert not [w for w in result["warnings"] if w["code"] == "sync-batchnorm"]


def test_every_distributed_code_is_tested_here() -> None:
    from mlsmoke.overfit.verdict import ranks

    tested = {case.partition(" ")[0] for case in BUGS}
    tested |= {"sync-batchnorm"}  # the BatchNorm test
    tested |= {"rank-failed"}  # tests/faults/ranks_test.py
    assert tested == set(ranks.CODES)


def test_the_ranks_fork_from_the_warm_worker(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MLSMOKE_WORKER", "1")
    monkeypatch.setenv("MLSMOKE_WORKER_DIR", str(tmp_path / "workers"))
    root = _project(tmp_path / "p")
    try:
        code, result = _gate(root, monkeypatch)
    finally:
        capsys.readouterr()
        assert cli_main(["worker", "stop"]) == 0
    assert "stopped worker" in capsys.readouterr().out  # the gate was the worker's job
    assert (code, result["diagnosis"]["code"]) == (0, "memorized"), _text(result)


def test_a_single_process_diagnosis_still_answers_on_rank_0(tmp_path, monkeypatch):
    """The lr range test's probes train in rank 0's world of one."""
    root = _project(tmp_path / "p", lr=1e-7, **{"max-steps": 40})
    code, result = _gate(root, monkeypatch)
    assert (code, result["diagnosis"]["code"]) == (1, "lr-too-low"), _text(result)


def test_a_model_callable_that_starts_the_process_group_is_named(tmp_path, monkeypatch):
    root = _project(tmp_path / "p", model="ddp_models:self_initializing")
    code, result = _gate(root, monkeypatch)
    assert (code, result["diagnosis"]["code"]) == (1, "train-error"), _text(result)
    assert "default process group twice" in _text(result)
    assert 'dist.init_process_group("gloo")' in _text(result)  # the project's line


def test_the_simulated_sync_batchnorm_normalizes_over_every_rank(tmp_path):
    """On 2 gloo ranks, each rank's output and input gradient equal those of one
    BatchNorm over both ranks' samples: what SyncBatchNorm's CUDA kernel gives. The
    ranks fork from a fresh interpreter: forked from this one, whose torch thread
    pools earlier tests started, a rank can wait forever on a lock no thread holds."""
    from ddp_models import run_ranks_in_fresh_interpreter

    run_ranks_in_fresh_interpreter(
        "ddp_test", "_compare_with_one_batchnorm", str(tmp_path / "store")
    )


def _compare_with_one_batchnorm(rank: int, store: str) -> None:
    import torch
    import torch.distributed as dist
    from ddp_models import CpuSyncBatchNorm

    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank,
                            world_size=2)  # fmt: skip
    both = torch.randn(8, 3, generator=torch.Generator().manual_seed(0)) * 3 + 1
    whole = both.clone().requires_grad_()
    torch.nn.BatchNorm1d(3)(whole).pow(3).sum().backward()
    mine = both[rank * 4 : rank * 4 + 4].clone().requires_grad_()
    output = CpuSyncBatchNorm(3)(mine)
    output.pow(3).sum().backward()
    torch.testing.assert_close(output, torch.nn.BatchNorm1d(3)(both)[rank * 4 :][:4])
    torch.testing.assert_close(mine.grad, whole.grad[rank * 4 : rank * 4 + 4])
    dist.destroy_process_group()
