"""The LightningModule adapter does what Lightning's fit loop does between the loader
and ``loss.backward()`` and around ``optimizer.step()``: each module below memorizes
under ``Trainer(overfit_batches=1)``, and so must it under the gate, with no glue.
What needs a running Trainer is a config error, not a training failure."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import lightning_project as project
from mlsmoke.overfit import check

LR_SCHEDULER = torch.optim.lr_scheduler


def _check(model, batch=project.train_loader, **options):
    return check(model, batch, device="cpu", **options)


class _StepWithoutIndex(project.Classifier):
    def training_step(self, batch):  # Lightning 2 passes batch_idx only if asked
        inputs, labels = batch
        return F.cross_entropy(self(inputs), labels)


class _BytesToFloatHook(project.Classifier):
    def on_after_batch_transfer(self, batch, dataloader_idx):
        inputs, labels = batch
        return inputs.float() / 255, labels


def _byte_loader():
    inputs, labels = project.dataset().tensors
    pixels = ((inputs - inputs.min()) / (inputs.max() - inputs.min()) * 255).byte()
    return DataLoader(TensorDataset(pixels, labels), batch_size=project.BATCH)


class _LayersInConfigureModel(project.Classifier):
    def __init__(self):
        super().__init__()
        self.net = None

    def configure_model(self):
        if self.net is None:
            features, classes = project.FEATURES, project.CLASSES
            self.net = nn.Sequential(
                nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, classes)
            )


class _NeedsItsEpoch:
    """A scheduler whose step() takes the epoch, as timm's do."""

    def __init__(self, optimizer):
        self.optimizer, self.epochs = optimizer, []

    def step(self, epoch):
        self.epochs.append(epoch)


class _SchedulerStepHook(project.Classifier):
    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=3e-3)
        return {"optimizer": optimizer, "lr_scheduler": _NeedsItsEpoch(optimizer)}

    def lr_scheduler_step(self, scheduler, metric):
        scheduler.step(epoch=self.current_epoch)


class _PlateauOnAccuracy(project.Classifier):
    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=3e-3)
        plateau = LR_SCHEDULER.ReduceLROnPlateau(optimizer, mode="max", patience=0)
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": plateau, "monitor": "val_acc"},
        }


class _WarmupThenCosine(project.Classifier):
    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)
        warmup = LR_SCHEDULER.LinearLR(optimizer, start_factor=0.01, total_iters=10)
        cosine = LR_SCHEDULER.CosineAnnealingLR(optimizer, T_max=1000)
        schedule = LR_SCHEDULER.SequentialLR(optimizer, [warmup, cosine], [10])
        return [optimizer], [schedule]


@pytest.mark.parametrize(
    ("model", "batch", "note"),
    [
        (_StepWithoutIndex, project.train_loader, "training_step(batch)"),
        (_BytesToFloatHook, _byte_loader, "training_step(batch, 0)"),
        (_LayersInConfigureModel, project.train_loader, "training_step(batch, 0)"),
        (_PlateauOnAccuracy, project.train_loader, "training_step(batch, 0)"),
        (_WarmupThenCosine, project.train_loader, "training_step(batch, 0)"),
    ],
    ids=["no-batch-idx", "batch-hook", "configure-model", "plateau-max", "sequential"],
)
def test_a_module_lightning_trains_memorizes_under_the_gate(model, batch, note):
    result = _check(model, batch)
    assert result.passed, result.report()
    assert f"loss: {model.__name__}.{note}" in result.notes


def test_schedulers_step_through_the_modules_lr_scheduler_step():
    result = _check(_SchedulerStepHook, max_steps=3, target_loss=0.0)
    assert result.diagnosis.code != "train-error", result.report()
    assert result.steps == 3


def test_a_lr_typed_1000x_too_low_is_found_through_a_nested_schedule():
    def typed_3e_6():
        return _WarmupThenCosine(lr=3e-6)

    result = _check(typed_3e_6)
    assert result.diagnosis.code == "lr-too-low", result.report()
    assert "at lr 0.003 the batch is memorized" in result.diagnosis.summary


def test_an_lr_key_replaces_the_rate_of_every_nested_scheduler():
    result = _check(lambda: _WarmupThenCosine(lr=3e-6), lr=3e-3)
    assert result.passed, result.report()


class _LogsItsScheduler(project.Classifier):
    def training_step(self, batch, batch_idx):
        self.log("lr", self.lr_schedulers().get_last_lr()[0])
        return super().training_step(batch, batch_idx)


def test_a_training_step_that_needs_a_trainer_is_a_config_error_on_loss():
    result = _check(_LogsItsScheduler, max_steps=5)
    assert (result.verdict, result.exit_code) == ("error", 2), result.report()
    summary = result.diagnosis.summary
    assert summary.startswith("check() argument loss: _LogsItsScheduler.training_step")
    assert "needs a running Trainer" in summary


class _BadWarmup(project.Classifier):
    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=3e-3)
        return [optimizer], [LR_SCHEDULER.LinearLR(optimizer, start_factor=0)]


def test_configure_optimizers_raising_names_the_error_and_where_not_the_trainer():
    result = _check(_BadWarmup, max_steps=5)
    summary = result.diagnosis.summary
    assert summary.startswith("check() argument optimizer: _BadWarmup.configure_")
    assert "lr_scheduler.py:" in summary and "Trainer" not in summary


class _ScheduleShorterThanTheGate(project.Classifier):
    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=3e-3)
        cycle = LR_SCHEDULER.OneCycleLR(optimizer, max_lr=3e-3, total_steps=10)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": cycle}}


def test_a_scheduler_that_raises_is_named_as_the_lr_scheduler_step():
    result = _check(_ScheduleShorterThanTheGate)
    assert result.diagnosis.code == "train-error"
    assert result.diagnosis.summary.startswith("the lr scheduler step raised")
    line = _ScheduleShorterThanTheGate.configure_optimizers.__code__.co_firstlineno + 1
    assert result.recipe == (
        "AdamW lr 0.003 + OneCycleLR (from configure_optimizers at"
        f" tests/overfit/fit_loop_test.py:{line})"
    )


def test_a_floor_from_a_strong_weight_decay_names_it():
    def decay_10(params):
        return torch.optim.AdamW(params, lr=3e-3, weight_decay=10)

    result = _check(project.PlainClassifier, optimizer=decay_10)
    assert result.diagnosis.code == "not-learning", result.report()
    assert any("weight_decay 10" in line for line in result.diagnosis.evidence)
    assert result.diagnosis.suggestions[0].startswith("lower weight_decay")
