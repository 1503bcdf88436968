"""A repository shaped like a lecture's character-level language models, written for
real: ``bigram.py`` and ``gpt.py``, each a script that runs on import.

Each holds its hyperparameters as module-level assignments (no argparse, no
configurator), reads ``input.txt``, draws ``get_batch(split)`` at random offsets,
prints ``estimate_loss()`` every ``eval_interval`` steps, and trains in a
``for iter in range(max_iters)`` loop before it samples text. Its models return
their logits flattened over samples and positions, ``(B*T, C)``, when given
targets, as ``logits.view(B*T, C)`` before ``F.cross_entropy`` makes them. The
bigram reads one token at any position; the GPT reads the prefix through a
``tril`` mask (sizes here small enough for a CPU). Each mistake a test commits is a
``Change``.
"""

from __future__ import annotations

import random
from pathlib import Path

from nanogpt_shaped import Change

DATA_AND_LOOP = """\
torch.manual_seed(1337)

with open('input.txt', 'r', encoding='utf-8') as f:
    text = f.read()

chars = sorted(list(set(text)))
vocab_size = len(chars)
stoi = { ch:i for i,ch in enumerate(chars) }
itos = { i:ch for i,ch in enumerate(chars) }
encode = lambda s: [stoi[c] for c in s]
decode = lambda l: ''.join([itos[i] for i in l])

data = torch.tensor(encode(text), dtype=torch.long)
n = int(0.9*len(data))
train_data = data[:n]
val_data = data[n:]

def get_batch(split):
    data = train_data if split == 'train' else val_data
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i+block_size] for i in ix])
    y = torch.stack([data[i+1:i+block_size+1] for i in ix])
    x, y = x.to(device), y.to(device)
    return x, y

@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ['train', 'val']:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out
"""

FLATTENED_LOSS = """\
        if targets is None:
            loss = None
        else:
            B, T, C = logits.shape
            logits = logits.view(B*T, C)
            targets = targets.view(B*T)
            loss = F.cross_entropy(logits, targets)
        return logits, loss
"""

TRAIN_AND_SAMPLE = """\
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)

for iter in range(max_iters):
    if iter % eval_interval == 0:
        losses = estimate_loss()
        print(f"step {iter}: train loss {losses['train']:.4f}, "
              f"val loss {losses['val']:.4f}")
    xb, yb = get_batch('train')
    logits, loss = model(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()

context = torch.zeros((1, 1), dtype=torch.long, device=device)
print(decode(m.generate(context, max_new_tokens=50)[0].tolist()))
"""

HEADER = """\
import torch
import torch.nn as nn
from torch.nn import functional as F

"""

BIGRAM = (
    HEADER
    + """\
# hyperparameters
batch_size = 32
block_size = 8
max_iters = 3000
eval_interval = 300
learning_rate = 1e-2
device = 'cuda' if torch.cuda.is_available() else 'cpu'
eval_iters = 20
# ------------

"""
    + DATA_AND_LOOP
    + """
class BigramLanguageModel(nn.Module):

    def __init__(self, vocab_size):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

    def forward(self, idx, targets=None):
        logits = self.token_embedding_table(idx) # (B,T,C)
"""
    + FLATTENED_LOSS
    + """
    def generate(self, idx, max_new_tokens):
        for _ in range(max_new_tokens):
            logits, loss = self(idx)
            probs = F.softmax(logits[:, -1, :], dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
        return idx

model = BigramLanguageModel(vocab_size)
m = model.to(device)
"""
    + TRAIN_AND_SAMPLE
)

# The GPT's sizes here: a CPU trains it in seconds.
GPT_SIZES = """\
batch_size = 16
block_size = 16
max_iters = 5000
eval_interval = 500
learning_rate = 1e-3
device = 'cuda' if torch.cuda.is_available() else 'cpu'
eval_iters = 20
n_embd = 32
n_head = 2
n_layer = 2
dropout = 0.0
"""

GPT = (
    HEADER
    + "# hyperparameters\n"
    + GPT_SIZES
    + "# ------------\n\n"
    + DATA_AND_LOOP
    + """
class Head(nn.Module):
    \"\"\" one head of self-attention \"\"\"

    def __init__(self, head_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer('tril', torch.tril(torch.ones(block_size, block_size)))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        B,T,C = x.shape
        k = self.key(x)
        q = self.query(x)
        wei = q @ k.transpose(-2,-1) * k.shape[-1]**-0.5
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))
        wei = F.softmax(wei, dim=-1)
        wei = self.dropout(wei)
        v = self.value(x)
        return wei @ v

class MultiHeadAttention(nn.Module):

    def __init__(self, num_heads, head_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
        self.proj = nn.Linear(head_size * num_heads, n_embd)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        return self.dropout(self.proj(out))

class FeedFoward(nn.Module):

    def __init__(self, n_embd):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd),
            nn.ReLU(),
            nn.Linear(4 * n_embd, n_embd),
            nn.Dropout(dropout),
        )

    def forward(self, x):
        return self.net(x)

class Block(nn.Module):

    def __init__(self, n_embd, n_head):
        super().__init__()
        head_size = n_embd // n_head
        self.sa = MultiHeadAttention(n_head, head_size)
        self.ffwd = FeedFoward(n_embd)
        self.ln1 = nn.LayerNorm(n_embd)
        self.ln2 = nn.LayerNorm(n_embd)

    def forward(self, x):
        x = x + self.sa(self.ln1(x))
        x = x + self.ffwd(self.ln2(x))
        return x

class GPTLanguageModel(nn.Module):

    def __init__(self):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
        self.position_embedding_table = nn.Embedding(block_size, n_embd)
        self.blocks = nn.Sequential(*[Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        tok_emb = self.token_embedding_table(idx)
        pos_emb = self.position_embedding_table(torch.arange(T, device=device))
        x = self.blocks(tok_emb + pos_emb)
        logits = self.lm_head(self.ln_f(x))
"""
    + FLATTENED_LOSS
    + """
    def generate(self, idx, max_new_tokens):
        for _ in range(max_new_tokens):
            logits, loss = self(idx[:, -block_size:])
            probs = F.softmax(logits[:, -1, :], dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
        return idx

model = GPTLanguageModel()
m = model.to(device)
"""
    + TRAIN_AND_SAMPLE
)

LR_DIVIDED = Change("bigram.py", "learning_rate = 1e-2", "learning_rate = 1e-5")
# gpt.py as the lecture sizes it: a 10.8M-parameter model, minutes per step on a CPU
LECTURE_SIZES = Change(
    "gpt.py",
    GPT_SIZES,
    """batch_size = 64
block_size = 256
max_iters = 5000
eval_interval = 500
learning_rate = 3e-4
device = 'cuda' if torch.cuda.is_available() else 'cpu'
eval_iters = 200
n_embd = 384
n_head = 6
n_layer = 6
dropout = 0.2
""",
)
GPT_LR_DIVIDED = Change("gpt.py", "learning_rate = 3e-4", "learning_rate = 3e-7")
NO_TRIL_MASK = Change(
    "gpt.py",
    "        wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))\n",
    "",
)


def text(count: int = 400, seed: int = 0) -> str:
    """Made-up lines of words over a small alphabet."""
    rng = random.Random(seed)
    words = [
        "".join(rng.choice("abdeilmnorsu") for _ in range(rng.randint(2, 6)))
        for _ in range(count)
    ]
    return "\n".join(" ".join(words[i : i + 8]) for i in range(0, count, 8)) + "\n"


def write_lecture_repo(
    root: Path, script: str, *changes: Change, extra: str = "", configure: bool = True
) -> Path:
    """The repository at ``root`` with ``changes`` made, and script mode configured
    for ``script`` (``bigram.py`` or ``gpt.py``), its batches pinned at get_batch
    (``configure=False``: as before ``mlsmoke init``; ``script`` alone is written)."""
    root.mkdir(parents=True, exist_ok=True)
    sources = {"bigram.py": BIGRAM, "gpt.py": GPT}
    for change in changes:
        assert change.old in sources[change.file], change
        sources[change.file] = sources[change.file].replace(change.old, change.new)
    for name, source in sources.items():
        if configure or name == script:
            (root / name).write_text(source)
    (root / "input.txt").write_text(text())
    if not configure:
        return root
    module = script.removesuffix(".py")
    (root / "pyproject.toml").write_text(
        "[tool.mlsmoke.overfit]\n"
        f'script = "{script}"\n'
        f'pin = "{module}:get_batch"\n' + extra
    )
    return root
