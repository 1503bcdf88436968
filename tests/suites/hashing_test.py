"""Content hashes: an example's hash is the same alone and in any batch, and any
change to its content changes it."""

from __future__ import annotations

import torch

from mlsmoke.suites.hashing import batch_hashes, content_hash, item_hashes


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


def test_the_hash_format_is_stable() -> None:
    """Recorded suites keep their hashes: a change here is a new suite file version."""
    example = (torch.tensor([1.0, 2.0]), torch.tensor(1))
    assert content_hash(example) == "b3beb69df07b8b11"
    assert content_hash({"ids": torch.arange(3), "source": "a"}) == "92e5f4ebb104bf86"


def test_a_custom_collate_still_hashes_each_example_as_alone() -> None:
    items = examples()
    padded = item_hashes(items, None, lambda batch: batch)
    assert padded == [content_hash(item) for item in items]
    ragged = [torch.arange(n) for n in (2, 3)]
    assert item_hashes(ragged, None, list) == [content_hash(r) for r in ragged]
