"""A pinned function called on several sources, named by its first argument
(``get_batch(train_data, i)``, ``get_batch(val_data, i)``): a source whose batches
are shaped otherwise (a validation set batched at another size, for a model whose
state is sized by the batch) gets its own first batch; a source shaped alike gets
the pinned one, as before; the gate trains on the batch fetched before its first
update."""

from __future__ import annotations

import torch
from script_mode_test import code, overfit, script_project

from mlsmoke.overfit.training.script_pin import PinnedBatch, pinned

WORD_MODEL = """\
import argparse
import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument('--lr', type=float, default=0.01)
parser.add_argument('--epochs', type=int, default=40)
args = parser.parse_args()
torch.manual_seed(0)

corpus = torch.randint(0, 12, (2000,))
def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data[:nbatch * bsz].view(bsz, -1).t().contiguous()

train_data = batchify(corpus[:1600], 4)
val_data = batchify(corpus[1600:], 10)
bptt = 8

def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].reshape(-1)
    return data, target

class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(12, 32)
        self.rnn = nn.LSTM(32, 32, 1)
        self.decoder = nn.Linear(32, 12)
    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        decoded = self.decoder(output).view(-1, 12)
        return torch.log_softmax(decoded, dim=1), hidden
    def init_hidden(self, bsz):
        return (torch.zeros(1, bsz, 32), torch.zeros(1, bsz, 32))

model = RNNModel()
criterion = nn.NLLLoss()
optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

def evaluate(source):
    model.eval()
    hidden = model.init_hidden(10)
    total = 0.0
    with torch.no_grad():
        for i in range(0, source.size(0) - 1, bptt):
            data, targets = get_batch(source, i)
            output, hidden = model(data, hidden)
            total += criterion(output, targets).item()
    return total

for epoch in range(args.epochs):
    model.train()
    hidden = model.init_hidden(4)
    for i in range(0, train_data.size(0) - 1, bptt):
        data, targets = get_batch(train_data, i)
        hidden = tuple(h.detach() for h in hidden)
        optimizer.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        optimizer.step()
    print('epoch', epoch, 'valid', evaluate(val_data))
"""


def test_a_validation_set_batched_otherwise_gets_its_own_batch(tmp_path):
    project = script_project(
        tmp_path, "main.py", WORD_MODEL, 'pin = "main:get_batch"\n'
    )
    ran, result = overfit(project)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert code(result) == "memorized", ran.stdout
    assert "shape" not in ran.stdout


def fetcher(calls: list) -> object:
    def get_batch(source, i=0):
        calls.append((source if isinstance(source, str) else "tensor", i))
        size = 10 if source == "wide" else 4
        return torch.full((size, 3), float(len(calls)))

    return get_batch


def test_sources_shaped_alike_share_the_pinned_batch_and_others_keep_their_own():
    calls: list = []
    pin = PinnedBatch()
    get_batch = pinned(fetcher(calls), pin)
    first = get_batch("train")
    assert torch.equal(get_batch("val"), first)  # alike: the pinned batch
    wide = get_batch("wide")
    assert wide.shape == (10, 3) and torch.equal(get_batch("wide", 5), wide)
    assert torch.equal(get_batch("train", 7), first)
    assert [source for source, _ in calls] == ["train", "val", "wide"]
    pin.lock()  # the first update: trained on the last batch fetched, train's
    get_batch("wide")
    assert torch.equal(pin.copy(), first)


def test_a_number_is_no_source_and_new_objects_past_the_limit_are_one():
    calls: list = []
    pin = PinnedBatch()
    get_batch = pinned(fetcher(calls), pin)
    first = get_batch(0)
    assert all(torch.equal(get_batch(step), first) for step in range(1, 20))
    for _ in range(10):  # a new object at every call: pinned all the same
        assert torch.equal(get_batch(torch.zeros(1)), first)
    assert len(calls) <= 5
