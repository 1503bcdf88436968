"""A checkpoint into the model: the project's ``load`` callable, or a state dict.

A state dict may be the file itself, or under ``state_dict`` (Lightning), ``model``
(nanoGPT) or ``model_state_dict``; a ``_orig_mod.`` (torch.compile) or ``module.``
(DistributedDataParallel) prefix on every key is taken off. A checkpoint that does not
fit the model (missing or unexpected keys, other shapes) is named key by key before
anything is loaded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch

from mlsmoke.listing import first_few
from mlsmoke.overfit.training.instruments import user_traceback
from mlsmoke.suites.problem import SuitesProblem

NESTED_KEYS = ("state_dict", "model", "model_state_dict")
PREFIXES = ("_orig_mod.", "module.")
SHOWN = 5


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_checkpoint(
    model: torch.nn.Module,
    path: Path,
    key: str,
    loader: Callable[..., Any] | None = None,
    loader_key: str = "load",
) -> torch.nn.Module:
    """``model`` with the checkpoint at ``path`` loaded; SuitesProblem naming
    ``key`` (the checkpoint) or ``loader_key``."""
    if not path.is_file():
        raise SuitesProblem(f"{key}: {path}: no such file")
    if loader is not None:
        try:
            loaded = loader(model, str(path))
        except Exception as error:
            raise SuitesProblem(
                f"{loader_key}: raised {type(error).__name__} loading {path}: {error}",
                user_traceback(error),
            ) from None
        return model if loaded is None else loaded
    try:
        stored = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        raise SuitesProblem(
            f"{key}: {path}: cannot load it as a state dict"
            f" ({type(error).__name__}: {_first_line(error)}); for another format,"
            f' set {loader_key} = "package.module:function" taking (model, path)'
        ) from None
    state = _unprefixed(state_dict_in(stored, path, key))
    check_fits(model, state, path, key)
    model.load_state_dict(state)
    return model


def state_dict_in(stored: Any, path: Path, key: str) -> dict[str, torch.Tensor]:
    if _is_state_dict(stored):
        return dict(stored)
    if isinstance(stored, Mapping):
        for name in NESTED_KEYS:
            if _is_state_dict(stored.get(name)):
                return dict(stored[name])
    kind = type(stored).__name__
    keys = (
        f" with keys {sorted(map(str, stored))[:8]}"
        if isinstance(stored, Mapping)
        else ""
    )
    raise SuitesProblem(
        f"{key}: {path}: holds a {kind}{keys}, not a state dict (nor one under"
        f" {', '.join(NESTED_KEYS)})"
    )


def _is_state_dict(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and bool(value)
        and all(isinstance(v, torch.Tensor) for v in value.values())
    )


def _unprefixed(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    for prefix in PREFIXES:
        if all(name.startswith(prefix) for name in state):
            state = {name[len(prefix) :]: value for name, value in state.items()}
    return state


def check_fits(
    model: torch.nn.Module, state: dict[str, torch.Tensor], path: Path, key: str
) -> None:
    """SuitesProblem listing the keys the checkpoint lacks, those the model lacks,
    and the shapes that differ."""
    expected = model.state_dict()
    missing = [name for name in expected if name not in state]
    unexpected = [name for name in state if name not in expected]
    shapes = [
        f"{name} {tuple(state[name].shape)} in the checkpoint,"
        f" {tuple(expected[name].shape)} in the model"
        for name in expected
        if name in state and state[name].shape != expected[name].shape
    ]
    problems = []
    if missing:
        problems.append(f"missing keys ({len(missing)}): {first_few(missing, SHOWN)}")
    if unexpected:
        problems.append(
            f"unexpected keys ({len(unexpected)}): {first_few(unexpected, SHOWN)}"
        )
    if shapes:
        problems.append(f"other shapes ({len(shapes)}): {first_few(shapes, SHOWN)}")
    if problems:
        raise SuitesProblem(
            f"{key}: {path} does not fit the model ({type(model).__name__}): "
            + "; ".join(problems)
        )


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [""])[0][:200]
