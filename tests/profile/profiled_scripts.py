"""Training scripts for ``mlsmoke profile --script``: the nanoGPT-shaped repository of
the overfit tests (``tests/overfit/nanogpt_shaped.py``), and small scripts of our own.

A module of its own, as ``profile_cli.py`` is; tests/overfit is put on the path here
so that the generator has one home."""

from __future__ import annotations

import sys
from pathlib import Path

OVERFIT_TESTS = Path(__file__).resolve().parents[1] / "overfit"
if str(OVERFIT_TESTS) not in sys.path:
    sys.path.insert(0, str(OVERFIT_TESTS))

from nanogpt_shaped import GATE_ARGS, write_nanogpt_repo  # noqa: E402

# A few updates, so that each test takes seconds.
QUICK = ("--steps", "2", "--warmup", "1")
MICRO_STEPS = 4  # the generated train.py's gradient_accumulation_steps
BATCH, BLOCK = 4, 16  # GATE_ARGS' batch_size and block_size

LOADER_SCRIPT = """\
import time

import torch

ITEM_SLEEP = {item_sleep}


class Slow(torch.utils.data.Dataset):
    def __len__(self):
        return 10_000

    def __getitem__(self, index):
        time.sleep(ITEM_SLEEP)
        return torch.randn(8), index % 3


model = torch.nn.Linear(8, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = torch.utils.data.DataLoader(Slow(), batch_size=2)
for epoch in range(100):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
"""


def nanogpt_repo(root: Path, pyproject: str | None = None) -> Path:
    """The nanoGPT-shaped repository, its overfit gate in script mode on GATE_ARGS;
    ``pyproject`` replaces its pyproject.toml."""
    write_nanogpt_repo(root)
    if pyproject is not None:
        (root / "pyproject.toml").write_text(pyproject)
    return root


def gpt_parameters(root: Path, args: list[str]) -> int:
    """The parameter count of the repository's GPT at ``args``' sizes, counted here."""
    sizes = {"n_layer": 4, "n_head": 4, "n_embd": 128, "block_size": 32}
    for arg in args:
        key, _, value = arg.lstrip("-").partition("=")
        if key in sizes:
            sizes[key] = int(value)
    namespace: dict = {}
    exec((root / "model.py").read_text(), namespace)
    config = namespace["GPTConfig"](vocab_size=128, dropout=0.0, **sizes)
    model = namespace["GPT"](config)
    return sum(parameter.numel() for parameter in model.parameters())


def write_script(root: Path, name: str, text: str, pyproject: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text)
    (root / "pyproject.toml").write_text(pyproject)
    return root


__all__ = ["GATE_ARGS", "write_nanogpt_repo"]
