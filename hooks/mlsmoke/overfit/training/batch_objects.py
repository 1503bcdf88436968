"""A batch is the project's object: what the gate rebuilds, what moves itself, and
what it passes through untouched.

- Containers the gate understands are rebuilt around their converted contents: dict,
  list, tuple, namedtuple, dataclass.
- An object with its own ``.to(device)`` moves itself, as Lightning moves it:
  torch_geometric's Data, Batch and HeteroData, tensordict's TensorDict,
  transformers' BatchEncoding, a project's own batch class.
- Anything else passes through as it is (on a GPU the run says so: :func:`moved`).

Reading a batch (:func:`fields`, :func:`tensors_in`) never builds a new one. A float64
re-run's cast and the batch-mixing check's perturbation change the tensors inside an
object on a copy (:func:`converted`), so that the factory's object stays as it was.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import torch

Convert = Callable[[torch.Tensor], torch.Tensor]


def is_container(obj: Any) -> bool:
    """A container the gate rebuilds: dict, list, tuple, namedtuple, dataclass."""
    return isinstance(obj, (dict, list, tuple)) or _is_dataclass(obj)


def moves_itself(obj: Any) -> bool:
    """An object with its own ``.to(device)`` (not a class, not a tensor)."""
    return not isinstance(obj, (type, torch.Tensor)) and callable(
        getattr(obj, "to", None)
    )


def rebuild(obj: Any, convert: Callable[[Any], Any]) -> Any:
    """The container ``obj`` with ``convert`` applied to each item it holds."""
    if isinstance(obj, dict):
        rebuilt = copy.copy(obj)  # keeps a dict subclass's own state (defaultdict)
        for key, value in obj.items():
            rebuilt[key] = convert(value)
        return rebuilt
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(convert(v) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(convert(v) for v in obj)
    changes = {
        f.name: convert(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init
    }
    return dataclasses.replace(obj, **changes)


def move(
    obj: Any, target: torch.device, passed: list[str], pinned_async: bool = False
) -> Any:
    """``obj`` on ``target``: tensors moved, containers rebuilt, an object with a
    ``.to`` moved by it; anything else returned as it is, its type named in
    ``passed`` when it holds tensors. With ``pinned_async``, a pinned tensor is copied
    without blocking the host, as a pinned loader's training loop copies it."""
    if isinstance(obj, torch.Tensor):
        return obj.to(target, non_blocking=pinned_async and bool(obj.is_pinned()))
    if moves_itself(obj):
        moved = obj.to(target)
        return obj if moved is None else moved  # a .to that moves in place
    if is_container(obj):
        return rebuild(obj, lambda value: move(value, target, passed, pinned_async))
    if not isinstance(obj, _PLAIN_VALUES) and tensors_in(obj):
        passed.append(type(obj).__name__)
    return obj


_PLAIN_VALUES = (str, bytes, int, float, complex, bool, type(None))


def converted(obj: Any, convert: Convert, skipped: list[str]) -> Any:
    """``obj`` with ``convert`` applied to each tensor inside it, containers rebuilt
    and objects copied, so that the factory's object stays as it was; the type of an
    object whose tensors cannot be written back into a copy goes to ``skipped``."""
    if isinstance(obj, torch.Tensor):
        return convert(obj)
    if is_container(obj):
        return rebuild(obj, lambda value: converted(value, convert, skipped))
    if isinstance(obj, _PLAIN_VALUES) or not tensors_in(obj):
        return obj
    try:
        return _converted_object(obj, convert, skipped)
    except Exception:
        skipped.append(type(obj).__name__)
        return obj


def _converted_object(obj: Any, convert: Convert, skipped: list[str]) -> Any:
    """A copy of an object holding tensors, converted through its own ``apply(fn)``
    where it is a graph (``stores``) or a TensorDict (``batch_size``), else by
    writing each field back (an item for a mapping, an attribute else)."""
    copied = copy.copy(obj)
    if callable(getattr(copied, "apply", None)) and (
        _stores(copied) is not None or hasattr(copied, "batch_size")
    ):
        applied = copied.apply(convert)  # torch_geometric: in place; tensordict: new
        return copied if applied is None else applied
    as_mapping = _mapping_items(copied)
    for name, value in as_mapping if as_mapping is not None else _attributes(copied):
        new = converted(value, convert, skipped)
        if new is not value:
            if as_mapping is not None:
                copied[name] = new
            else:
                setattr(copied, name, new)
    return copied


def fields(obj: Any) -> list[tuple[str, Any]] | None:
    """``(name, value)`` per field the object holds, as its user reads them; None for
    a tensor or a plain value. A graph's fields are its attributes (``x``,
    ``edge_index``), a heterogeneous graph's are prefixed by node or edge type
    (``paper.x``, ``(paper, cites, paper).edge_index``)."""
    if isinstance(obj, torch.Tensor) or isinstance(obj, _PLAIN_VALUES):
        return None
    stores = _stores(obj)
    if stores is not None:
        return [
            (_store_prefix(store) + str(name), value)
            for store in stores
            for name, value in store.items()
        ]
    as_mapping = _mapping_items(obj)
    if as_mapping is not None:
        return [(str(key), value) for key, value in as_mapping]
    if isinstance(obj, (list, tuple)):
        return [(f"[{i}]", v) for i, v in enumerate(obj)]
    if _is_dataclass(obj):
        return [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    return _attributes(obj)


# How deep reading follows objects inside objects: a batch nests a few levels, and a
# project's object may reach far (a dataset, a parent that points back).
MAX_DEPTH = 8


def tensors_in(obj: Any) -> list[torch.Tensor]:
    """Every tensor inside ``obj``, through containers and objects, none copied."""
    found: list[torch.Tensor] = []
    _collect(obj, found, set(), MAX_DEPTH)
    return found


def _collect(obj: Any, found: list[torch.Tensor], seen: set[int], depth: int) -> None:
    if isinstance(obj, torch.Tensor):
        found.append(obj)
        return
    if depth == 0 or id(obj) in seen:
        return
    seen.add(id(obj))
    try:
        inside = fields(obj) or []
    except Exception:  # reading a project's object must never break the gate
        return
    for _, value in inside:
        _collect(value, found, seen, depth - 1)


def _stores(obj: Any) -> list[Any] | None:
    """torch_geometric keeps a graph's tensors in mappings it calls stores, one per
    node and edge type of a heterogeneous graph."""
    stores = getattr(obj, "stores", None)
    if isinstance(stores, (list, tuple)) and all(
        isinstance(s, Mapping) for s in stores
    ):
        return list(stores)
    return None


def _store_prefix(store: Any) -> str:
    key = getattr(store, "_key", None)
    if key is None:
        return ""
    if isinstance(key, tuple):
        return f"({', '.join(map(str, key))})."
    return f"{key}."


def _mapping_items(obj: Any) -> list[tuple[Any, Any]] | None:
    if isinstance(obj, Mapping) or (hasattr(obj, "keys") and hasattr(obj, "items")):
        return list(obj.items())
    return None


def _attributes(obj: Any) -> list[tuple[Any, Any]]:
    """A plain object's public instance attributes."""
    try:
        attributes = vars(obj)
    except TypeError:  # no __dict__ (slots, builtins)
        return []
    return [(name, v) for name, v in attributes.items() if not name.startswith("_")]


def _is_dataclass(obj: Any) -> bool:
    return dataclasses.is_dataclass(obj) and not isinstance(obj, type)


def named_tensors(obj: Any, prefix: str = "") -> list[tuple[str, torch.Tensor]]:
    """Every tensor inside ``obj`` with the path a user reads (``graph.edge_index``,
    ``paper.x``), through containers and objects, to :data:`MAX_DEPTH`."""
    found: list[tuple[str, torch.Tensor]] = []
    _collect_named(obj, prefix, found, set(), MAX_DEPTH)
    return found


def _collect_named(
    obj: Any,
    name: str,
    found: list[tuple[str, torch.Tensor]],
    seen: set[int],
    depth: int,
) -> None:
    if isinstance(obj, torch.Tensor):
        found.append((name, obj))
        return
    if depth == 0 or id(obj) in seen:
        return
    seen.add(id(obj))
    try:
        inside = fields(obj) or []
    except Exception:
        return
    for field_name, value in inside:
        joined = f"{name}{field_name}" if field_name.startswith("[") else field_name
        if name and not field_name.startswith("["):
            joined = f"{name}.{field_name}"
        _collect_named(value, joined, found, seen, depth - 1)
