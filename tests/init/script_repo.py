"""Repositories shaped like the ones people adopt mlsmoke in, written for real.

``write_script_repo``: nanoGPT's shape. A ``model.py`` with a config dataclass and a
GPT whose ``configure_optimizers`` builds AdamW with parameter groups, a
``configurator.py`` that ``exec``s every ``sys.argv`` argument, and a ``train.py`` that
parses its configuration and trains as soon as it is imported.

``write_library_repo``: an sdist-shaped library whose classes all take required
arguments (x-transformers' shape).
"""

from __future__ import annotations

from pathlib import Path

MODEL = '''\
"""A tiny GPT: config dataclass, modules, model."""

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F


@dataclass
class GPTConfig:
    block_size: int = 64
    vocab_size: int = 50304
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln = nn.LayerNorm(config.n_embd)
        self.attn = nn.MultiheadAttention(
            config.n_embd, config.n_head, batch_first=True
        )
        self.mlp = nn.Sequential(
            nn.Linear(config.n_embd, 4 * config.n_embd),
            nn.GELU(),
            nn.Linear(4 * config.n_embd, config.n_embd),
        )

    def forward(self, x):
        t = x.size(1)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), 1)
        h = self.ln(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln(x))


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.blocks = nn.ModuleList([Block(config) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.wte.weight = self.lm_head.weight

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)  # (B, T, C)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))  # (B, T, vocab)
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        params = [p for p in self.parameters() if p.requires_grad]
        decay = [p for p in params if p.dim() >= 2]
        no_decay = [p for p in params if p.dim() < 2]
        groups = [
            {"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ]
        optimizer = torch.optim.AdamW(groups, lr={lr}, betas=betas)
        return optimizer
'''

CONFIGURATOR = """\
import sys
from ast import literal_eval

for arg in sys.argv[1:]:
    if "=" not in arg:
        assert not arg.startswith("--")
        config_file = arg
        print(f"Overriding config with {config_file}:")
        with open(config_file) as f:
            exec(f.read())
    else:
        assert arg.startswith("--")
        key, val = arg.split("=")
        key = key[2:]
        if key in globals():
            globals()[key] = literal_eval(val)
"""

TRAIN = '''\
"""Train the GPT: runs on import, as nanoGPT's train.py does."""

import numpy as np
import torch

from model import GPT, GPTConfig

batch_size = 8
block_size = 64
learning_rate = 6e-4
max_iters = 5000
exec(open("configurator.py").read())

data = np.zeros(100_000, dtype=np.int64)


def get_batch(split):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy(data[i : i + block_size]) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1 : i + 1 + block_size]) for i in ix])
    return x, y


model = GPT(GPTConfig(block_size=block_size))
optimizer = model.configure_optimizers(0.1, learning_rate, (0.9, 0.95), "cpu")
for it in range(max_iters):
    X, Y = get_batch("train")
    logits, loss = model(X, Y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
'''


def write_script_repo(
    root: Path, lr: str = "learning_rate", train: bool = True
) -> Path:
    """nanoGPT's shape at ``root``; ``lr`` is the expression configure_optimizers
    builds AdamW with. ``train=False``: no training script, only the model (init
    then writes mlsmoke_gate.py, its stand-in)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "model.py").write_text(MODEL.replace("{lr}", lr))
    (root / "configurator.py").write_text(CONFIGURATOR)
    if train:
        (root / "train.py").write_text(TRAIN)
    (root / "README.md").write_text("# tiny gpt\n\nTrain with `python train.py`.\n")
    return root


LIBRARY = '''\
"""Transformer building blocks."""

import torch
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, dim, mult, dropout):
        super().__init__()
        hidden = dim * mult
        self.net = nn.Sequential(
            nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim)
        )
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.net(x))


class TransformerWrapper(nn.Module):
    def __init__(self, *, num_tokens, max_seq_len, dim, depth):
        super().__init__()
        self.emb = nn.Embedding(num_tokens, dim)
        self.layers = nn.ModuleList([FeedForward(dim, 4, 0.0) for _ in range(depth)])
        self.out = nn.Linear(dim, num_tokens)

    def forward(self, x):
        x = self.emb(x)
        for layer in self.layers:
            x = x + layer(x)
        return self.out(x)


def make_batch(size, length, tokens):
    return torch.randint(0, tokens, (size, length))
'''


def write_library_repo(root: Path) -> Path:
    """x-transformers' shape at ``root``: a src-less package, required arguments."""
    package = root / "tiny_transformers"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(
        "from tiny_transformers.layers import FeedForward, TransformerWrapper\n"
    )
    (package / "layers.py").write_text(LIBRARY)
    (root / "setup.py").write_text(
        "from setuptools import find_packages, setup\n\n"
        'setup(name="tiny-transformers", packages=find_packages())\n'
    )
    return root


FINISHED_LIBRARY_GATE = '''\
"""The gate's factories."""

import torch

from tiny_transformers import TransformerWrapper


def model():
    """A tiny TransformerWrapper."""
    return TransformerWrapper(num_tokens=32, max_seq_len=8, dim=16, depth=1)


def batch():
    """Tokens and a code of each: the layers see one position at a time."""
    tokens = torch.randint(0, 32, (4, 8), generator=torch.Generator().manual_seed(0))
    return tokens, (7 * tokens + 3) % 32


def loss(model, batch):
    """Cross-entropy of the code at every position."""
    inputs, targets = batch
    logits = model(inputs)
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
'''


def finish_library_gate(root: Path) -> int:
    """What the user writes to finish the library's mlsmoke_gate.py (the factories
    and a loss in pyproject.toml); returns the number of lines they wrote."""
    (root / "mlsmoke_gate.py").write_text(FINISHED_LIBRARY_GATE)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'loss = "mlsmoke_gate:loss"\n')
    return len([line for line in FINISHED_LIBRARY_GATE.splitlines() if line]) + 1
