"""A repository shaped like makemore, written for real: ONE file, ``makemore.py``.

It holds several model classes (a causal Transformer, an MLP over the previous
characters, a Bigram table initialized at zero) chosen by ``--type``, a CharDataset of
words read from ``names.txt`` whose every sample opens with the start token 0 (x =
[0, w...], y = [w..., 0, -1...], -1 ignored by the loss), an argparse block under
``if __name__ == "__main__":``, an infinite loop over a sampler that draws with
replacement, broken at ``--max-steps``, and a checkpoint written to ``--work-dir``.
Every word's first letter follows the same start token: the batch's loss has a floor
no model gets under. Each mistake a test commits is a ``Change``.
"""

from __future__ import annotations

import random
from pathlib import Path

from nanogpt_shaped import Change

MAKEMORE = '''\
"""Give it words, one per line; it makes more."""

import argparse
import math
import os
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class ModelConfig:
    block_size: int = None
    vocab_size: int = None
    n_layer: int = 2
    n_embd: int = 32
    n_embd2: int = 32
    n_head: int = 2


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        size = config.block_size
        mask = torch.tril(torch.ones(size, size)).view(1, 1, size, size)
        self.register_buffer("bias", mask)
        self.n_head = config.n_head

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B,nh,T,hs)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        y = self.c_proj(y)
        return y


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = nn.ModuleDict(dict(
            c_fc=nn.Linear(config.n_embd, 4 * config.n_embd),
            c_proj=nn.Linear(4 * config.n_embd, config.n_embd),
        ))
        m = self.mlp
        self.mlpf = lambda x: m.c_proj(F.gelu(m.c_fc(x)))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlpf(self.ln_2(x))
        return x


class Transformer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.block_size = config.block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device).unsqueeze(0)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(
                logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1
            )
        return logits, loss


class MLP(nn.Module):
    """The previous block_size characters, embedded and concatenated."""

    def __init__(self, config):
        super().__init__()
        self.block_size = config.block_size
        self.vocab_size = config.vocab_size
        self.wte = nn.Embedding(config.vocab_size + 1, config.n_embd)
        self.mlp = nn.Sequential(
            nn.Linear(self.block_size * config.n_embd, config.n_embd2),
            nn.Tanh(),
            nn.Linear(config.n_embd2, self.vocab_size),
        )

    def forward(self, idx, targets=None):
        embs = []
        for _ in range(self.block_size):
            embs.append(self.wte(idx))
            idx = torch.roll(idx, 1, 1)
            idx[:, 0] = self.vocab_size  # a blank before the start
        logits = self.mlp(torch.cat(embs, -1))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(
                logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1
            )
        return logits, loss


class Bigram(nn.Module):
    def __init__(self, config):
        super().__init__()
        n = config.vocab_size
        self.logits = nn.Parameter(torch.zeros((n, n)))

    def forward(self, idx, targets=None):
        logits = self.logits[idx]
        loss = None
        if targets is not None:
            loss = F.cross_entropy(
                logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1
            )
        return logits, loss


class CharDataset(Dataset):
    def __init__(self, words, chars, max_word_length):
        self.words = words
        self.max_word_length = max_word_length
        self.stoi = {ch: i + 1 for i, ch in enumerate(chars)}

    def __len__(self):
        return len(self.words)

    def get_vocab_size(self):
        return len(self.stoi) + 1  # the characters and the start/stop token 0

    def get_output_length(self):
        return self.max_word_length + 1  # the start token, then the word

    def __getitem__(self, idx):
        word = self.words[idx]
        ix = torch.tensor([self.stoi[w] for w in word], dtype=torch.long)
        x = torch.zeros(self.max_word_length + 1, dtype=torch.long)
        y = torch.zeros(self.max_word_length + 1, dtype=torch.long)
        x[1:1 + len(ix)] = ix
        y[:len(ix)] = ix
        y[len(ix) + 1:] = -1  # no loss past the stop token
        return x, y


def create_datasets(input_file):
    with open(input_file) as f:
        words = [w.strip() for w in f.read().splitlines() if w.strip()]
    chars = sorted(set("".join(words)))
    return CharDataset(words, chars, max(len(w) for w in words))


class InfiniteDataLoader:
    def __init__(self, dataset, **kwargs):
        sampler = torch.utils.data.RandomSampler(
            dataset, replacement=True, num_samples=int(1e10)
        )
        self.train_loader = DataLoader(dataset, sampler=sampler, **kwargs)
        self.data_iter = iter(self.train_loader)

    def next(self):
        return next(self.data_iter)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Make More")
    parser.add_argument("--input-file", "-i", type=str, default="names.txt")
    parser.add_argument("--work-dir", "-o", type=str, default="out")
    parser.add_argument("--num-workers", "-n", type=int, default=4)
    parser.add_argument("--max-steps", type=int, default=-1)
    parser.add_argument("--device", type=str, default="cpu")
    parser.add_argument("--seed", type=int, default=3407)
    parser.add_argument("--type", type=str, default="transformer")
    parser.add_argument("--n-layer", type=int, default=2)
    parser.add_argument("--n-head", type=int, default=2)
    parser.add_argument("--n-embd", type=int, default=32)
    parser.add_argument("--n-embd2", type=int, default=32)
    parser.add_argument("--batch-size", "-b", type=int, default=32)
    parser.add_argument("--learning-rate", "-l", type=float, default=3e-3)
    parser.add_argument("--weight-decay", "-w", type=float, default=0.01)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    os.makedirs(args.work_dir, exist_ok=True)
    train_dataset = create_datasets(args.input_file)
    config = ModelConfig(
        vocab_size=train_dataset.get_vocab_size(),
        block_size=train_dataset.get_output_length(),
        n_layer=args.n_layer, n_head=args.n_head,
        n_embd=args.n_embd, n_embd2=args.n_embd2,
    )
    if args.type == "transformer":
        model = Transformer(config)
    elif args.type == "mlp":
        model = MLP(config)
    elif args.type == "bigram":
        model = Bigram(config)
    else:
        raise ValueError(f"model type {args.type} is not recognized")
    model.to(args.device)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay,
        betas=(0.9, 0.99), eps=1e-8,
    )
    batch_loader = InfiniteDataLoader(
        train_dataset, batch_size=args.batch_size, num_workers=args.num_workers
    )
    step = 0
    while True:
        batch = [t.to(args.device) for t in batch_loader.next()]
        X, Y = batch
        logits, loss = model(X, Y)
        model.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(f"step {step} | loss {loss.item():.4f}")
        if step > 0 and step % 500 == 0:
            torch.save(model.state_dict(), os.path.join(args.work_dir, "model.pt"))
        step += 1
        if args.max_steps >= 0 and step >= args.max_steps:
            break
'''

# What a user gives the gate: a small batch, no data workers, the gate's output dir.
GATE_ARGS = ["--work-dir={out_dir}", "--num-workers=0", "--batch-size=4"]

LR_DIVIDED = Change(
    "makemore.py",
    'parser.add_argument("--learning-rate", "-l", type=float, default=3e-3)',
    'parser.add_argument("--learning-rate", "-l", type=float, default=3e-6)',
)
NO_CAUSAL_MASK = Change(
    "makemore.py",
    '        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))\n',
    "",
)
DETACHED_ATTENTION = Change(
    "makemore.py",
    "        y = self.c_proj(y)\n        return y\n",
    "        y = self.c_proj(y)\n        return y.detach()\n",
)
# The Transformer's loss: the first of the file's cross_entropy calls.
FLIPPED_LOSS = Change(
    "makemore.py",
    "        logits = self.lm_head(self.transformer.ln_f(x))\n        loss = None\n"
    "        if targets is not None:\n            loss = F.cross_entropy(",
    "        logits = self.lm_head(self.transformer.ln_f(x))\n        loss = None\n"
    "        if targets is not None:\n            loss = -F.cross_entropy(",
)


def words(count: int = 64, seed: int = 0) -> list[str]:
    """Made-up names over a small alphabet, 3 to 6 letters long."""
    rng = random.Random(seed)
    return [
        "".join(rng.choice("abdeilmnorsu") for _ in range(rng.randint(3, 6)))
        for _ in range(count)
    ]


def write_makemore_repo(
    root: Path, *changes: Change, args: list[str] | None = None, configure: bool = True
) -> Path:
    """The repository at ``root`` with ``changes`` made, and script mode configured
    for ``makemore.py`` (``configure=False``: as before ``mlsmoke init``)."""
    root.mkdir(parents=True, exist_ok=True)
    text = MAKEMORE
    for change in changes:
        assert change.old in text, change
        text = text.replace(change.old, change.new)
    (root / "makemore.py").write_text(text)
    (root / "names.txt").write_text("\n".join(words()) + "\n")
    if configure:
        arguments = ", ".join(f'"{arg}"' for arg in (args or GATE_ARGS))
        (root / "pyproject.toml").write_text(
            "[tool.mlsmoke.overfit]\n"
            'script = "makemore.py"\n'
            f"args = [{arguments}]\n"
        )
    return root
