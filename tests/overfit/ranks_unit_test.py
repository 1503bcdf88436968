"""The distributed gate's configuration, its NCCL path by simulation and its port
retry: no training, or one tiny run."""

from __future__ import annotations

import socket
import time
from datetime import timedelta

import pytest
import torch

from mlsmoke.errors import ConfigError
from mlsmoke.overfit.process import main as overfit_main
from mlsmoke.overfit.process import ranks
from mlsmoke.overfit.process.settings import GateSettings, _resolve
from mlsmoke.overfit.training.ranks import agreement, rank
from mlsmoke.overfit.training.ranks.record import barrier_missing, gave_up_waiting
from mlsmoke.overfit.verdict.ranks import RankEnd, no_process_group, too_few_gpus
from mlsmoke.overfit.verdict.ranks.ends import Ranks

GATE = {"model": "m:build", "batch": "m:batch"}


def _gate(**keys) -> GateSettings:
    return _resolve("default", "tool.mlsmoke.overfit", {**GATE, **keys}, {}, {}, {},
                    "commit")  # fmt: skip


def test_world_size_defaults_to_one_and_takes_any_n() -> None:
    assert _gate().world_size == 1
    assert _gate(**{"world-size": 3}).world_size == 3


@pytest.mark.parametrize("value", [0, -2, 1.5, "2", True])
def test_a_world_size_below_one_names_the_key(value) -> None:
    with pytest.raises(ConfigError, match=r"tool\.mlsmoke\.overfit\.world-size:"):
        _gate(**{"world-size": value})


def test_script_mode_takes_a_world_size() -> None:
    gate = _resolve("default", "t", {"script": "train.py", "world-size": 2}, {}, {},
                    {}, "commit")  # fmt: skip
    assert (gate.script, gate.world_size) == ("train.py", 2)


def test_a_script_with_no_process_group_under_ranks_is_a_config_error() -> None:
    script = _resolve("default", "t", {"script": "train.py", "world-size": 2}, {}, {},
                      {}, "commit")  # fmt: skip
    alone = {"rank": 0, "world_size": 2, "process_group": False}
    ends = [RankEnd(rank, 0, {**alone, "rank": rank}) for rank in range(2)]
    found = no_process_group.diagnose(Ranks(script, ends))
    assert found is not None and found.code == "config-error"
    assert "world-size: train.py ran as 2 ranks" in found.summary
    ends[1].record["process_group"] = True  # one rank started it: not this
    assert no_process_group.diagnose(Ranks(script, ends)) is None


@pytest.mark.parametrize("text", ["0", "-1", "two"])
def test_the_world_size_option_wants_one_or_more(text, capsys) -> None:
    with pytest.raises(SystemExit) as raised:
        overfit_main.build_parser().parse_args(["--world-size", text])
    assert raised.value.code == 2
    assert "--world-size: expected a number of ranks" in capsys.readouterr().err


def test_nccl_with_fewer_gpus_than_ranks_names_the_key_and_the_gpus(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    result = too_few_gpus(_gate(**{"world-size": 2}), visible=1)
    assert result is not None and result.diagnosis.code == "config-error"
    summary = result.diagnosis.summary
    assert summary.startswith("tool.mlsmoke.overfit.world-size: 2 ranks on CUDA")
    assert "1 GPU(s) are visible (CUDA_VISIBLE_DEVICES=0)" in summary
    assert too_few_gpus(_gate(**{"world-size": 2}), visible=2) is None


def test_the_launcher_refuses_cuda_ranks_without_a_gpu_each(monkeypatch):
    """The real run_ranks on a simulated one-GPU machine: it starts no rank."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(ranks, "_run_once", _never_called)
    settings = _gate(**{"world-size": 2, "device": "cuda"})
    result = ranks.run_ranks(settings, None, None, time.monotonic() + 5)
    assert result.diagnosis.code == "config-error"
    assert "1 GPU(s) are visible" in result.diagnosis.summary


def test_cuda_ranks_take_nccl_and_their_local_gpu(monkeypatch):
    chosen = []
    monkeypatch.setattr(torch.cuda, "set_device", chosen.append)
    assert rank.backend_for(rank.rank_device("cuda", 1)) == "nccl"
    assert chosen == [1]
    assert rank.backend_for(rank.rank_device("cpu", 1)) == "gloo"


def _never_called(*args, **kwargs):
    raise AssertionError("no rank may start")


def test_a_master_port_in_use_is_retried_on_another(tmp_path, monkeypatch):
    (tmp_path / "tiny.py").write_text(TINY)
    monkeypatch.syspath_prepend(str(tmp_path))
    taken = socket.socket()
    taken.bind((ranks.MASTER_ADDR, 0))
    taken.listen()
    ports = [taken.getsockname()[1]]
    chosen = []

    def choose() -> int:
        chosen.append(ports.pop() if ports else ranks._free_port())
        return chosen[-1]

    settings = _gate(model="tiny:build", batch="tiny:batch", loss="tiny:loss",
                     **{"world-size": 2, "collective-timeout": 2})  # fmt: skip
    try:
        result = ranks.run_ranks(settings, "cpu", None, time.monotonic() + 60, choose)
    finally:
        taken.close()
    assert len(chosen) == 2 and chosen[0] != chosen[1]
    assert result.diagnosis.code == "missing-distributed-sampler", result.report()


TINY = """
import torch

def build():
    return torch.nn.Linear(4, 1)

def batch():
    return torch.ones(2, 4), torch.zeros(2, 1)

def loss(model, batch):
    inputs, targets = batch
    return ((model(inputs) - targets) ** 2).mean()
"""


def test_the_step_barrier_is_a_gloo_group_beside_the_default_one():
    """The group NCCL ranks would get too: gloo, whatever the default backend."""
    import torch.distributed as dist

    from mlsmoke.overfit.training.ranks.step_barrier import StepBarrier

    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        barrier = StepBarrier.beside_default_group(timedelta(seconds=2))
        assert barrier is not None and barrier.group is not dist.group.WORLD
        assert dist.get_backend(barrier.group) == "gloo"
        barrier.wait()  # a world of one passes at once
        assert agreement.agreeing_at(barrier)(True, False) is True
    finally:
        dist.destroy_process_group()


def test_without_gloo_the_ranks_agree_with_no_barrier(monkeypatch):
    import torch.distributed as dist

    from mlsmoke.overfit.training.ranks.step_barrier import StepBarrier

    def no_gloo(*args, **kwargs):
        raise RuntimeError("Distributed package doesn't have Gloo built in")

    monkeypatch.setattr(dist, "new_group", no_gloo)
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        assert StepBarrier.beside_default_group(timedelta(seconds=1)) is None
        assert agreement.agreeing_at(None)(False, True) is True
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize(
    ("error", "missing"),
    [
        ("RuntimeError: [Rank 0]: Ranks 1, 3 failed to pass monitoredBarrier in"
         " 2000 ms", [1, 3]),
        ("RuntimeError: Rank 2 successfully reached monitoredBarrier, but received"
         " errors while waiting for send/recv from rank 0. Please check rank 0 logs",
         [0]),
        ("RuntimeError: Timed out waiting 2000ms for recv operation", []),
    ],
)  # fmt: skip
def test_the_barrier_error_names_the_missing_ranks(error, missing):
    assert barrier_missing(error) == missing
    assert gave_up_waiting(error)  # each ends the rank's wait for the others


def test_rank_0s_barrier_list_is_preferred_to_the_others_guess():
    """Rank 1 can only say rank 0 did not answer; rank 0 knows rank 2 is missing."""
    settings = _gate(**{"world-size": 3})
    records = [
        "[Rank 0]: Ranks 2 failed to pass monitoredBarrier in 5000 ms",
        "Rank 1 successfully reached monitoredBarrier, but received errors while"
        " waiting for send/recv from rank 0.",
    ]
    ends = [RankEnd(r, 0, {"rank": r, "world_size": 3, "error": e})
            for r, e in enumerate(records)] + [RankEnd(2, None, None)]  # fmt: skip
    assert Ranks(settings, ends).missed_the_barrier() == [2]
    assert Ranks(settings, ends[1:]).missed_the_barrier() == [0]


def _records(*each: dict) -> list[RankEnd]:
    return [RankEnd(rank, 0, {"rank": rank, "world_size": len(each), **fields})
            for rank, fields in enumerate(each)]  # fmt: skip


def test_the_line_that_seeded_the_ranks_apart_is_named() -> None:
    from mlsmoke.overfit.verdict.ranks import params_in_sync

    shared = [0, "train.py:3"]
    ends = _records(
        {"hashes": ["a"], "seeds": [shared, [1337, "train.py:9"]]},
        {"hashes": ["b"], "seeds": [shared, [1338, "train.py:9"]]},
    )
    found = params_in_sync.diagnose(Ranks(_gate(**{"world-size": 2}), ends))
    assert found is not None and found.summary.endswith(
        "; the ranks were seeded apart at train.py:9 (rank 0: 1337, rank 1: 1338)"
    )
    ends[1].record["seeds"][1][0] = 1337  # the same seeds: no line is guessed
    found = params_in_sync.diagnose(Ranks(_gate(**{"world-size": 2}), ends))
    assert found is not None and "seeded apart" not in found.summary


def test_a_barrier_one_rank_cannot_make_is_used_by_none(tmp_path):
    """Rank 1 cannot make the barrier's group: neither rank waits at a barrier. The
    ranks fork from a fresh interpreter: forked from this one, whose torch thread
    pools earlier tests started, a rank can wait forever on a lock no thread holds."""
    from ddp_models import run_ranks_in_fresh_interpreter

    run_ranks_in_fresh_interpreter(
        "ranks_unit_test", "_make_the_barrier", str(tmp_path / "store")
    )


def _make_the_barrier(rank: int, store: str) -> None:
    import torch.distributed as dist

    from mlsmoke.overfit.training.ranks.step_barrier import StepBarrier

    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank,
                            world_size=2, timeout=timedelta(seconds=5))  # fmt: skip
    if rank == 1:
        dist.new_group = _fails_after(dist.new_group)
    assert StepBarrier.beside_default_group(timedelta(seconds=2)) is None
    dist.destroy_process_group()


def _fails_after(new_group):
    """Rank 0's group is made (rank 1 joins it); rank 1's own attempt then fails."""

    def made_then_failed(*args, **kwargs):
        new_group(*args, **kwargs)
        raise RuntimeError("Distributed package doesn't have Gloo built in")

    return made_then_failed
