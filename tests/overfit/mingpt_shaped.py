"""A repository shaped like minGPT, written for real: a library package and project
scripts that train through it.

``tinygpt/`` is the library: ``utils.py`` with a ``CfgNode`` config whose
``merge_from_args`` takes ``--section.key=value``, ``model.py`` with a GPT built from
``GPT.get_default_config()`` (an activation class without parameters, attention with
dropout, ``configure_optimizers(train_config)``, a loss that ignores targets of -1),
and ``trainer.py`` with a ``Trainer`` whose ``run()`` holds the loop and calls
callbacks. ``projects/adder/adder.py`` builds an addition data set (targets masked
with -1 outside the answer), the model and a Trainer under ``if __name__ ==
"__main__"``: the script holds no optimizer and no loop of its own. Each mistake a
test commits is a ``Change`` (:mod:`nanogpt_shaped`).
"""

from __future__ import annotations

from pathlib import Path

from nanogpt_shaped import Change

UTILS = '''\
import random
from ast import literal_eval

import torch


def set_seed(seed):
    random.seed(seed)
    torch.manual_seed(seed)


class CfgNode:
    """A config of attributes, nested, overridden by --section.key=value."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def merge_from_args(self, args):
        for arg in args:
            keyval = arg.split("=")
            assert len(keyval) == 2, "expecting --arg=value, got %s" % arg
            key, val = keyval
            try:
                val = literal_eval(val)
            except ValueError:
                pass
            keys = key[2:].split(".")
            obj = self
            for k in keys[:-1]:
                obj = getattr(obj, k)
            assert hasattr(obj, keys[-1]), f"{key} is not an attribute"
            setattr(obj, keys[-1], val)
'''

MODEL = """\
import math

import torch
import torch.nn as nn
from torch.nn import functional as F

from tinygpt.utils import CfgNode as CN


class NewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * x))


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.attn_dropout = nn.Dropout(config.attn_pdrop)
        self.resid_dropout = nn.Dropout(config.resid_pdrop)
        mask = torch.tril(torch.ones(config.block_size, config.block_size))
        size = config.block_size
        self.register_buffer("bias", mask.view(1, 1, size, size))
        self.n_head = config.n_head

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        hs = C // self.n_head
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        y = self.resid_dropout(self.c_proj(y))
        return y


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)
        self.act = NewGELU()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.c_proj(self.act(self.c_fc(self.ln_2(x))))
        return x


class GPT(nn.Module):
    @staticmethod
    def get_default_config():
        C = CN()
        C.n_layer = 1
        C.n_head = 2
        C.n_embd = 32
        C.vocab_size = None
        C.block_size = None
        C.embd_pdrop = 0.1
        C.resid_pdrop = 0.1
        C.attn_pdrop = 0.1
        return C

    def __init__(self, config):
        super().__init__()
        self.block_size = config.block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.embd_pdrop),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def configure_optimizers(self, train_config):
        decay = [p for p in self.parameters() if p.dim() >= 2]
        no_decay = [p for p in self.parameters() if p.dim() < 2]
        groups = [
            {"params": decay, "weight_decay": train_config.weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(
            groups, lr=train_config.learning_rate, betas=train_config.betas
        )

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device).unsqueeze(0)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(
                logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1
            )
        return logits, loss
"""

TRAINER = """\
import time
from collections import defaultdict

import torch
from torch.utils.data.dataloader import DataLoader

from tinygpt.utils import CfgNode as CN


class Trainer:
    @staticmethod
    def get_default_config():
        C = CN()
        C.device = "cpu"
        C.num_workers = 0
        C.max_iters = None
        C.batch_size = 16
        C.learning_rate = 3e-4
        C.betas = (0.9, 0.95)
        C.weight_decay = 0.1
        C.grad_norm_clip = 1.0
        return C

    def __init__(self, config, model, train_dataset):
        self.config = config
        self.model = model
        self.train_dataset = train_dataset
        self.callbacks = defaultdict(list)
        self.iter_num = 0

    def set_callback(self, onevent, callback):
        self.callbacks[onevent] = [callback]

    def trigger_callbacks(self, onevent):
        for callback in self.callbacks.get(onevent, []):
            callback(self)

    def run(self):
        model, config = self.model, self.config
        self.optimizer = model.configure_optimizers(config)
        sampler = torch.utils.data.RandomSampler(
            self.train_dataset, replacement=True, num_samples=int(1e10)
        )
        train_loader = DataLoader(
            self.train_dataset,
            sampler=sampler,
            batch_size=config.batch_size,
            num_workers=config.num_workers,
        )
        model.train()
        data_iter = iter(train_loader)
        while True:
            x, y = next(data_iter)
            logits, self.loss = model(x, y)
            model.zero_grad(set_to_none=True)
            self.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_norm_clip)
            self.optimizer.step()
            self.trigger_callbacks("on_batch_end")
            self.iter_num += 1
            if config.max_iters is not None and self.iter_num >= config.max_iters:
                break
"""

ADDER = '''\
"""Trains a GPT to add n-digit numbers."""

import os
import sys

import torch
from torch.utils.data import Dataset

from tinygpt.model import GPT
from tinygpt.trainer import Trainer
from tinygpt.utils import CfgNode as CN
from tinygpt.utils import set_seed


def get_config():
    C = CN()
    C.system = CN()
    C.system.seed = 3407
    C.system.work_dir = "./out/adder"
    C.data = CN(ndigit=2)
    C.model = GPT.get_default_config()
    C.trainer = Trainer.get_default_config()
    C.trainer.learning_rate = 5e-3
    return C


class AdditionDataset(Dataset):
    def __init__(self, config, split):
        self.ndigit = config.ndigit
        num = (10**self.ndigit) ** 2
        perm = torch.randperm(num, generator=torch.Generator().manual_seed(1337))
        num_test = min(int(num * 0.2), 500)
        self.ixes = perm[:num_test] if split == "test" else perm[num_test:]

    def get_vocab_size(self):
        return 10

    def get_block_size(self):
        return 3 * self.ndigit

    def __len__(self):
        return self.ixes.nelement()

    def __getitem__(self, idx):
        nd = 10**self.ndigit
        idx = self.ixes[idx].item()
        a, b = idx // nd, idx % nd
        render = f"%0{self.ndigit}d" % a + f"%0{self.ndigit}d" % b
        render += (f"%0{self.ndigit + 1}d" % (a + b))[::-1]
        dix = [int(s) for s in render]
        x = torch.tensor(dix[:-1], dtype=torch.long)
        y = torch.tensor(dix[1:], dtype=torch.long)  # predict the next token
        y[: self.ndigit * 2 - 1] = -1  # only the answer's digits are trained
        return x, y


if __name__ == "__main__":
    config = get_config()
    config.merge_from_args(sys.argv[1:])
    os.makedirs(config.system.work_dir, exist_ok=True)
    with open(os.path.join(config.system.work_dir, "args.txt"), "w") as f:
        f.write(" ".join(sys.argv[1:]))
    set_seed(config.system.seed)
    train_dataset = AdditionDataset(config.data, split="train")
    config.model.vocab_size = train_dataset.get_vocab_size()
    config.model.block_size = train_dataset.get_block_size()
    model = GPT(config.model)
    trainer = Trainer(config.trainer, model, train_dataset)

    def batch_end_callback(trainer):
        if trainer.iter_num % 100 == 0:
            print(f"iter {trainer.iter_num}: train loss {trainer.loss.item():.5f}")

    trainer.set_callback("on_batch_end", batch_end_callback)
    trainer.run()
'''

# The overrides a user writes for the gate, as the CfgNode takes them (a quoted path:
# literal_eval reads a bare one as code).
GATE_ARGS = ["--system.work_dir='{out_dir}'"]

LR_TOO_LOW = Change(
    "projects/adder/adder.py",
    "C.trainer.learning_rate = 5e-3",
    "C.trainer.learning_rate = 5e-6",
)
UNSHIFTED_TARGETS = Change(
    "projects/adder/adder.py",
    "y = torch.tensor(dix[1:], dtype=torch.long)",
    "y = torch.tensor(dix[:-1], dtype=torch.long)",
)
DETACHED_ATTENTION = Change(
    "tinygpt/model.py", "        return y\n", "        return y.detach()\n"
)
FLIPPED_LOSS = Change(
    "tinygpt/model.py", "loss = F.cross_entropy(", "loss = -F.cross_entropy("
)


def write_mingpt_repo(
    root: Path, *changes: Change, args: list[str] | None = None, configure: bool = True
) -> Path:
    """The repository at ``root`` with ``changes`` made, and script mode configured
    for ``projects/adder/adder.py`` (``configure=False``: as before ``mlsmoke init``).
    """
    files = {
        "tinygpt/__init__.py": "",
        "tinygpt/utils.py": UTILS,
        "tinygpt/model.py": MODEL,
        "tinygpt/trainer.py": TRAINER,
        "projects/adder/adder.py": ADDER,
    }
    for change in changes:
        assert change.old in files[change.file], change
        files[change.file] = files[change.file].replace(change.old, change.new)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    if configure:
        chosen = GATE_ARGS if args is None else args
        arguments = ", ".join(f'"{arg}"' for arg in chosen)
        (root / "pyproject.toml").write_text(
            "[tool.mlsmoke.overfit]\n"
            'script = "projects/adder/adder.py"\n'
            f"args = [{arguments}]\n"
        )
    return root
