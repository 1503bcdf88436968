"""An example's content hash: its tensors' dtype, shape and bytes, and its plain
values, through the containers it is made of. Two examples with the same content
have the same hash wherever they sit in the dataset."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import torch

DIGEST_SIZE = 8  # 16 hex digits: collisions are out of reach for any dataset


def content_hash(example: Any) -> str:
    digest = hashlib.blake2b(digest_size=DIGEST_SIZE)
    _feed(digest, example)
    return digest.hexdigest()


def _feed(digest: Any, value: Any) -> None:
    if isinstance(value, torch.Tensor):
        tensor = value.detach().cpu().contiguous()
        digest.update(f"T{tensor.dtype}{tuple(tensor.shape)}".encode())
        digest.update(_tensor_bytes(tensor))
    elif hasattr(value, "tobytes") and hasattr(value, "dtype"):  # numpy
        digest.update(f"A{value.dtype}{getattr(value, 'shape', ())}".encode())
        digest.update(value.tobytes())
    elif isinstance(value, Mapping):
        digest.update(b"{")
        for key in sorted(value, key=repr):
            digest.update(repr(key).encode())
            _feed(digest, value[key])
        digest.update(b"}")
    elif isinstance(value, (list, tuple)):
        digest.update(b"[")
        for item in value:
            _feed(digest, item)
        digest.update(b"]")
    else:
        digest.update(f"{type(value).__name__}:{value!r}".encode())


def _tensor_bytes(tensor: torch.Tensor) -> bytes:
    flat = tensor.reshape(-1)
    if flat.dtype.is_floating_point and flat.dtype not in (
        torch.float32,
        torch.float64,
        torch.float16,
    ):
        flat = flat.float()  # bfloat16 and friends: numpy has no such dtype
    return flat.numpy().tobytes()  # fmt: skip
