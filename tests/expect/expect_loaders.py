"""Four kinds of data, each with the bugs of the field guide as switches and the
harmless changes as parameters: CHW images, nanoGPT-shaped token windows with shifted
targets, tabular features, and padded token batches as transformers' BatchEncoding.

Every factory returns what a project's ``batch`` callable returns: a DataLoader, an
iterator, or one batch per call.
"""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader, TensorDataset

IMAGES, CLASSES = 256, 10
VOCAB, BLOCK = 65, 16


def images(
    seed: int = 0,
    batch: int = 16,
    normalize: int = 1,  # how many times the /255 is applied: 0 removed, 2 twice
    hwc: bool = False,
    nan: bool = False,
    float64: bool = False,
    shuffle: bool = True,
    one_based: bool = False,
    augment: bool = False,
) -> DataLoader:
    """Images sorted by class, as many datasets on disk are: 3x8x8 pixels."""
    data = torch.Generator().manual_seed(1234)
    raw = torch.randint(0, 256, (IMAGES, 3, 8, 8), generator=data).float()
    labels = torch.arange(IMAGES) * CLASSES // IMAGES
    pixels = raw / 255.0**normalize
    if augment:  # a flip and a little noise, clipped: within the recorded ranges
        pixels = pixels.flip(-1) + 0.01 * torch.randn(pixels.shape, generator=data)
        pixels = pixels.clamp(0, 1)
    if hwc:
        pixels = pixels.permute(0, 2, 3, 1)
    if nan:
        pixels[::7, 0, 0] = float("nan")
    if float64:
        pixels = pixels.double()
    dataset = TensorDataset(pixels, labels + int(one_based))
    order = torch.Generator().manual_seed(seed)
    return DataLoader(dataset, batch_size=batch, shuffle=shuffle, generator=order)


def _text(seed: int = 99, vocab: int = VOCAB) -> torch.Tensor:
    return torch.randint(
        0, vocab, (4096,), generator=torch.Generator().manual_seed(seed)
    )


def token_windows(
    seed: int = 0,
    batch: int = 8,
    shift: int = 1,
    block: int = BLOCK,
    refactor: bool = False,
    vocab: int = VOCAB,
):
    """nanoGPT's get_batch: random windows of a token stream, the target the input
    moved by ``shift`` (0: the shift lost); ``vocab``: another tokenizer's."""
    data, generator = _text(vocab=vocab), torch.Generator().manual_seed(seed)

    def get_batch():
        ix = torch.randint(len(data) - block - 1, (batch,), generator=generator)
        if refactor:  # the same windows through unfold instead of a stacked loop
            windows = data.unfold(0, block + 1, 1)[ix]
            return windows[:, :block], windows[:, shift : shift + block]
        x = torch.stack([data[i : i + block] for i in ix])
        y = torch.stack([data[i + shift : i + shift + block] for i in ix])
        return x, y

    return get_batch


def tabular(
    seed: int = 0,
    batch: int = 32,
    standardize: bool = True,
    constant: bool = False,
    float64: bool = False,
    nan: bool = False,
) -> DataLoader:
    """Six features of different scales and a binary label; standardized by the
    loader, as a project's preprocessing does."""
    data = torch.Generator().manual_seed(77)
    rows = 512
    scale = torch.tensor([1.0, 10.0, 100.0, 0.1, 5.0, 50.0])
    offset = torch.tensor([0.0, 50.0, -20.0, 1.0, 3.0, 500.0])
    features = torch.randn(rows, 6, generator=data) * scale + offset
    labels = (features[:, 0] > 0).long()
    if standardize:
        features = (features - features.mean(0)) / features.std(0)
    if constant:
        features[:, 3] = 0.0
    if nan:
        features[:, 2] = torch.log(features[:, 2])  # negative values: NaN
    if float64:
        features = features.double()
    order = torch.Generator().manual_seed(seed)
    return DataLoader(
        TensorDataset(features, labels), batch_size=batch, shuffle=True, generator=order
    )


def tabular_validation(leak: bool = False) -> DataLoader:
    """The held-out rows, standardized by the training statistics; with ``leak``,
    the split is drawn from the training rows."""
    train = tabular(seed=0, batch=512)
    features, labels = next(iter(train))
    data = torch.Generator().manual_seed(78)
    scale = torch.tensor([1.0, 10.0, 100.0, 0.1, 5.0, 50.0])
    offset = torch.tensor([0.0, 50.0, -20.0, 1.0, 3.0, 500.0])
    held = torch.randn(128, 6, generator=data) * scale + offset
    held_labels = (held[:, 0] > 0).long()
    held = (held - offset) / scale
    if leak:
        held, held_labels = features[:128], labels[:128]
    return DataLoader(TensorDataset(held, held_labels), batch_size=32)


def encodings(
    seed: int = 0,
    batch: int = 8,
    side: str = "right",
    max_length: int = 12,
    labels_shifted: bool = False,
    mask_off: bool = False,
):
    """Padded token batches as a tokenizer returns them: ``BatchEncoding`` with
    input_ids, attention_mask and labels (the input, -100 at padding)."""
    from transformers import BatchEncoding

    generator = torch.Generator().manual_seed(seed)
    pad = 0

    def tokenize():
        lengths = torch.randint(4, max_length + 1, (batch,), generator=generator)
        ids = torch.full((batch, max_length), pad)
        mask = torch.zeros((batch, max_length), dtype=torch.long)
        for row, length in enumerate(lengths.tolist()):
            tokens = torch.randint(1, VOCAB, (length,), generator=generator)
            where = (
                slice(0, length)
                if side == "right"
                else slice(max_length - length, None)
            )
            ids[row, where], mask[row, where] = tokens, 1
        if mask_off:
            mask = torch.ones_like(mask)
        labels = ids.masked_fill(ids == pad, -100)
        if labels_shifted:
            labels = torch.cat([labels[:, 1:], torch.full((batch, 1), -100)], dim=1)
        return BatchEncoding(
            {"input_ids": ids, "attention_mask": mask, "labels": labels}
        )

    return tokenize


def one_hot(
    seed: int = 0,
    batch: int = 16,
    num_classes: int | None = CLASSES,
    one_based: bool = False,
    ids_one_based: bool = False,
    smoothing: float = 0.0,
) -> DataLoader:
    """Features with their class ids and a one-hot target built by the collate, as
    projects training with soft targets do: ``{"features", "label", "target"}``.
    ``num_classes=None`` is ``F.one_hot`` left to infer the width from the batch."""
    data = torch.Generator().manual_seed(55)
    features = torch.rand(IMAGES, 4, generator=data)
    labels = torch.arange(IMAGES) % CLASSES + int(one_based)

    def collate(rows):
        x = torch.stack([row[0] for row in rows])
        y = torch.stack([row[1] for row in rows])
        width = {} if num_classes is None else {"num_classes": num_classes}
        target = torch.nn.functional.one_hot(y, **width).float()
        target = target * (1 - smoothing) + smoothing / target.shape[1]
        return {"features": x, "label": y + int(ids_one_based), "target": target}

    order = torch.Generator().manual_seed(seed)
    return DataLoader(
        TensorDataset(features, labels),
        batch_size=batch,
        shuffle=True,
        generator=order,
        collate_fn=collate,
    )
