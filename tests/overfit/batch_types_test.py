"""The gate trains on the project's own batch, whatever its type: torch_geometric's
Data, Batch and HeteroData, tensordict's TensorDict, transformers' BatchEncoding and
a project's own classes reach the loss as the factory made them; every probe reads
them; and the bugs users of those libraries make are named as they would name them."""

from __future__ import annotations

import os
from typing import Any

import pytest
import torch
from torch import nn

from mlsmoke.overfit.gate import run_gate
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.training import batch_objects, device
from mlsmoke.overfit.training.determinism import deterministic
from mlsmoke.overfit.verdict import batch_probes

import batch_type_models as m

CORRECT = {
    "gcn-on-data": (m.GCN, m.graph, m.node_loss),
    "gat-on-data": (m.GAT, m.graph, m.node_loss),
    "batch-from-dataloader": (m.GraphClassifier, m.graph_loader, m.graph_loss),
    "hetero-data": (m.HeteroGNN, m.hetero_graph, m.hetero_loss),
    "tensordict": (m.policy, m.transitions, m.policy_loss),
    "batch-encoding": (m.tiny_bert, m.encoding, None),
    "class-with-to": (m.mlp, m.movable_batch, m.object_loss),
    "class-without-to": (m.mlp, m.plain_batch, m.object_loss),
}


def gate(model: Any, batch: Any, loss: Any = None, **settings: Any) -> Any:
    factories = {"model": model, "batch": batch}
    if loss is not None:
        factories["loss"] = loss
    options = GateSettings(name="default", model="m:model", batch="m:batch")
    for key, value in settings.items():
        setattr(options, key, value)
    return run_gate(options, factories=factories)


@pytest.mark.parametrize("case", CORRECT)
def test_a_correct_model_passes_on_its_librarys_batch(case):
    result, _ = gate(*CORRECT[case])
    assert result.passed, result.report()
    codes = [warning.code for warning in result.warnings]
    assert "batch-mixing" not in codes  # message passing mixes nodes by design


@pytest.mark.parametrize("case", CORRECT)
def test_the_loss_receives_the_factorys_batch(case):
    model, factory, loss = CORRECT[case]
    if case == "batch-from-dataloader":  # the same graphs in the factory's order
        factory = lambda: m.graph_loader(shuffle=False)  # noqa: E731
    received: list[tuple[type, list[str], list[tuple[str, torch.Tensor]]]] = []

    def recording_loss(model: nn.Module, batch: Any) -> torch.Tensor:
        # as it arrives: a TensorDictModule then writes its output into the batch
        tensors = [(n, t.clone()) for n, t in batch_objects.named_tensors(batch)]
        received.append((type(batch), _attribute_names(batch), tensors))
        if loss is None:
            return model(**batch).loss
        return loss(model, batch)

    gate(model, factory, recording_loss, max_steps=3)
    expected = _first_batch(factory())
    kind, names, tensors = received[0]
    assert kind is type(expected)
    assert names == _attribute_names(expected)
    want = batch_objects.named_tensors(expected)
    assert [name for name, _ in tensors] == [name for name, _ in want]
    for (name, a), (_, b) in zip(tensors, want):
        assert a.dtype == b.dtype and a.device == b.device, name
        assert torch.equal(a, b), name
    assert all(kind is type(expected) for kind, _, _ in received)


def _first_batch(produced: Any) -> Any:
    with deterministic(GateSettings.seed):  # a shuffling loader draws the gate's batch
        return next(iter(produced)) if hasattr(produced, "dataset") else produced


def _attribute_names(batch: Any) -> list[str]:
    return sorted(name for name, _ in batch_objects.fields(batch) or [])


@pytest.mark.parametrize(
    ("bug", "words"),
    [
        ("transposed", ["edge_index", "(32, 2)", "(2, 32)", ".t().contiguous()"]),
        ("float", ["edge_index", "float32", "int64", ".long()"]),
        ("one-based", ["edge_index", "1..16", "count from 1", "edge_index - 1"]),
    ],
)
@pytest.mark.parametrize("model", [m.GCN, m.GAT], ids=["gcn", "gat"])
def test_an_edge_list_bug_is_named_as_a_graph_user_names_it(model, bug, words):
    result, _ = gate(model, lambda: m.graph(bug), m.node_loss)
    assert result.diagnosis.code == "data-error", result.report()
    text = result.diagnosis.summary + " ".join(result.diagnosis.suggestions)
    for word in words:
        assert word in text, result.report()


def test_an_edge_list_bug_in_a_loaders_batch_and_a_hetero_graph():
    result, _ = gate(
        m.GraphClassifier, lambda: m.graph_loader("one-based"), m.graph_loss
    )
    assert result.diagnosis.code == "data-error", result.report()
    assert "edge_index" in result.diagnosis.summary
    result, _ = gate(m.HeteroGNN, lambda: m.hetero_graph("transposed"), m.hetero_loss)
    assert result.diagnosis.code == "data-error", result.report()
    assert "(author, writes, paper).edge_index" in result.diagnosis.summary
    assert "(12, 2) rows of pairs" in result.diagnosis.summary


def test_float_targets_in_a_tensordict_and_a_batch_encoding_are_named():
    result, _ = gate(m.policy, lambda: m.transitions("float-action"), m.policy_loss)
    assert result.diagnosis.code == "data-error", result.report()
    assert "action" in result.diagnosis.summary
    result, _ = gate(m.tiny_bert, lambda: m.encoding("float-labels"))
    assert result.diagnosis.code == "data-error", result.report()
    assert "labels" in result.diagnosis.summary


def test_the_inventory_lists_a_graphs_and_a_tensordicts_fields():
    _, run = gate(m.GCN, m.graph, m.node_loss, max_steps=2)
    assert [f.name for f in run.evidence.batch_fields] == ["x", "edge_index", "y"]
    assert all(f.problem is None for f in run.evidence.batch_fields)
    _, run = gate(m.HeteroGNN, m.hetero_graph, m.hetero_loss, max_steps=2)
    names = [f.name for f in run.evidence.batch_fields]
    assert {"paper.x", "paper.y", "author.x"} <= set(names)
    assert "(author, writes, paper).edge_index" in names
    _, run = gate(m.policy, m.transitions, m.policy_loss, max_steps=2)
    names = {f.name for f in run.evidence.batch_fields}
    assert names == {"action", "next", "observation"}
    assert all(f.problem is None for f in run.evidence.batch_fields)


def test_the_seed_check_reads_a_graph_nan_aware():
    def with_nan() -> Any:
        data = m.graph()
        data.x[0, 0] = float("nan")
        return data

    def unseeded() -> Any:
        data = m.graph()
        data.x = data.x + int.from_bytes(os.urandom(2), "little")
        return data

    _, run = gate(m.GCN, with_nan, m.node_loss, max_steps=2)
    assert batch_probes.differing_batch_field(run) is None
    _, run = gate(m.GCN, unseeded, m.node_loss, max_steps=2)
    assert batch_probes.differing_batch_field(run) == "x"


CASTS = {
    "data": m.graph,
    "hetero-data": m.hetero_graph,
    "tensordict": m.transitions,
    "batch-encoding": lambda: _with_float(m.encoding()),
    "class-with-to": m.movable_batch,
    "class-without-to": m.plain_batch,
}


def _with_float(encoding: Any) -> Any:
    encoding["scores"] = torch.rand(12)
    return encoding


@pytest.mark.parametrize("case", CASTS)
def test_a_float64_run_casts_the_floats_inside_a_copy_of_the_batch(case):
    original = CASTS[case]()
    before = [(n, t.dtype) for n, t in batch_objects.named_tensors(original)]
    not_cast: list[str] = []
    cast = device.batch_to(original, "cpu", torch.float64, [], not_cast)
    assert type(cast) is type(original) and not not_cast
    after = dict(batch_objects.named_tensors(cast))
    for name, dtype in before:
        wanted = torch.float64 if dtype.is_floating_point else dtype
        assert after[name].dtype == wanted, name
    assert [(n, t.dtype) for n, t in batch_objects.named_tensors(original)] == before


class Overflowing(nn.Module):
    """exp() of large logits: inf in float32 (above 88), finite in float64."""

    def __init__(self) -> None:
        super().__init__()
        self.gcn = m.GCN()

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        scores = torch.exp(self.gcn(x, edge_index) * 0 + 100.0)
        return torch.log(scores / scores.sum(-1, keepdim=True))


def test_the_float64_rerun_of_a_non_finite_loss_runs_on_the_graph():
    result, _ = gate(
        Overflowing,
        m.graph,
        lambda model, data: nn.functional.nll_loss(
            model(data.x, data.edge_index), data.y
        ),
    )
    assert result.diagnosis.code == "non-finite", result.report()
    assert "precision" in result.diagnosis.summary, result.report()
    assert any("in float64 the loss" in line for line in result.diagnosis.evidence)


# --- on a GPU (simulated): what moves, and what stays -------------------------------


@pytest.fixture
def fake_cuda(monkeypatch):
    moved_to: list[str] = []

    def placement(name: str) -> torch.device:
        moved_to.append(name)
        return torch.device("cpu")

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(device, "placement", placement)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    return moved_to


def test_on_a_gpu_an_object_without_to_stays_and_the_gate_says_why(fake_cuda):
    result, _ = gate(m.mlp, m.plain_batch, m.object_loss, device="auto")
    warnings = {w.code: w.message for w in result.warnings}
    assert "batch-not-moved" in warnings, result.report()
    assert "PlainBatch" in warnings["batch-not-moved"]
    assert ".to(device)" in warnings["batch-not-moved"]


def test_on_a_gpu_an_object_with_to_moves_itself(fake_cuda, monkeypatch):
    devices: list[Any] = []
    original = m.MovableBatch.to

    def recording(self: Any, where: Any) -> Any:
        devices.append(where)
        return original(self, where)

    monkeypatch.setattr(m.MovableBatch, "to", recording)
    result, _ = gate(m.mlp, m.movable_batch, m.object_loss, device="auto")
    assert devices and "batch-not-moved" not in [w.code for w in result.warnings]
    assert "cuda" in fake_cuda


def test_an_object_without_tensors_is_passed_through_without_a_word(fake_cuda):
    class Meta:
        def __init__(self) -> None:
            self.source = "train.jsonl"

    not_moved: list[str] = []
    batch = {"x": torch.zeros(2), "meta": Meta(), "plain": m.plain_batch()}
    moved = device.batch_to(batch, "cuda", None, not_moved)
    assert moved["meta"] is batch["meta"] and moved["plain"] is batch["plain"]
    assert len(not_moved) == 1 and "a PlainBatch" in not_moved[0]
