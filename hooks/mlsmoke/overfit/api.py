"""The Python API: ``mlsmoke.overfit.check(model, batch, loss=None, **options)``.

The same engine, diagnoses and checks as the hook, in the caller's own process, so a
project can keep a memorization test in ``tests/``::

    from mlsmoke.overfit import check

    def test_model_memorizes_one_batch():
        result = check(MyModel(), next(iter(loader)))
        assert result.passed, result.report()

The model is copied for every run (the caller's instance is never trained); RNG states
and torch's deterministic flags are restored afterwards.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from mlsmoke import config
from mlsmoke.overfit.process import settings as schema
from mlsmoke.overfit.gate import run_gate
from mlsmoke.overfit.verdict.result import Result

API_GATE = "check"


def check(
    model: torch.nn.Module | Callable[[], torch.nn.Module],
    batch: Any,
    loss: Callable[[Any, Any], torch.Tensor] | None = None,
    *,
    optimizer: str | Callable[[Any], torch.optim.Optimizer] | None = None,
    step: str | Callable[..., Any] | None = None,
    accumulate: int | None = None,
    train_mode: bool = True,
    lr: float | None = None,
    max_steps: int | None = None,
    target_loss: float | None = None,
    target_ratio: float | None = None,
    device: str = "auto",
    seed: int = 0,
    timeout: float | None = None,
    frozen: list[str] | None = None,
    tier: str = schema.DEFAULT_TIER,
) -> Result:
    """Train a copy of ``model`` on ``batch`` until the loss reaches its target.

    ``model`` is a module or a zero-argument callable building one; ``batch`` is a batch
    or a zero-argument callable returning one; ``loss(model, batch)`` is optional, as in
    ``[tool.mlsmoke.overfit]``. ``batch`` may also be a DataLoader, an iterable of
    batches or a LightningDataModule (the gate trains on its first batch), and
    ``model`` a LightningModule (its ``training_step`` and ``configure_optimizers``
    train unless ``loss`` or ``optimizer`` is given). ``step`` is the project's
    training step, a callable or a ``"package.module:function"`` this process imports,
    called in place of the gate's own loop and checked as the ``step`` key is
    (docs/train-step.md). The other options are that table's keys, with the same
    defaults for ``tier``. Returns the Result (``result.passed``, ``result.report()``).
    """
    options = {
        "optimizer": optimizer if isinstance(optimizer, str) else None,
        "step": step if isinstance(step, str) else None,
        "accumulate": accumulate,
        "train-mode": train_mode,
        "lr": lr,
        "max-steps": max_steps,
        "target-loss": target_loss,
        "target-ratio": target_ratio,
        "device": device,
        "seed": seed,
        "timeout": timeout,
        "frozen": frozen,
    }
    settings = _settings(options, tier)
    factories: dict[str, Callable[..., Any]] = {
        "model": _model_factory(model),
        "batch": _batch_factory(batch),
    }
    if loss is not None:
        factories["loss"] = loss
    if step is not None and not isinstance(step, str):
        factories["step"] = _step_callable(step)
    if optimizer is not None and not isinstance(optimizer, str):
        factories["optimizer"] = optimizer
        settings.optimizer, settings.lr = "custom", lr
        settings.unset.remove("optimizer")
    result, _ = run_gate(settings, factories=factories)
    return result


def _settings(options: dict[str, Any], tier: str) -> schema.GateSettings:
    if tier not in schema.TIER_DEFAULTS:
        raise config.ConfigError(
            f"tier: expected one of {', '.join(schema.TIER_DEFAULTS)}, got {tier!r}"
        )
    given = {key: value for key, value in options.items() if value is not None}
    if "target-loss" in given and "target-ratio" not in given:
        given["target-ratio"] = None
    table = {**schema.TIER_DEFAULTS[tier], **given}
    checked = {k: v for k, v in table.items() if v is not None}
    parsed = config.validate(checked, _API_SCHEMA, "check()")
    name = parsed["optimizer"] or "adam"
    return schema.GateSettings(
        name=API_GATE,
        model="<api>",
        batch="<api>",
        optimizer=name,
        lr=parsed["lr"] or schema.DEFAULT_LR.get(name),
        max_steps=parsed["max-steps"],
        target_loss=parsed["target-loss"],
        target_ratio=table.get("target-ratio"),
        device=parsed["device"] or "auto",
        seed=parsed["seed"] or 0,
        timeout=parsed["timeout"],
        step=parsed["step"],
        accumulate=parsed["accumulate"] or 1,
        train_mode=parsed["train-mode"] is not False,
        frozen=parsed["frozen"] or [],
        tier=tier,
        where="api",
        unset=[key for key in ("optimizer", "lr") if key not in given],
    )


_API_SCHEMA = {
    key: value
    for key, value in schema.GATE_SCHEMA.items()
    if key not in ("model", "batch", "loss", "watch", "python")
}


def _model_factory(model: Any) -> Callable[[], Any]:
    if isinstance(model, torch.nn.Module):
        return lambda: copy.deepcopy(model)
    if callable(model):
        return model
    raise config.ConfigError(
        f"model: expected a torch.nn.Module or a callable returning one,"
        f" got {type(model).__name__}"
    )


def _step_callable(step: Any) -> Callable[..., Any]:
    if callable(step):
        return step
    raise config.ConfigError(
        f'step: expected a callable or "package.module:function", got'
        f" {type(step).__name__}"
    )


def _batch_factory(batch: Any) -> Callable[[], Any]:
    is_data = isinstance(batch, (torch.Tensor, Mapping, Sequence))
    if callable(batch) and not is_data:
        return batch
    return lambda: batch
