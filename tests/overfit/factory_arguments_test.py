"""A model, batch or loss callable that cannot be called as the gate calls it (it
needs arguments) is a config error, exit 2, naming the key and its signature; a
TypeError raised inside the callable's own code stays the project's error."""

from __future__ import annotations

import sys

import torch
from torch import nn
from torch.nn import functional as F

from mlsmoke.overfit.gate import run_gate
from mlsmoke.overfit.process.main import main
from mlsmoke.overfit.process.settings import GateSettings

MODULE = """
import torch
from torch import nn
from torch.nn import functional as F


class MLP(nn.Module):
    def __init__(self, in_features, hidden, classes):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(),
                                 nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x)


def batch():
    return torch.randn(8, 4), torch.arange(8) % 2


def loss(model, batch):
    inputs, labels = batch
    return F.cross_entropy(model(inputs), labels)
"""


def test_a_model_class_that_takes_arguments_is_a_config_error_exit_2(
    tmp_path, monkeypatch, capsys
):
    (tmp_path / "models.py").write_text(MODULE)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mlsmoke.overfit]\nmodel = "models:MLP"\nbatch = "models:batch"\n'
        'loss = "models:loss"\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLSMOKE_PYTHON", sys.executable)
    assert main(["--no-cache"]) == 2
    out = capsys.readouterr().out
    assert "config-error" in out and "train-error" not in out
    assert "tool.mlsmoke.overfit.model" in out
    assert "MLP(in_features, hidden, classes)" in out
    assert "missing a required argument: 'in_features'" in out


class MLP(nn.Module):
    def __init__(self, in_features: int = 4, classes: int = 2) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, 32), nn.ReLU(), nn.Linear(32, classes)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(8, 4), torch.arange(8) % 2


def loss(model: nn.Module, batch: tuple) -> torch.Tensor:
    inputs, labels = batch
    return F.cross_entropy(model(inputs), labels)


def gate(**factories):
    settings = GateSettings(name="default", model="m:model", batch="m:batch")
    return run_gate(settings, factories={"model": MLP, "batch": batch, **factories})[0]


def test_a_batch_or_loss_callable_that_needs_more_arguments_is_a_config_error():
    def batch_of(size: int) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.randn(size, 4), torch.arange(size) % 2

    def weighted_loss(model: nn.Module, batch: tuple, weight: float) -> torch.Tensor:
        return weight * loss(model, batch)

    result = gate(batch=batch_of)
    assert result.diagnosis.code == "config-error" and result.exit_code == 2
    assert result.diagnosis.summary.startswith("tool.mlsmoke.overfit.batch:")
    assert "batch_of(size) cannot be called" in result.diagnosis.summary
    result = gate(loss=weighted_loss)
    assert result.diagnosis.code == "config-error" and result.exit_code == 2
    assert "tool.mlsmoke.overfit.loss:" in result.diagnosis.summary
    assert "weighted_loss(model, batch, weight)" in result.diagnosis.summary
    assert (
        "as the gate calls it, weighted_loss(model, batch)" in result.diagnosis.summary
    )


def test_callables_with_defaults_or_varargs_are_called():
    def batch_with_defaults(size: int = 8, *rest: int, **options: int) -> tuple:
        return batch()

    assert gate(batch=batch_with_defaults, loss=loss).passed


def test_a_type_error_inside_the_callables_own_code_stays_the_projects():
    def model() -> nn.Module:
        return MLP(4, 2, 7)  # the project's own call is wrong: too many arguments

    result = gate(model=model, loss=loss)
    assert result.diagnosis.code != "config-error", result.report()
    assert result.exit_code == 1
    assert "TypeError" in result.report()
