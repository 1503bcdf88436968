"""The adapters on real torch and Lightning objects: configure_optimizers' forms, the
first batch of loaders, iterables and data modules, and the worker processes a draw
leaves (none)."""

from __future__ import annotations

import multiprocessing

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import lightning_project as project
from mlsmoke.overfit import check
from mlsmoke.overfit.training.adapters import batches, configure_optimizers
from mlsmoke.overfit.training.adapters.lightning_module import step_loss
from mlsmoke.overfit.training.determinism import deterministic
from mlsmoke.overfit.training.evidence import ProjectProblem


def _optimizer(lr: float = 0.1) -> torch.optim.Optimizer:
    return torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=lr)


def _forms():
    """Every form Lightning accepts, as (name, returned, interval, frequency)."""
    opt = _optimizer()
    step = torch.optim.lr_scheduler.StepLR(opt, step_size=1)
    yield "optimizer", opt, None, None
    yield "list", [opt], None, None
    yield "tuple", (opt,), None, None
    yield "lists", ([opt], [step]), "epoch", 1
    yield "list and scheduler", ([opt], step), "epoch", 1
    yield "dict", {"optimizer": opt}, None, None
    yield "dict+scheduler", {"optimizer": opt, "lr_scheduler": step}, "epoch", 1
    config = {"scheduler": step, "interval": "step", "frequency": 3}
    yield "dict+config", {"optimizer": opt, "lr_scheduler": config}, "step", 3
    yield "list of dicts", [{"optimizer": opt, "lr_scheduler": config}], "step", 3


@pytest.mark.parametrize(
    ("returned", "interval", "frequency"),
    [form[1:] for form in _forms()],
    ids=[form[0] for form in _forms()],
)
def test_every_form_of_configure_optimizers_gives_one_recipe(
    returned, interval, frequency
):
    recipe = configure_optimizers.normalize(returned)
    assert isinstance(recipe.optimizer, torch.optim.SGD)
    if interval is None:
        assert recipe.schedules == []
    else:
        (schedule,) = recipe.schedules
        assert (schedule.interval, schedule.frequency) == (interval, frequency)
        assert schedule.scheduler.optimizer is recipe.optimizer


@pytest.mark.parametrize(
    ("returned", "says"),
    [
        (None, "returned None"),
        ([_optimizer(), _optimizer()], "returned 2 optimizers (SGD, SGD)"),
        ("adam", "returned a str"),
        ({"lr_scheduler": None}, 'without an "optimizer"'),
        ({"optimizer": _optimizer(), "lr_scheduler": 3}, "not an lr scheduler"),
    ],
)
def test_what_the_gate_cannot_train_is_a_config_error_saying_what_to_do(returned, says):
    with pytest.raises(ProjectProblem) as raised:
        configure_optimizers.normalize(returned)
    assert raised.value.config_key == "optimizer" and says in str(raised.value)
    if returned is None or isinstance(returned, list):
        assert 'optimizer = "mypkg.gate:optimizer"' in str(raised.value)


@pytest.mark.parametrize(
    ("output", "expected"),
    [(torch.tensor(2.0), 2.0), ({"loss": torch.tensor(3.0)}, 3.0)],
)
def test_training_step_gives_a_tensor_or_a_mapping_with_loss(output, expected):
    assert float(step_loss(output)) == expected


@pytest.mark.parametrize("output", [None, {"logits": torch.zeros(2)}])
def test_training_step_without_a_loss_is_a_config_error(output):
    with pytest.raises(ProjectProblem) as raised:
        step_loss(output)
    assert raised.value.config_key == "loss"


@pytest.mark.parametrize(
    "value",
    [torch.zeros(2), (torch.zeros(2), torch.zeros(2)), [torch.zeros(2)],
     {"x": torch.zeros(2)}, "text"],  # fmt: skip
)
def test_a_batch_is_not_a_source(value):
    assert not batches.is_batch_source(value)


def test_loaders_iterables_generators_and_data_modules_are_sources():
    loader = project.train_loader()
    assert batches.is_batch_source(loader)
    assert batches.is_batch_source(iter([1]))
    assert batches.is_batch_source(x for x in [1])
    assert batches.is_batch_source(project.datamodule())


def test_a_shuffling_loader_gives_the_same_first_batch_under_one_seed():
    source = batches.BatchSource(project.train_loader, "pkg:loader")
    with deterministic(0):
        first = source()
    with deterministic(0):
        second = source()
    with deterministic(1):
        other = source()
    assert torch.equal(first[0], second[0]) and not torch.equal(first[0], other[0])
    assert first[0].shape == (project.BATCH, project.FEATURES)
    assert source.origin == (
        "first batch of DataLoader (shuffle=True, batch_size=16, num_workers=0)"
        " from pkg:loader"
    )


def test_a_weighted_sampler_is_named():
    data = project.dataset()
    sampler = torch.utils.data.WeightedRandomSampler([1.0] * len(data), 8)
    source = batches.BatchSource(lambda: DataLoader(data, 8, sampler=sampler), "f")
    assert source()[0].shape == (8, project.FEATURES)
    assert "sampler=WeightedRandomSampler" in source.origin


@pytest.mark.parametrize("persistent", [False, True])
def test_a_draw_leaves_no_worker_process(persistent):
    def loader():
        return DataLoader(project.dataset(), batch_size=4, num_workers=2,
                          persistent_workers=persistent)  # fmt: skip

    source = batches.BatchSource(loader, "pkg:loader")
    inputs, labels = source()
    assert inputs.shape == (4, project.FEATURES)
    assert multiprocessing.active_children() == []


def test_a_data_module_is_prepared_and_set_up_for_fit():
    calls = []

    class Recording(project.DataModule):
        def prepare_data(self):
            calls.append("prepare_data")

        def setup(self, stage):
            calls.append(f"setup {stage}")
            super().setup(stage)

    source = batches.BatchSource(Recording, "pkg:Recording")
    inputs, _ = source()
    assert calls == ["prepare_data", "setup fit"]
    assert inputs.shape == (project.BATCH, project.FEATURES)
    assert source.origin.startswith("first batch of Recording.train_dataloader()")


def test_a_generator_is_closed_after_its_first_batch():
    closed = []

    def batches_forever():
        try:
            while True:
                yield torch.ones(3)
        finally:
            closed.append(True)

    assert torch.equal(batches.BatchSource(batches_forever, "f")(), torch.ones(3))
    assert closed == [True]


def test_an_empty_loader_is_a_config_error_on_batch():
    empty = DataLoader(TensorDataset(torch.zeros(0, 2)), batch_size=2)
    with pytest.raises(ProjectProblem) as raised:
        batches.BatchSource(lambda: empty, "pkg:empty")()
    assert raised.value.config_key == "batch" and "no batches" in str(raised.value)


class _Manual(project.Classifier):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False


class _NeedsTrainer(project.Classifier):
    def configure_optimizers(self):
        steps = self.trainer.estimated_stepping_batches  # raises outside a Trainer
        optimizer = torch.optim.AdamW(self.parameters(), lr=3e-3)
        schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, 3e-3, steps)
        return [optimizer], [schedule]


class _TwoSchedulers(project.Classifier):
    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=3e-3)
        lr_scheduler = torch.optim.lr_scheduler
        return [optimizer], [lr_scheduler.StepLR(optimizer, 1), lr_scheduler.StepLR(
            optimizer, 2)]  # fmt: skip


@pytest.mark.parametrize(
    ("model", "key", "says"),
    [
        (_Manual, "loss", "automatic_optimization = False"),
        (_NeedsTrainer, "optimizer", "configure_optimizers() raised"),
        (_TwoSchedulers, "optimizer", "2 schedulers (StepLR, StepLR)"),
    ],
)
def test_a_module_the_gate_cannot_train_alone_is_a_config_error(model, key, says):
    result = check(model, project.train_loader, device="cpu", max_steps=5)
    assert (result.verdict, result.exit_code) == ("error", 2)
    summary = result.diagnosis.summary
    assert summary.startswith(f"check() argument {key}: ") and says in summary
    assert 'loss = "mypkg.gate:loss"' in summary


def test_check_takes_a_module_instance_and_a_loader():
    model = project.Classifier()
    before = [p.clone() for p in model.parameters()]
    result = check(model, project.train_loader(), device="cpu")
    assert result.passed, result.report()
    site = "tests/overfit/lightning_project.py:"  # the line that builds AdamW
    assert result.recipe.startswith(
        f"AdamW lr 0.003 (from configure_optimizers at {site}"
    ), result.recipe
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
