"""Reading, moving and converting a batch through the objects that hold it, on plain
Python stand-ins: what is rebuilt, what moves itself, and what passes through."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import torch

from mlsmoke.overfit.training import batch_objects

CPU = torch.device("cpu")


class MovesInPlace:
    """A .to() that moves its tensors and returns None."""

    def __init__(self) -> None:
        self.x = torch.zeros(2)
        self.calls: list[Any] = []

    def to(self, device: Any) -> None:
        self.calls.append(device)


class Node:
    def __init__(self) -> None:
        self.value = torch.ones(1)
        self.parent: Node | None = None


def test_an_object_whose_to_returns_none_is_kept():
    batch = MovesInPlace()
    assert batch_objects.move(batch, CPU, []) is batch and batch.calls == [CPU]


def test_a_dict_subclass_keeps_its_own_state_when_rebuilt():
    batch: defaultdict[str, Any] = defaultdict(list, {"x": torch.zeros(1)})
    moved = batch_objects.move(batch, CPU, [])
    assert type(moved) is defaultdict and moved.default_factory is list
    assert moved is not batch and moved["x"] is batch["x"]


def test_reading_follows_objects_once_and_stops_at_cycles():
    node = Node()
    node.parent = node  # points back at itself
    assert batch_objects.tensors_in(node) == [node.value]
    assert batch_objects.named_tensors({"tree": [node]}) == [
        ("tree[0].value", node.value)
    ]


def test_reading_stops_at_a_depth():
    deep: Any = torch.zeros(1)
    for _ in range(batch_objects.MAX_DEPTH + 2):
        deep = [deep]
    assert batch_objects.tensors_in(deep) == []
    assert len(batch_objects.tensors_in(deep[0][0][0])) == 1


def test_converting_an_object_works_on_a_copy_and_names_what_it_cannot_copy():
    class Frozen:
        """Its attributes cannot be set once it is built."""

        def __init__(self) -> None:
            vars(self)["x"] = torch.zeros(1)

        def __setattr__(self, name: str, value: Any) -> None:
            raise AttributeError("read-only")

    node, skipped = Node(), []
    doubled = batch_objects.converted(node, lambda t: t * 2, skipped)
    assert doubled is not node and float(doubled.value) == 2.0
    assert float(node.value) == 1.0 and skipped == []
    frozen = Frozen()
    assert batch_objects.converted([frozen], lambda t: t * 2, skipped)[0] is frozen
    assert skipped == ["Frozen"] and float(frozen.x) == 0.0
