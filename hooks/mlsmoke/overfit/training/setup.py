"""What the loop trains: the model, the batch and the recipe, built from the
project's factories, moved to the run's device and dtype, and recorded as evidence."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from mlsmoke.overfit.training import bookkeeping, instruments, inventory
from mlsmoke.overfit.training.batch_objects import tensors_in
from mlsmoke.overfit.training.device import batch_to, limit_cpu_threads, model_to
from mlsmoke.overfit.training.evidence import Evidence, ProjectProblem
from mlsmoke.overfit.training.objective import describe
from mlsmoke.overfit.training.recipe import Recipe, as_recipe
from mlsmoke.overfit.training.run_state import TrainingRun


def build_model(run: TrainingRun) -> torch.nn.Module:
    run.phase = "model"
    evidence = run.evidence
    model = run.model_factory()
    if not isinstance(model, torch.nn.Module):
        raise ProjectProblem(
            "not-a-module",
            f"the model callable returned {describe(model)}, not a torch.nn.Module",
            config_key="model",
        )
    evidence.requires_grad = instruments.requires_grad(model)
    evidence.parameter_aliases = instruments.parameter_aliases(model)
    if not evidence.requires_grad:
        no_parameters(run, model)
    evidence.forward_parameters = inventory.forward_parameters(model)  # never raises
    run.model = model_to(model, evidence.device, dtype_of(evidence))
    parameter_count = sum(p.numel() for p in model.parameters())
    run.threads = limit_cpu_threads(evidence.device, parameter_count)
    evidence.one_cpu_thread = run.threads is not None
    return run.model


def no_parameters(run: TrainingRun, model: torch.nn.Module) -> None:
    """Raise for a model without parameters: the project's bug when it keeps trainable
    tensors in plain attributes (a list of layers), else its configuration's."""
    try:
        run.evidence.unregistered = bookkeeping.attribute_parameters(model)
    except Exception:
        pass
    raise ProjectProblem(
        "no-parameters",
        f"the model ({type(model).__name__}) has no parameters to train",
        config_key=None if run.evidence.unregistered else "model",
    )


def build_batch(run: TrainingRun) -> Any:
    run.phase = "batch"
    evidence = run.evidence
    batch = run.batch_factory()
    evidence.batch_fields = inventory.safe_inventory(batch)
    evidence.batch_by_keyword = isinstance(batch, Mapping)  # objective.call_model
    tensors = tensors_in(batch)
    if not tensors:
        raise ProjectProblem(
            "batch-no-tensors",
            f"the batch holds no tensors: it is {describe(batch)}; return tensors"
            " (a tensor, a tuple or list, or a mapping of tensors)",
        )
    if tensors[0].dim() > 0:
        evidence.batch_size = int(tensors[0].shape[0])
    dtype = dtype_of(evidence)
    run.batch = batch_to(
        batch,
        evidence.device,
        None if dtype == torch.float32 else dtype,
        evidence.batch_not_moved,
        evidence.batch_not_cast,
    )
    return run.batch


def build_recipe(run: TrainingRun) -> Recipe:
    """The optimizer and scheduler, scaled for a probe; the evidence records where
    they came from and the lr they start at."""
    run.phase = "optimizer"
    recipe = as_recipe(run.optimizer_factory(run.model, run.lr), "the optimizer")
    recipe.scale_lr(run.lr_scale)
    evidence = run.evidence
    evidence.lr, evidence.lr_scale = recipe.lr, run.lr_scale
    evidence.optimizer = type(recipe.optimizer).__name__
    evidence.weight_decay = max(
        float(group.get("weight_decay") or 0.0)
        for group in recipe.optimizer.param_groups
    )
    evidence.optimizer_source, evidence.scheduler = recipe.source, recipe.scheduler_name
    if recipe.scheduler is not None:
        evidence.unscheduled_lr = recipe.configured_lr
    return recipe


def dtype_of(evidence: Evidence) -> torch.dtype:
    return getattr(torch, evidence.dtype)
