"""The evaluation loop on plain values: a classifier's batches, evaluated in chunks,
give each example the hash of its content and the figures a batch at a time gives."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from mlsmoke.suites import evaluation
from mlsmoke.suites.evaluation import evaluate
from mlsmoke.suites.hashing import content_hash
from mlsmoke.suites.project_objects import resolve
from mlsmoke.suites.settings import SuitesSettings


class ScalesItsInputInPlace(torch.nn.Module):
    """A forward that changes its input tensor: the hashes must not see it."""

    def __init__(self) -> None:
        super().__init__()
        self.head = torch.nn.Linear(3, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(x.mul_(2.0))


@pytest.mark.parametrize("chunk_rows", [1, 20, 1024])
def test_chunks_give_every_example_its_own_hash_and_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_rows: int
) -> None:
    generator = torch.Generator().manual_seed(0)
    x, y = torch.randn(50, 3, generator=generator), torch.arange(50) % 4
    dataset = torch.utils.data.TensorDataset(x, y)
    expected = [content_hash((x[i].clone(), y[i])) for i in range(50)]
    torch.manual_seed(0)
    model = ScalesItsInputInPlace()
    checkpoint = tmp_path / "model.pt"
    torch.save(model.state_dict(), checkpoint)
    monkeypatch.setattr(evaluation, "CHUNK_ROWS", chunk_rows)
    settings = SuitesSettings(model="m:f", dataset="d:f", batch_size=8)
    objects = resolve(settings, ScalesItsInputInPlace, dataset)
    evaluated = evaluate(settings, objects, checkpoint, "checkpoint")
    assert evaluated.hashes == expected
    with torch.inference_mode():
        logits = model.head(2.0 * x)
    losses = torch.nn.functional.cross_entropy(logits, y, reduction="none")
    assert evaluated.losses == pytest.approx(losses.tolist(), rel=1e-5)
    assert evaluated.predictions == logits.argmax(1).tolist()
    assert evaluated.scores == (logits.argmax(1) == y).float().tolist()
    assert sorted(evaluated.class_confidence) == ["0", "1", "2", "3"]


class RecordsItsThreads(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.head = torch.nn.Linear(3, 4)
        self.threads: set[int] = set()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.threads.add(torch.get_num_threads())
        return self.head(x)


def test_a_small_model_is_evaluated_on_one_cpu_thread_then_the_count_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    dataset = torch.utils.data.TensorDataset(torch.randn(20, 3), torch.arange(20) % 4)
    models: list[RecordsItsThreads] = []

    def build() -> RecordsItsThreads:
        models.append(RecordsItsThreads())
        return models[-1]

    checkpoint = tmp_path / "model.pt"
    torch.save(RecordsItsThreads().state_dict(), checkpoint)
    settings = SuitesSettings(model="m:f", dataset="d:f", batch_size=8)
    previous = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        evaluate(settings, resolve(settings, build, dataset), checkpoint, "checkpoint")
        assert models[-1].threads == {1}
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(previous)
