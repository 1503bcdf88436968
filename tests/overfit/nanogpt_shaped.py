"""A repository shaped like nanoGPT, written for real, for script mode's tests.

``train.py`` runs on import: module-level config, a configurator that ``exec``s its
arguments, ``get_batch`` over an ``np.memmap``, gradient accumulation over micro-steps,
``torch.autocast`` off the CPU, a ``GradScaler``, a warmup-then-cosine schedule set by
hand at every iteration, an ``estimate_loss`` at iteration 0, checkpoints to
``out_dir`` and a DDP branch keyed on ``RANK``. ``model.py`` is a small GPT with
dropout and ``configure_optimizers``. Each mistake a test commits is a ``Change``: one
text replaced in one file.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

MODEL = '''\
"""A small GPT: config dataclass, modules, model."""

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F


@dataclass
class GPTConfig:
    block_size: int = 64
    vocab_size: int = 128
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.dropout = config.dropout

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        y = F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.dropout if self.training else 0, is_causal=True
        )
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)  # (B, T, vocab)
        if targets is None:
            return logits, None
        loss = F.cross_entropy(
            logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1
        )
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        params = [p for p in self.parameters() if p.requires_grad]
        decay = [p for p in params if p.dim() >= 2]
        no_decay = [p for p in params if p.dim() < 2]
        groups = [
            {"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas)
'''

CONFIGURATOR = """\
import sys
from ast import literal_eval

for arg in sys.argv[1:]:
    if "=" not in arg:
        assert not arg.startswith("--")
        config_file = arg
        with open(config_file) as f:
            exec(f.read())
    else:
        assert arg.startswith("--")
        key, val = arg.split("=")
        key = key[2:]
        if key in globals():
            try:
                attempt = literal_eval(val)
            except (SyntaxError, ValueError):
                attempt = val
            assert type(attempt) == type(globals()[key])
            globals()[key] = attempt
        else:
            raise ValueError(f"Unknown config key: {key}")
"""

TRAIN = '''\
"""Train the GPT. Runs on import: python train.py --batch_size=32 --compile=False"""

import math
import os
import time
from contextlib import nullcontext

import numpy as np
import torch
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP

from model import GPT, GPTConfig

out_dir = "out"
eval_interval = 2000
eval_iters = 20
always_save_checkpoint = True
dataset = "chars"
gradient_accumulation_steps = 4
batch_size = 8
block_size = 32
n_layer = 4
n_head = 4
n_embd = 128
dropout = 0.0
learning_rate = 6e-4
max_iters = 5000
weight_decay = 1e-1
beta1 = 0.9
beta2 = 0.95
grad_clip = 1.0
decay_lr = True
warmup_iters = 2000
lr_decay_iters = 5000
min_lr = 6e-5
backend = "nccl"
device = "cuda"
dtype = "float16"
compile = True
exec(open("configurator.py").read())

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    init_process_group(backend=backend)
    ddp_local_rank = int(os.environ["LOCAL_RANK"])
    device = f"cuda:{ddp_local_rank}"
    torch.cuda.set_device(device)
    master_process = int(os.environ["RANK"]) == 0
    seed_offset = int(os.environ["RANK"])
else:
    master_process = True
    seed_offset = 0

if master_process:
    os.makedirs(out_dir, exist_ok=True)
torch.manual_seed(1337 + seed_offset)
device_type = "cuda" if "cuda" in device else "cpu"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16,
           "float16": torch.float16}[dtype]
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(
    device_type=device_type, dtype=ptdtype)

data_dir = os.path.join("data", dataset)


def get_batch(split):
    path = os.path.join(data_dir, f"{split}.bin")
    data = np.memmap(path, dtype=np.uint16, mode="r")
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy(
        (data[i:i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy(
        (data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
    return x.to(device), y.to(device)


iter_num = 0
best_val_loss = 1e9
model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd,
                  block_size=block_size, vocab_size=128, dropout=dropout)
model = GPT(GPTConfig(**model_args))
model.to(device)
scaler = torch.amp.GradScaler(device_type, enabled=(dtype == "float16"))
optimizer = model.configure_optimizers(
    weight_decay, learning_rate, (beta1, beta2), device_type)
if compile:
    model = torch.compile(model)
if ddp:
    model = DDP(model, device_ids=[ddp_local_rank])


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            with ctx:
                logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


X, Y = get_batch("train")
raw_model = model.module if ddp else model
while True:
    lr = get_lr(iter_num) if decay_lr else learning_rate
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    if iter_num % eval_interval == 0 and master_process:
        losses = estimate_loss()
        print(f"step {iter_num}: train {losses['train']:.4f} val {losses['val']:.4f}")
        if losses["val"] < best_val_loss or always_save_checkpoint:
            best_val_loss = losses["val"]
            if iter_num > 0:
                checkpoint = {"model": raw_model.state_dict()}
                torch.save(checkpoint, os.path.join(out_dir, "ckpt.pt"))
    for micro_step in range(gradient_accumulation_steps):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch("train")
        scaler.scale(loss).backward()
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    iter_num += 1
    if iter_num > max_iters:
        break

if ddp:
    destroy_process_group()
'''

# The command-line overrides that make a run small, on the CPU and free of side
# effects, as nanoGPT's configurator takes them.
GATE_ARGS = [
    "--device=cpu",
    "--compile=False",
    "--dtype=float32",
    "--n_layer=2",
    "--n_head=2",
    "--n_embd=32",
    "--block_size=16",
    "--batch_size=4",
    "--eval_iters=1",
    "--warmup_iters=10",
    "--out_dir={out_dir}",
]


class Change(NamedTuple):
    """One mistake (or legitimate edit): ``old`` replaced by ``new`` in ``file``."""

    file: str
    old: str
    new: str


LR_6E7 = Change("train.py", "learning_rate = 6e-4", "learning_rate = 6e-7")
UNSHIFTED_TARGETS = Change(
    "train.py", "data[i + 1:i + 1 + block_size]", "data[i:i + block_size]"
)
NO_CAUSAL_MASK = Change("model.py", "is_causal=True", "is_causal=False")
DETACHED_ATTENTION = Change(
    "model.py",
    "x = x + self.attn(self.ln_1(x))",
    "x = x + self.attn(self.ln_1(x)).detach()",
)
NO_ZERO_GRAD = Change("train.py", "    optimizer.zero_grad(set_to_none=True)\n", "")
DROPOUT = Change("train.py", "dropout = 0.0", "dropout = 0.1")
LOSS_ON_WRONG_AXIS = Change(
    "model.py",
    "logits.view(-1, logits.size(-1)), targets.view(-1)",
    "logits.transpose(0, 1).reshape(-1, logits.size(-1)), targets.view(-1)",
)


def write_nanogpt_repo(
    root: Path,
    *changes: Change,
    args: list[str] | None = None,
    configure: bool = True,
) -> Path:
    """The repository at ``root`` with ``changes`` made, and script mode configured
    (``configure=False``: no pyproject.toml, as before ``mlsmoke init``)."""
    root.mkdir(parents=True, exist_ok=True)
    files = {"model.py": MODEL, "configurator.py": CONFIGURATOR, "train.py": TRAIN}
    for change in changes:
        assert change.old in files[change.file], change
        files[change.file] = files[change.file].replace(change.old, change.new)
    for name, text in files.items():
        (root / name).write_text(text)
    data = root / "data" / "chars"
    data.mkdir(parents=True, exist_ok=True)
    tokens = np.random.default_rng(0).integers(0, 128, size=4096, dtype=np.uint16)
    tokens.tofile(data / "train.bin")
    tokens[::-1].copy().tofile(data / "val.bin")
    if not configure:
        return root
    arguments = ", ".join(f'"{arg}"' for arg in (GATE_ARGS if args is None else args))
    (root / "pyproject.toml").write_text(
        "[tool.mlsmoke.overfit]\n"
        'script = "train.py"\n'
        f"args = [{arguments}]\n"
        'pin = "train:get_batch"\n'
    )
    return root
