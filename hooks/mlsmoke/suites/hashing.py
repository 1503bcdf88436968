"""An example's content hash: the dtype, shape and bytes of each of its tensors, and
its plain values, read as torch's ``default_collate`` lays them out.

An example's hash is that of its row in ``default_collate([example])``, and a batch
``default_collate`` made gives every row's hash at once: each batch tensor's rows,
with their headers, are laid side by side in one byte matrix, and each row of it is
hashed with one call (hashing one example at a time would cost more than a small
model's forward). Two examples with the same content have the same hash wherever
they sit in the dataset, and in whatever batch.

The hash is BLAKE2b (8 bytes, 16 hex digits) of, for each field in order (mapping
keys sorted, sequences by position): for a tensor, ``"<path>:<dtype><row shape>"``
then the row's bytes in memory order; for a plain value, ``"<path>:<type>:<repr>"``.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from typing import Any, Union

import numpy
import torch

DIGEST_SIZE = 8  # 16 hex digits: collisions are out of reach for any dataset

# One field's bytes for every row: a (rows, width) uint8 matrix, or one bytes per row.
Part = Union[numpy.ndarray, list[bytes]]


def batch_hashes(batch: Any, size: int) -> list[str] | None:
    """Each row's hash in a batch of ``size`` laid out as default_collate lays it
    out; None when the batch is not such a layout."""
    parts: list[Part] = []
    if not _collect(batch, size, "", parts):
        return None
    columns = [_row_bytes(part, size) for part in _side_by_side(parts)]
    blake2b, digest_size = hashlib.blake2b, DIGEST_SIZE
    if len(columns) == 1:  # tensors only: one call per row
        return [blake2b(row, digest_size=digest_size).hexdigest() for row in columns[0]]
    return [
        blake2b(b"".join(row), digest_size=digest_size).hexdigest()
        for row in zip(*columns)
    ]


def item_hashes(
    items: list[Any], batch: Any, collate: Callable[[list[Any]], Any]
) -> list[str]:
    """The hash of each of ``items``, which ``collate`` made into ``batch``: read
    from the batch when it is default_collate's, else from default_collate(items)
    when the items stack, else one example at a time."""
    hashes = None
    if collate is torch.utils.data.default_collate:
        hashes = batch_hashes(batch, len(items))
    else:
        try:
            hashes = batch_hashes(torch.utils.data.default_collate(items), len(items))
        except (TypeError, RuntimeError):  # rows of other shapes: no common layout
            hashes = None
    return hashes if hashes is not None else [content_hash(item) for item in items]


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


def _collect(value: Any, size: int, path: str, parts: list[Part]) -> bool:
    if isinstance(value, torch.Tensor):
        if value.dim() == 0 or value.shape[0] != size:
            return False
        rows = _tensor_rows(value, path)
        if rows is None:
            return False
        parts += rows
        return True
    if isinstance(value, Mapping):
        return all(
            _collect(value[key], size, f"{path}.{key}", parts)
            for key in sorted(value, key=str)
        )
    if isinstance(value, (list, tuple)):
        if all(
            isinstance(item, (torch.Tensor, Mapping, list, tuple)) for item in value
        ):
            return all(
                _collect(item, size, f"{path}[{i}]", parts)
                for i, item in enumerate(value)
            )
        if len(value) != size:
            return False
        parts.append(  # strings, numbers: one per row
            [f"{path}:{type(v).__name__}:{v!r}".encode() for v in value]
        )
        return True
    return False


def _tensor_rows(tensor: torch.Tensor, path: str) -> list[Part] | None:
    """The field's header and its rows' bytes, each (rows, width) uint8."""
    rows = tensor.shape[0]
    try:
        data = tensor.detach().cpu().contiguous().reshape(rows, -1)
        data = data.view(torch.uint8) if data.shape[1] else data.to(torch.uint8)
    except (RuntimeError, TypeError):  # a layout without plain bytes (quantized)
        return None
    header = f"{path}:{tensor.dtype}{tuple(tensor.shape[1:])}".encode()
    return [_header_rows(header, rows), data.numpy()]


@functools.lru_cache(maxsize=64)  # a dataset has few fields, batches one size
def _header_rows(header: bytes, rows: int) -> numpy.ndarray:
    return numpy.broadcast_to(
        numpy.frombuffer(header, numpy.uint8), (rows, len(header))
    )


def _side_by_side(parts: list[Part]) -> list[Part]:
    """Neighbouring byte matrices as one: a row of the batch is then one slice."""
    merged: list[Part] = []
    run: list[numpy.ndarray] = []
    for part in parts:
        if isinstance(part, numpy.ndarray):
            run.append(part)
            continue
        if run:
            merged.append(numpy.concatenate(run, axis=1))
            run = []
        merged.append(part)
    if run:
        merged.append(numpy.concatenate(run, axis=1))
    return merged


def _row_bytes(part: Part, size: int) -> list[bytes]:
    if not isinstance(part, numpy.ndarray):
        return part
    width = part.shape[1]
    data = part.tobytes()
    return [data[start : start + width] for start in range(0, size * width, width)]
