"""Content hashes: an example's hash is the same alone and in any batch, and any
change to its content changes it."""

from __future__ import annotations

import hashlib
import struct

import torch

from mlsmoke.suites.hashing import (
    batch_hashes,
    batch_rows,
    content_hash,
    item_hashes,
    resolve,
)


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


def reference_hash(layout: str, data: bytes) -> str:
    """The hash as hashing.py's docstring defines it, one Python integer at a time."""
    mask = 2**64 - 1

    def splitmix64(x: int) -> int:
        x ^= x >> 30
        x = x * 0xBF58476D1CE4E5B9 & mask
        x ^= x >> 27
        x = x * 0x94D049BB133111EB & mask
        return x ^ x >> 31

    seed = hashlib.blake2b(f"{layout}\0{len(data)}".encode(), digest_size=8)
    padded = data + bytes(-len(data) % 8)
    total = 0
    for j in range(len(padded) // 8):
        x = int.from_bytes(padded[8 * j : 8 * j + 8], "little") ^ splitmix64(j + 1)
        x = x * 0x9E3779B97F4A7C15 & mask
        total = (total + (x ^ x >> 29)) & mask
    return f"{splitmix64(int.from_bytes(seed.digest(), 'little') ^ total):016x}"


def test_the_hash_format_is_stable() -> None:
    """Recorded suites keep their hashes: a change here is a new suite file version."""
    example = (torch.tensor([1.0, 2.0]), torch.tensor(1))
    layout = "[0]:torch.float32(2,)\n[1]:torch.int64()"
    data = struct.pack("<2f", 1.0, 2.0) + struct.pack("<q", 1)  # little-endian
    assert content_hash(example) == reference_hash(layout, data) == "afb19cbc87f899bc"
    mapping = {"ids": torch.arange(3), "source": "a"}
    layout = ".ids:torch.int64(3,)\n.source:values"
    data = struct.pack("<3q", 0, 1, 2) + b".source:str:'a'"
    assert content_hash(mapping) == reference_hash(layout, data) == "3d90371e8373615a"
    assert content_hash(object) == reference_hash(":values", b":type:<class 'object'>")


def test_a_hash_is_the_same_in_any_batch_and_position() -> None:
    generator = torch.Generator().manual_seed(1)
    x, y = torch.randn(50, 7, generator=generator), torch.arange(50) % 4
    alone = [content_hash((x[i], y[i])) for i in range(50)]
    for order in (torch.randperm(50, generator=generator), torch.arange(49, -1, -1)):
        for size in (1, 3, 17, 50):
            chosen = order[:size]
            batch = torch.utils.data.default_collate([(x[i], y[i]) for i in chosen])
            assert batch_hashes(batch, size) == [alone[i] for i in chosen]


def test_a_one_byte_change_changes_the_hash() -> None:
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(2))
    row = x[2].numpy().tobytes()
    before = content_hash(x[2])
    seen = {before}
    for at in range(len(row)):
        for bit in (1, 128):
            changed = bytearray(row)
            changed[at] ^= bit
            tensor = torch.frombuffer(changed, dtype=torch.float32)
            digest = content_hash(tensor)
            assert digest != before, (at, bit)
            seen.add(digest)
    assert len(seen) == 2 * len(row) + 1  # and no two changes collide


def test_a_custom_collate_still_hashes_each_example_as_alone() -> None:
    items = examples()
    padded = item_hashes(items, None, lambda batch: batch)
    assert padded == [content_hash(item) for item in items]
    ragged = [torch.arange(n) for n in (2, 3)]
    assert item_hashes(ragged, None, list) == [content_hash(r) for r in ragged]


def test_batches_hashed_together_give_each_row_its_own_hash() -> None:
    x = torch.randn(5, 3, generator=torch.Generator().manual_seed(3))
    pairs = [(x[i], i) for i in range(5)]
    pending = [
        batch_rows(torch.utils.data.default_collate(pairs[:2]), 2),
        batch_rows(torch.utils.data.default_collate(pairs[2:3]), 1),
        [content_hash("not a tensor")],
        batch_rows(torch.utils.data.default_collate([x[3], x[4]]), 2),  # other layout
    ]
    assert resolve(pending) == [
        *[content_hash(pair) for pair in pairs[:3]],
        content_hash("not a tensor"),
        content_hash(x[3]),
        content_hash(x[4]),
    ]
