"""Training steps as projects write them, correct and with the classic loop bugs, for
the gate's ``step`` key. Imports nothing but torch: the end-to-end tests copy it."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class DropoutMLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(16, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 4)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)  # (B, 4)


def build() -> DropoutMLP:
    return DropoutMLP()


def build_in_eval_mode() -> DropoutMLP:
    return DropoutMLP().eval()  # as from_pretrained returns a model


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    return torch.randn(16, 16, generator=generator), torch.arange(16) % 4


def loss(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    x, y = batch
    return F.cross_entropy(model(x), y)


def adam_with_step_lr(params) -> tuple[torch.optim.Optimizer, object]:
    optimizer = torch.optim.Adam(params, lr=5e-3)
    return optimizer, torch.optim.lr_scheduler.StepLR(optimizer, 100, gamma=0.9)


# --- correct steps ------------------------------------------------------------------


def train_step(model, batch, optimizer):
    model.train()
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss


def train_step_with_scheduler(model, optimizer, batch, scheduler):
    model.train()
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    return {"loss": loss.item(), "lr": scheduler.get_last_lr()[0]}


def train_step_x_y(model, x, y, optimizer, step, device="cpu"):
    model.train()
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x.to(device)), y.to(device))
    loss.backward()
    optimizer.step()
    return loss.item()


def train_step_clipped(model, batch, optimizer):
    model.train()
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    return loss


SCALER = torch.amp.GradScaler("cpu")


def train_step_amp(model, batch, optimizer):
    model.train()
    x, y = batch
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(x).float(), y)
    optimizer.zero_grad()
    SCALER.scale(loss).backward()
    SCALER.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    SCALER.step(optimizer)
    SCALER.update()
    return loss


MICRO_BATCHES = 4


def train_step_accumulating(model, batch, optimizer):
    """Four micro-batches per update, each loss divided by four."""
    model.train()
    x, y = batch
    optimizer.zero_grad()
    total = 0.0
    for xs, ys in zip(x.chunk(MICRO_BATCHES), y.chunk(MICRO_BATCHES)):
        loss = F.cross_entropy(model(xs), ys) / MICRO_BATCHES
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total


def train_step_every_second_call(model, batch, optimizer, step):
    """One backward per call, one update per two calls (accumulate = 2)."""
    model.train()
    x, y = batch
    loss = F.cross_entropy(model(x), y) / 2
    loss.backward()
    if (step + 1) % 2 == 0:
        optimizer.step()
        optimizer.zero_grad()
    return loss * 2


# --- the classic bugs -----------------------------------------------------------


def forgot_zero_grad(model, batch, optimizer):
    model.train()
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def backward_under_no_grad(model, batch, optimizer):
    model.train()
    x, y = batch
    with torch.no_grad():
        loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


def backward_on_item(model, batch, optimizer):
    model.train()
    x, y = batch
    loss = F.cross_entropy(model(x), y).item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


def never_calls_train(model, batch, optimizer):
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


def scheduler_first(model, batch, optimizer, scheduler):
    model.train()
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    scheduler.step()
    optimizer.step()
    return loss


_stale = DropoutMLP()
STALE_OPTIMIZER = torch.optim.Adam(_stale.parameters(), lr=5e-3)


def optimizer_over_a_stale_model(model, batch):
    """The optimizer was built before the model was re-created."""
    model.train()
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    STALE_OPTIMIZER.zero_grad()
    loss.backward()
    STALE_OPTIMIZER.step()
    return loss


def zero_grad_after_backward(model, batch, optimizer):
    model.train()
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss


def undivided_accumulation(model, batch, optimizer):
    model.train()
    x, y = batch
    optimizer.zero_grad()
    for xs, ys in zip(x.chunk(MICRO_BATCHES), y.chunk(MICRO_BATCHES)):
        loss = F.cross_entropy(model(xs), ys)
        loss.backward()
    optimizer.step()
    return loss


def clips_after_the_step(model, batch, optimizer):
    model.train()
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    return loss


def never_calls_backward(model, batch, optimizer):
    model.train()
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    optimizer.step()
    return loss


def clips_after_the_step_then_drops_the_gradients(model, batch, optimizer):
    model.train()
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.zero_grad(set_to_none=True)
    return loss


def clips_after_the_step_then_zeroes_the_gradients(model, batch, optimizer):
    model.train()
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    torch.nn.utils.clip_grad_value_(model.parameters(), 0.1)
    optimizer.zero_grad(set_to_none=False)
    return loss


def replaces_the_head_after_the_optimizer(model, batch, optimizer):
    """A new head for a new label set, assigned after the optimizer was built."""
    if not getattr(model, "head_replaced", False):
        model.net[3] = nn.Linear(64, 4)
        model.head_replaced = True
    return train_step(model, batch, optimizer)


def steps_before_backward(model, batch, optimizer):
    model.train()
    x, y = batch
    loss = F.cross_entropy(model(x), y)
    optimizer.step()
    optimizer.zero_grad()
    loss.backward()
    return loss


# --- bad input ---------------------------------------------------------------------


def takes_a_criterion(model, batch, optimizer, criterion):
    return criterion(model(batch[0]), batch[1])


def returns_nothing(model, batch, optimizer):
    train_step(model, batch, optimizer)


def unpacks_wrongly(model, batch, optimizer):
    x, y, weights = batch
    return F.cross_entropy(model(x), y)
