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
ARGS = [*GATE_ARGS, "--backend=gloo", "--warmup_iters=2", "--learning_rate=0.003",
        "--gradient_accumulation_steps=2"]  # fmt: skip


def gate(root: Path, *changes: Change, args: list[str] = ARGS) -> dict:
    write_nanogpt_repo(root, *changes, args=args)
    with (root / "pyproject.toml").open("a") as config:
        config.write("world-size = 2\ntimeout = 60\ncollective-timeout = 5\n")
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


BUGS = {
    "no-sync-misplaced": (
        ON_CPU,
        "every one of its 2 backward passes synced the gradients",
    ),
    "missing-distributed-sampler": (
        [*CORRECT, SAME_SEED_ON_EVERY_RANK],
        "all 2 ranks trained on the same batch",
    ),
    "params-out-of-sync": (
        [*CORRECT[:1], *AVERAGED_BY_HAND],
        "differ between rank 0 and rank(s) 1 after construction",
    ),
}


@pytest.mark.parametrize("case", BUGS, ids=BUGS.keys())
def test_a_bug_of_the_ddp_branch_fails_with_its_code(tmp_path, case):
    changes, phrase = BUGS[case]
    result = gate(tmp_path / "gpt", *changes)
    assert (result["exit"], result["diagnosis"]["code"]) == (1, case), _text(result)
    assert phrase in _text(result)
