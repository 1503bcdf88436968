"""An example's content hash: the dtype, shape and bytes of each of its tensors, and
its plain values, read as torch's ``default_collate`` lays them out.

An example's hash is that of its row in ``default_collate([example])``, and a batch
``default_collate`` made gives every row's hash at once, in a few numpy operations
on the whole batch (a call per row would cost more than a small model's forward).
Two examples with the same content have the same hash wherever they sit in the
dataset, and in whatever batch.

The hash (suite file version 2) is 64 bits, written as 16 hex digits. An example is
its *layout* and its *bytes*. The layout is the text of its fields in order (mapping
keys sorted, sequences by position): ``"<path>:<dtype><row shape>"`` for a tensor,
``"<path>:values"`` for plain values, joined by newlines. Its bytes are, field after
field, a tensor row's bytes in memory order, or a plain value's
``"<path>:<type>:<repr>"`` in UTF-8. With n bytes, padded with zeros to whole 8-byte
words w_0 .. w_{m-1}, each read little-endian (so every machine reads the same
numbers from the same bytes), and all arithmetic modulo 2**64::

    seed  = BLAKE2b-8(layout + "\\0" + decimal n), read little-endian
    mix_j = x * M ^ (x * M >> 29), where x = w_j ^ key_j
    hash  = splitmix64(seed ^ (mix_0 + mix_1 + ... + mix_{m-1}))

where key_j is splitmix64(j + 1), M = 0x9E3779B97F4A7C15, and splitmix64(z) is
splitmix64's finalizer: z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27;
z *= 0x94D049BB133111EB; z ^= z >> 31. An example that does not collate is one
plain value: layout ``":values"``, bytes ``":<type>:<repr>"``.

Each step after a word (xor with a key, times an odd number, xorshift) and the final
splitmix64 are bijections: a change to one word, so to any one byte, always changes
the hash, and the keys make the position of a word count. It is not cryptographic:
it tells changed and moved content apart, not content made to collide on purpose;
64 bits keep chance collisions out of reach for any dataset. Rows of one layout are
hashed together, a batch or several at a time (:func:`resolve`).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Union

import numpy
import torch

WORD = 8  # bytes
M = numpy.uint64(0x9E3779B97F4A7C15)
_SHIFT = numpy.uint64(29)
_LITTLE_WORDS = numpy.dtype("<u8")

# One field's bytes for every row: a (rows, width) uint8 matrix, or one bytes per row.
Part = Union[numpy.ndarray, list[bytes]]


class Rows(NamedTuple):
    """A batch's rows, hashed later with others of the same layout (the numpy steps
    then cost once for many batches): ``data`` is (rows, n) uint8."""

    layout: str
    data: numpy.ndarray


# A batch's hashes, or its rows still to hash.
Pending = Union[list[str], Rows]


def batch_hashes(batch: Any, size: int) -> list[str] | None:
    """Each row's hash in a batch of ``size`` laid out as default_collate lays it
    out; None when the batch is not such a layout."""
    rows = batch_rows(batch, size)
    return None if rows is None else resolve([rows])


def batch_rows(batch: Any, size: int) -> Pending | None:
    """The rows of a batch laid out as default_collate lays it out, to hash (a batch
    with plain values: its hashes); None when the batch is not such a layout."""
    plain = _plain_tensors(batch, size)
    if plain is not None:
        return plain
    parts: list[Part] = []
    layout: list[str] = []
    if not _collect(batch, size, "", parts, layout):
        return None
    text = "\n".join(layout)
    if all(isinstance(part, numpy.ndarray) for part in parts):
        if not parts:
            return Rows(text, numpy.zeros((size, 0), numpy.uint8))
        data = parts[0] if len(parts) == 1 else numpy.concatenate(parts, axis=1)
        return Rows(text, data)
    columns = [_row_bytes(part) for part in parts]
    return [bytes_hash(text, b"".join(row)) for row in zip(*columns)]


def _plain_tensors(batch: Any, size: int) -> Rows | None:
    """A tuple or list of CPU tensors of ``size`` rows, the commonest batch, read
    in fewer steps than :func:`_collect` takes (the same rows, the same layout)."""
    if type(batch) not in (tuple, list) or not batch:
        return None
    try:
        shapes = tuple((t.dtype, t.shape) for t in batch if type(t) is torch.Tensor)
        if len(shapes) != len(batch) or any(
                not shape or shape[0] != size for _, shape in shapes):  # fmt: skip
            return None
        arrays = [t.numpy() for t in batch]  # TypeError off the CPU, for bfloat16
    except (TypeError, RuntimeError):
        return None
    if any(array.size == 0 for array in arrays):
        return None
    data = numpy.concatenate(
        [numpy.ascontiguousarray(array).reshape(size, -1).view(numpy.uint8)
         for array in arrays], axis=1)  # fmt: skip
    return Rows(_tuple_layout(shapes), data)


@functools.lru_cache(maxsize=64)  # a dataset's batches share one or two layouts
def _tuple_layout(shapes: tuple[tuple[torch.dtype, torch.Size], ...]) -> str:
    return "\n".join(
        f"[{i}]:{dtype}{tuple(shape[1:])}" for i, (dtype, shape) in enumerate(shapes)
    )


def resolve(pending: list[Pending]) -> list[str]:
    """Every row's hash, in order: neighbouring rows of one layout hashed at once."""
    hashes: list[str] = []
    run: list[numpy.ndarray] = []
    for at, entry in enumerate(pending):
        if isinstance(entry, Rows):
            run.append(entry.data)
            following = pending[at + 1] if at + 1 < len(pending) else None
            if isinstance(following, Rows) and following.layout == entry.layout and (
                    following.data.shape[1] == entry.data.shape[1]):  # fmt: skip
                continue
            data = run[0] if len(run) == 1 else numpy.concatenate(run)
            hashes += hex_digests(digests(entry.layout, data))
            run = []
        else:
            hashes += entry
    return hashes


def item_rows(
    items: list[Any], batch: Any, collate: Callable[[list[Any]], Any]
) -> Pending:
    """The rows of ``items``, which ``collate`` made into ``batch``, to hash: read
    from the batch when it is default_collate's, else from default_collate(items)
    when the items stack; else the hashes of one example at a time."""
    rows = None
    if collate is torch.utils.data.default_collate:
        rows = batch_rows(batch, len(items))
    else:
        try:
            rows = batch_rows(torch.utils.data.default_collate(items), len(items))
        except (TypeError, RuntimeError):  # rows of other shapes: no common layout
            rows = None
    return rows if rows is not None else [content_hash(item) for item in items]


def item_hashes(
    items: list[Any], batch: Any, collate: Callable[[list[Any]], Any]
) -> list[str]:
    """The hash of each of ``items`` (see :func:`item_rows`)."""
    return resolve([item_rows(items, batch, collate)])


def content_hash(example: Any) -> str:
    """One example's hash, the same as its row's in a default_collate batch; an
    example that does not collate is one plain value."""
    try:
        hashes = batch_hashes(torch.utils.data.default_collate([example]), 1)
    except (TypeError, RuntimeError):
        hashes = None
    if hashes is not None:
        return hashes[0]
    return bytes_hash(":values", f":{type(example).__name__}:{example!r}".encode())


def bytes_hash(layout: str, data: bytes) -> str:
    """The hash of one example with this layout and these bytes."""
    row = numpy.frombuffer(data, numpy.uint8).reshape(1, len(data))
    return hex_digests(digests(layout, row))[0]


def digests(layout: str, data: numpy.ndarray) -> numpy.ndarray:
    """Each row's 64-bit hash, for a (rows, n) uint8 matrix of rows with ``layout``."""
    rows, width = data.shape
    words = -(-width // WORD)
    if width != words * WORD:
        padding = numpy.zeros((rows, words * WORD - width), numpy.uint8)
        data = numpy.concatenate([data, padding], axis=1)
    mixed = numpy.ascontiguousarray(data).view(_LITTLE_WORDS) ^ _keys(words)
    mixed *= M
    mixed ^= mixed >> _SHIFT
    total = mixed.sum(axis=1, dtype=numpy.uint64)  # modulo 2**64
    total ^= _seed(layout, width)
    return _splitmix64(total)


def hex_digests(values: numpy.ndarray) -> list[str]:
    """16 hex digits each, most significant first."""
    text = values.astype(">u8").tobytes().hex()
    return [text[start : start + 16] for start in range(0, len(text), 16)]


@functools.lru_cache(maxsize=64)  # a dataset has few layouts
def _seed(layout: str, width: int) -> numpy.uint64:
    digest = hashlib.blake2b(f"{layout}\0{width}".encode(), digest_size=WORD)
    return numpy.uint64(int.from_bytes(digest.digest(), "little"))


@functools.lru_cache(maxsize=64)
def _keys(words: int) -> numpy.ndarray:
    return _splitmix64(numpy.arange(1, words + 1, dtype=numpy.uint64))


def _splitmix64(value: numpy.ndarray) -> numpy.ndarray:
    """splitmix64's finalizer (a bijection on 64 bits), elementwise."""
    value = value ^ (value >> numpy.uint64(30))
    value *= numpy.uint64(0xBF58476D1CE4E5B9)
    value ^= value >> numpy.uint64(27)
    value *= numpy.uint64(0x94D049BB133111EB)
    value ^= value >> numpy.uint64(31)
    return value


def _collect(
    value: Any, size: int, path: str, parts: list[Part], layout: list[str]
) -> bool:
    if isinstance(value, torch.Tensor):
        if value.dim() == 0 or value.shape[0] != size:
            return False
        rows = _tensor_rows(value)
        if rows is None:
            return False
        parts.append(rows)
        layout.append(f"{path}:{value.dtype}{tuple(value.shape[1:])}")
        return True
    if isinstance(value, Mapping):
        return all(
            _collect(value[key], size, f"{path}.{key}", parts, layout)
            for key in sorted(value, key=str)
        )
    if isinstance(value, (list, tuple)):
        if all(
            isinstance(item, (torch.Tensor, Mapping, list, tuple)) for item in value
        ):
            return all(
                _collect(item, size, f"{path}[{i}]", parts, layout)
                for i, item in enumerate(value)
            )
        if len(value) != size:
            return False
        parts.append(  # strings, numbers: one per row
            [f"{path}:{type(v).__name__}:{v!r}".encode() for v in value]
        )
        layout.append(f"{path}:values")
        return True
    return False


def _tensor_rows(tensor: torch.Tensor) -> numpy.ndarray | None:
    """The field's rows' bytes, (rows, width) uint8."""
    rows = tensor.shape[0]
    try:  # numpy's view of a CPU tensor: fewer steps than torch's
        array = numpy.ascontiguousarray(tensor.detach().numpy())
        if not array.size:
            return numpy.zeros((rows, 0), numpy.uint8)
        return array.reshape(rows, -1).view(numpy.uint8)
    except (RuntimeError, TypeError):  # bfloat16, or not on the CPU
        pass
    try:
        data = tensor.detach().cpu().contiguous().reshape(rows, -1)
        data = data.view(torch.uint8) if data.shape[1] else data.to(torch.uint8)
    except (RuntimeError, TypeError):  # a layout without plain bytes (quantized)
        return None
    return data.numpy()


def _row_bytes(part: Part) -> list[bytes]:
    if not isinstance(part, numpy.ndarray):
        return part
    return [row.tobytes() for row in part]
