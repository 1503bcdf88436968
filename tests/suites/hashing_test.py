"""Content hashes: an example's hash is the same alone and in any batch, and any
change to its content changes it."""

from __future__ import annotations

import torch

from mlsmoke.suites.hashing import batch_hashes, content_hash


def examples() -> list[dict]:
    x = torch.randn(6, 3, generator=torch.Generator().manual_seed(0))
    return [{"x": x[i], "n": i % 2, "source": f"s{i}", "half": x[i].bfloat16()}
            for i in range(6)]  # fmt: skip


def test_a_hash_does_not_depend_on_the_batch() -> None:
    items = examples()
    alone = [content_hash(item) for item in items]
    batch = torch.utils.data.default_collate(items)
    assert batch_hashes(batch, len(items)) == alone
    reordered = torch.utils.data.default_collate(items[::-1])
    assert batch_hashes(reordered, len(items)) == alone[::-1]
    assert len(set(alone)) == len(items)


def test_any_change_of_content_changes_the_hash() -> None:
    item = examples()[0]
    before = content_hash(item)
    for change in (
        {"x": item["x"] + 1e-7},
        {"x": item["x"].double()},
        {"n": 1},
        {"source": "s9"},
        {"x": item["x"][None]},
    ):
        assert content_hash({**item, **change}) != before, change


def test_a_batch_of_another_layout_is_not_guessed() -> None:
    padded = {"tokens": torch.zeros(3, 5)}
    assert batch_hashes(padded, 4) is None
    assert batch_hashes([torch.zeros(4, 2), "not a row"], 4) is None
