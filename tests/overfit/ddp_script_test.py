"""Script mode with ``world-size = 2``: a training script shaped like nanoGPT's runs
its own DDP branch on two real gloo ranks, as under ``torchrun --nproc-per-node 2``.
A correct branch passes; each bug only ranks have fails with the ranks' code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from nanogpt_shaped import GATE_ARGS, Change, write_nanogpt_repo

# nanoGPT's DDP branch assumes a GPU per rank; these run it on the CPU (gloo).
ON_CPU = [
    Change(
        "train.py",
        '    device = f"cuda:{ddp_local_rank}"\n    torch.cuda.set_device(device)\n',
        '    if device.startswith("cuda"):\n'
        '        device = f"cuda:{ddp_local_rank}"\n'
        "        torch.cuda.set_device(device)\n",
    ),
    Change(
        "train.py",
        "DDP(model, device_ids=[ddp_local_rank])",
        'DDP(model, device_ids=[ddp_local_rank] if device_type == "cuda" else None)',
    ),
]
# As nanoGPT does: only the last micro-step of an update syncs the gradients.
SYNC_ON_LAST_MICRO_STEP = Change(
    "train.py",
    "    for micro_step in range(gradient_accumulation_steps):\n",
    "    for micro_step in range(gradient_accumulation_steps):\n"
    "        if ddp:\n"
    "            model.require_backward_grad_sync = (\n"
    "                micro_step == gradient_accumulation_steps - 1)\n",
)
CORRECT = [*ON_CPU, SYNC_ON_LAST_MICRO_STEP]

SAME_SEED_ON_EVERY_RANK = Change(
    "train.py", 'seed_offset = int(os.environ["RANK"])', "seed_offset = 0"
)
# No DDP: the gradients are averaged by hand, and the ranks were seeded apart.
AVERAGED_BY_HAND = [
    Change(
        "train.py",
        "    model = DDP(model, device_ids=[ddp_local_rank])\n",
        "    pass\n",
    ),
    Change("train.py", "model.module if ddp else model", "model"),
    Change(
        "train.py",
        "    scaler.step(optimizer)\n",
        "    if ddp:\n"
        "        for p in model.parameters():\n"
        "            torch.distributed.all_reduce(p.grad)\n"
        "            p.grad /= int(os.environ['WORLD_SIZE'])\n"
        "    scaler.step(optimizer)\n",
    ),
]
# Fewer, larger steps than GATE_ARGS': every step waits for both ranks.
# A script shaped like PyTorch's DDP tutorial: a DataLoader over a DistributedSampler,
# its epochs driven by the script, each told to the sampler.
SAMPLER_SCRIPT = """\
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

ddp = "RANK" in os.environ
if ddp:
    dist.init_process_group("gloo")
torch.manual_seed(0)
inputs = torch.randn(64, 8)
dataset = TensorDataset(inputs, (inputs.sum(1) > 0).long())
sampler = DistributedSampler(dataset, shuffle=True) if ddp else None
loader = DataLoader(dataset, batch_size=8, sampler=sampler, shuffle=sampler is None)
model = torch.nn.Sequential(
    torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
if ddp:
    model = DDP(model)
lr = 0.005
if ddp:
    lr *= dist.get_world_size()  # the linear scaling rule
optimizer = torch.optim.Adam(model.parameters(), lr=lr)
for epoch in range(1000):
    if ddp:
        sampler.set_epoch(epoch)
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
if ddp:
    dist.destroy_process_group()
"""
NO_SET_EPOCH = Change("train.py", "    if ddp:\n        sampler.set_epoch(epoch)\n", "")
SUMMED_BY_HAND = [
    Change("train.py", "    model = DDP(model)\n", "    pass\n"),
    Change(
        "train.py",
        "        loss.backward()\n",
        "        loss.backward()\n"
        "        if ddp:\n"
        "            for p in model.parameters():\n"
        "                dist.all_reduce(p.grad)  # never divided\n",
    ),
]
LOSS_TIMES_WORLD_SIZE = Change(
    "train.py",
    "        loss.backward()\n",
    "        if ddp:\n"
    "            loss = loss * dist.get_world_size()  # on top of DDP's mean\n"
    "        loss.backward()\n",
)
UNUSED_HEAD = Change(
    "train.py",
    "model = torch.nn.Sequential(\n"
    "    torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))\n",
    "class WithUnusedHead(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.body = torch.nn.Sequential(\n"
    "            torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))\n"
    "        self.aux_head = torch.nn.Linear(32, 2)  # never called\n"
    "\n"
    "    def forward(self, x):\n"
    "        return self.body(x)\n"
    "\n"
    "\n"
    "model = WithUnusedHead()\n",
)
RANK_ZERO_LOGS = Change(
    "train.py",
    "        loss.backward()\n",
    "        loss.backward()\n"
    "        if ddp and dist.get_rank() == 0:\n"
    "            dist.all_reduce(loss.detach())  # a log only rank 0 makes\n",
)
SCALED_AGAIN = Change(
    "train.py",
    "lr=lr)",
    "lr=lr * (dist.get_world_size() if ddp else 1))",
)

ARGS = [*GATE_ARGS, "--backend=gloo", "--warmup_iters=2", "--learning_rate=0.01",
        "--gradient_accumulation_steps=2"]  # fmt: skip


def gate(root: Path, *changes: Change, args: list[str] = ARGS) -> dict:
    write_nanogpt_repo(root, *changes, args=args)
    return _run(root, "world-size = 2\n")


def _sampler_project(root: Path, *changes: Change) -> dict:
    root.mkdir()
    script = SAMPLER_SCRIPT
    for change in changes:
        assert change.old in script, change
        script = script.replace(change.old, change.new)
    (root / "train.py").write_text(script)
    (root / "pyproject.toml").write_text(
        '[tool.mlsmoke.overfit]\nscript = "train.py"\nworld-size = 2\n'
    )
    return _run(root)


def _run(root: Path, extra: str = "") -> dict:
    with (root / "pyproject.toml").open("a") as config:
        config.write(f"{extra}timeout = 60\ncollective-timeout = 5\n")
    report = root / "result.json"
    env = {**os.environ, "MLSMOKE_PYTHON": sys.executable, "MLSMOKE_WORKER": "0"}
    ran = subprocess.run(
        [sys.executable, "-m", "mlsmoke", "overfit", "--no-cache", "-v",
         "--json", str(report)],
        cwd=root, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    result = json.loads(report.read_text())[0] if report.exists() else {}
    result["output"] = ran.stdout + ran.stderr
    result["exit"] = ran.returncode
    return result


def _text(result: dict) -> str:
    diagnosis = result.get("diagnosis", {})
    return "\n".join(
        [diagnosis.get("summary", ""), *diagnosis.get("evidence", []),
         result["output"]]
    )  # fmt: skip


def test_a_correct_ddp_branch_passes_on_two_ranks(tmp_path):
    result = gate(tmp_path / "gpt", *CORRECT)
    assert (result["exit"], result["diagnosis"]["code"]) == (0, "memorized"), _text(
        result
    )
    assert "torchrun --nproc-per-node=2 train.py" in result["output"]
    assert "ranks: rank 0 5.067 -> " in result["output"]  # each rank its own shard
    assert "; rank 1 " in result["output"]


# Each bug, what the report says, and the script's line it names (its text).
BUGS = {
    "no-sync-misplaced": (
        ON_CPU,
        "every one of its 2 backward passes synced the gradients",
        None,
    ),
    "missing-distributed-sampler": (
        [*CORRECT, SAME_SEED_ON_EVERY_RANK],
        "all 2 ranks trained on the same batch, fetched at train.py:{line}:",
        'X, Y = get_batch("train")',
    ),
    "params-out-of-sync": (
        [*CORRECT[:1], *AVERAGED_BY_HAND],
        "differ between rank 0 and rank(s) 1 after construction; the ranks were"
        " seeded apart at train.py:{line} (rank 0: ",
        "torch.manual_seed(1337 + seed_offset)",
    ),
}


@pytest.mark.parametrize("case", BUGS, ids=BUGS.keys())
def test_a_bug_of_the_ddp_branch_fails_with_its_code(tmp_path, case):
    changes, phrase, line = BUGS[case]
    result = gate(tmp_path / "gpt", *changes)
    assert (result["exit"], result["diagnosis"]["code"]) == (1, case), _text(result)
    script = (tmp_path / "gpt" / "train.py").read_text().splitlines()
    number = script.index(line) + 1 if line else 0
    assert phrase.format(line=number) in _text(result)


def test_a_sampler_told_each_epoch_passes(tmp_path):
    result = _sampler_project(tmp_path / "p")
    assert (result["exit"], result["diagnosis"]["code"]) == (0, "memorized"), _text(
        result
    )


def test_a_sampler_never_told_the_epoch_is_named_with_the_line(tmp_path):
    result = _sampler_project(tmp_path / "p", NO_SET_EPOCH)
    assert (result["exit"], result["diagnosis"]["code"]) == (
        1,
        "set-epoch-missing",
    ), _text(result)
    assert "DistributedSampler gave rank 0 the same order" in _text(result)
    script = (tmp_path / "p" / "train.py").read_text().splitlines()
    line = script.index("    for x, y in loader:") + 1
    assert f"(iterated at train.py:{line})" in _text(result)


def test_an_lr_scaled_by_the_world_size_twice_is_named(tmp_path):
    result = _sampler_project(tmp_path / "p", SCALED_AGAIN)
    assert (result["exit"], result["diagnosis"]["code"]) == (
        1,
        "lr-scaled-twice",
    ), _text(result)
    assert "lr under 2 ranks is 0.02, 4 times its 0.005 as one process" in _text(result)
    script = (tmp_path / "p" / "train.py").read_text().splitlines()
    line = next(i for i, text in enumerate(script) if "torch.optim.Adam(" in text)
    assert f"(built at train.py:{line + 1})" in _text(result)


SCRIPT_BUGS = {
    "gradient-not-averaged": (
        SUMMED_BY_HAND,
        "sees the sum over the 2 ranks, not their mean (2 times too large);"
        " all-reduced by hand at train.py:{line}",
        "                dist.all_reduce(p.grad)  # never divided",
    ),
    "gradient-not-averaged (a loss times N)": (
        [LOSS_TIMES_WORLD_SIZE],
        "each rank's loss is 2 times larger with 2 ranks than alone",
        "        loss.backward()",
    ),
    "unused-parameters": (
        [UNUSED_HEAD],
        "module(s) aux_head; DDP stops at the next step, at ",
        "        loss = torch.nn.functional.cross_entropy(model(x), y)",
    ),
}


@pytest.mark.parametrize("case", SCRIPT_BUGS, ids=SCRIPT_BUGS.keys())
def test_a_bug_of_a_sampler_script_is_named_with_its_line(tmp_path, case):
    changes, phrase, line = SCRIPT_BUGS[case]
    result = _sampler_project(tmp_path / "p", *changes)
    code = case.partition(" ")[0]
    assert (result["exit"], result["diagnosis"]["code"]) == (1, code), _text(result)
    script = (tmp_path / "p" / "train.py").read_text().splitlines()
    number = script.index(line) + 1
    assert phrase.format(line=number) in _text(result)
    if case.endswith("(a loss times N)"):
        assert f"(the loss of the backward at train.py:{number})" in _text(result)
    if case == "unused-parameters":  # the forward DDP stopped in
        assert f"train.py:{number}: {line.strip()}" in _text(result)


def test_a_collective_only_rank_0_makes_is_named_by_the_monitored_barrier(tmp_path):
    result = _sampler_project(tmp_path / "p", RANK_ZERO_LOGS)
    assert (result["exit"], result["diagnosis"]["code"]) == (
        1,
        "collective-mismatch",
    ), _text(result)
    assert "rank(s) 0 never reached the step's monitored barrier" in _text(result)
    assert "rank(s) 1 arrived, rank(s) 0 did not" in _text(result)
    script = (tmp_path / "p" / "train.py").read_text().splitlines()
    line = script.index("            dist.all_reduce(loss.detach())  # a log only"
                        " rank 0 makes") + 1  # fmt: skip
    assert f"train.py:{line}: dist.all_reduce(loss.detach())" in _text(result)
