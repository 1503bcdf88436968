"""An example's content hash: the dtype, shape and bytes of each of its tensors, and
its plain values, read as torch's ``default_collate`` lays them out.

An example's hash is that of its row in ``default_collate([example])``, and a batch
``default_collate`` made gives every row's hash at once, from one copy of each batch
tensor's bytes (hashing one example at a time would cost more than a small model's
forward). Two examples with the same content have the same hash wherever they sit in
the dataset, and in whatever batch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

import torch

DIGEST_SIZE = 8  # 16 hex digits: collisions are out of reach for any dataset
# numpy has no such dtypes: their bits are hashed as integers of the same width
_AS_INTEGERS = {torch.bfloat16: torch.int16, torch.float8_e4m3fn: torch.int8,
                torch.float8_e5m2: torch.int8}  # fmt: skip

RowBytes = Callable[[int], bytes]


def batch_hashes(batch: Any, size: int) -> list[str] | None:
    """Each row's hash in a batch of ``size`` laid out as default_collate lays it
    out; None when the batch is not such a layout."""
    rows: list[RowBytes] = []
    if not _collect(batch, size, "", rows):
        return None
    hashes = []
    for row in range(size):
        digest = hashlib.blake2b(digest_size=DIGEST_SIZE)
        for row_bytes in rows:
            digest.update(row_bytes(row))
        hashes.append(digest.hexdigest())
    return hashes


def content_hash(example: Any) -> str:
    """One example's hash, the same as its row's in a default_collate batch."""
    try:
        hashes = batch_hashes(torch.utils.data.default_collate([example]), 1)
    except (TypeError, RuntimeError):
        hashes = None
    if hashes is not None:
        return hashes[0]
    digest = hashlib.blake2b(digest_size=DIGEST_SIZE)
    digest.update(f"{type(example).__name__}:{example!r}".encode())
    return digest.hexdigest()


def _collect(value: Any, size: int, path: str, rows: list[RowBytes]) -> bool:
    if isinstance(value, torch.Tensor):
        if value.dim() == 0 or value.shape[0] != size:
            return False
        rows.append(_tensor_rows(value, path))
        return True
    if isinstance(value, Mapping):
        return all(
            _collect(value[key], size, f"{path}.{key}", rows)
            for key in sorted(value, key=str)
        )
    if isinstance(value, (list, tuple)):
        if all(
            isinstance(item, (torch.Tensor, Mapping, list, tuple)) for item in value
        ):
            return all(
                _collect(item, size, f"{path}[{i}]", rows)
                for i, item in enumerate(value)
            )
        if len(value) != size:
            return False
        rows.append(_plain_rows(list(value), path))  # strings, numbers: one per row
        return True
    return False


def _tensor_rows(tensor: torch.Tensor, path: str) -> RowBytes:
    header = f"{path}:{tensor.dtype}{tuple(tensor.shape[1:])}".encode()
    tensor = tensor.detach().cpu()
    if tensor.dtype in _AS_INTEGERS:
        tensor = tensor.view(_AS_INTEGERS[tensor.dtype])
    data = memoryview(tensor.contiguous().numpy().tobytes())
    width = len(data) // tensor.shape[0]

    def row_bytes(row: int) -> bytes:
        return header + data[row * width : (row + 1) * width]

    return row_bytes


def _plain_rows(values: list[Any], path: str) -> RowBytes:
    def row_bytes(row: int) -> bytes:
        value = values[row]
        return f"{path}:{type(value).__name__}:{value!r}".encode()

    return row_bytes
