"""Models and batches as users of each batch library write them: torch_geometric
graphs (Data, a Batch from its DataLoader, HeteroData), a tensordict TensorDict with
a TensorDictModule, a transformers BatchEncoding, and a project's own batch classes.
Each batch function takes the bug a user of that library makes, or none."""

from __future__ import annotations

from typing import Any

import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule, TensorDictSequential
from torch import nn
from torch.nn import functional as F
from torch_geometric.data import Data, HeteroData
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GATConv, GCNConv, HeteroConv, SAGEConv, global_mean_pool
from transformers import BatchEncoding

NODES, FEATURES, CLASSES = 16, 16, 3


def _generator() -> torch.Generator:
    return torch.Generator().manual_seed(0)


def ring_edges(nodes: int, offset: int = 0) -> torch.Tensor:
    """A ring, both directions: every node's neighbourhood differs from the others'."""
    source = torch.arange(nodes)
    target = (source + 1) % nodes
    return torch.stack([torch.cat([source, target]), torch.cat([target, source])]) + (
        offset
    )


def with_edge_bug(edges: torch.Tensor, bug: str | None) -> torch.Tensor:
    if bug == "transposed":  # (E, 2) pairs, as read from an edge-list file
        return edges.t().contiguous()
    if bug == "float":  # built from a float array
        return edges.float()
    if bug == "one-based":  # node ids as numbered in the source data
        return edges + 1
    return edges


# --- torch_geometric: a node classifier on one graph ---------------------------------


def graph(bug: str | None = None) -> Data:
    g = _generator()
    return Data(
        x=torch.randn(NODES, FEATURES, generator=g),
        edge_index=with_edge_bug(ring_edges(NODES), bug),
        y=torch.randint(0, CLASSES, (NODES,), generator=g),
    )


class GCN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = GCNConv(FEATURES, 32)
        self.conv2 = GCNConv(32, CLASSES)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        return self.conv2(self.conv1(x, edge_index).relu(), edge_index)


class GAT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = GATConv(FEATURES, 16, heads=2)
        self.conv2 = GATConv(32, CLASSES)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        return self.conv2(F.elu(self.conv1(x, edge_index)), edge_index)


def node_loss(model: nn.Module, data: Data) -> torch.Tensor:
    return F.cross_entropy(model(data.x, data.edge_index), data.y)


# --- torch_geometric: a graph classifier on a Batch from its DataLoader --------------


def graph_loader(bug: str | None = None, shuffle: bool = True) -> DataLoader:
    g = _generator()
    graphs = [
        Data(
            x=torch.randn(5 + i % 3, FEATURES, generator=g),
            edge_index=with_edge_bug(ring_edges(5 + i % 3), bug),
            y=torch.tensor([i % CLASSES]),
        )
        for i in range(6)
    ]
    return DataLoader(graphs, batch_size=6, shuffle=shuffle)


class GraphClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = GCNConv(FEATURES, 32)
        self.head = nn.Linear(32, CLASSES)

    def forward(
        self, x: torch.Tensor, edge_index: torch.Tensor, batch: torch.Tensor
    ) -> torch.Tensor:
        return self.head(global_mean_pool(self.conv(x, edge_index).relu(), batch))


def graph_loss(model: nn.Module, data: Any) -> torch.Tensor:
    return F.cross_entropy(model(data.x, data.edge_index, data.batch), data.y)


# --- torch_geometric: a heterogeneous graph ------------------------------------------

PAPERS, AUTHORS = 12, 6
WRITES = ("author", "writes", "paper")
WRITTEN_BY = ("paper", "written_by", "author")
CITES = ("paper", "cites", "paper")


def hetero_graph(bug: str | None = None) -> HeteroData:
    g = _generator()
    data = HeteroData()
    data["paper"].x = torch.randn(PAPERS, FEATURES, generator=g)
    data["paper"].y = torch.randint(0, CLASSES, (PAPERS,), generator=g)
    data["author"].x = torch.randn(AUTHORS, FEATURES, generator=g)
    papers = torch.arange(PAPERS)
    data[WRITES].edge_index = with_edge_bug(
        torch.stack([papers % AUTHORS, papers]), bug
    )
    data[WRITTEN_BY].edge_index = data[WRITES].edge_index.flip(0)
    data[CITES].edge_index = ring_edges(PAPERS)
    return data


class HeteroGNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = HeteroConv(
            {
                WRITES: SAGEConv((FEATURES, FEATURES), 32),
                WRITTEN_BY: SAGEConv((FEATURES, FEATURES), 32),
                CITES: SAGEConv(FEATURES, 32),
            },
            aggr="sum",
        )
        self.head = nn.Linear(32, CLASSES)

    def forward(self, x_dict: dict, edge_index_dict: dict) -> torch.Tensor:
        return self.head(self.conv(x_dict, edge_index_dict)["paper"].relu())


def hetero_loss(model: nn.Module, data: HeteroData) -> torch.Tensor:
    return F.cross_entropy(model(data.x_dict, data.edge_index_dict), data["paper"].y)


# --- tensordict: a TensorDict batch and a TensorDictModule ---------------------------


def policy() -> TensorDictSequential:
    network = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, CLASSES))
    return TensorDictSequential(
        TensorDictModule(network, in_keys=["observation"], out_keys=["logits"])
    )


def transitions(bug: str | None = None) -> TensorDict:
    g = _generator()
    action = torch.randint(0, CLASSES, (16,), generator=g)
    return TensorDict(
        {
            "observation": torch.randn(16, 8, generator=g),
            "action": action.float() if bug == "float-action" else action,
            "next": {"reward": torch.randn(16, 1, generator=g)},
        },
        batch_size=[16],
    )


def policy_loss(model: nn.Module, batch: TensorDict) -> torch.Tensor:
    return F.cross_entropy(model(batch)["logits"], batch["action"])


# --- transformers: a BatchEncoding ---------------------------------------------------


def tiny_bert() -> nn.Module:
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
        num_labels=CLASSES,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        initializer_range=0.1,
    )
    return BertForSequenceClassification(config)


def encoding(bug: str | None = None) -> BatchEncoding:
    g = _generator()
    input_ids = torch.randint(1, 100, (12, 10), generator=g)
    labels = torch.arange(12) % CLASSES
    return BatchEncoding(
        {
            "input_ids": input_ids,
            "attention_mask": torch.ones_like(input_ids),
            "labels": labels.float() if bug == "float-labels" else labels,
        }
    )


# --- a project's own batch classes ----------------------------------------------------


class MovableBatch:
    """A project's batch with its own .to(), returning a moved copy."""

    def __init__(self, features: torch.Tensor, labels: torch.Tensor) -> None:
        self.features, self.labels = features, labels

    def to(self, device: Any) -> MovableBatch:
        return MovableBatch(self.features.to(device), self.labels.to(device))


class PlainBatch:
    """A project's batch with no .to(): the gate can neither rebuild nor move it."""

    def __init__(self, features: torch.Tensor, labels: torch.Tensor) -> None:
        self.features, self.labels = features, labels


def movable_batch() -> MovableBatch:
    g = _generator()
    return MovableBatch(
        torch.randn(16, 8, generator=g), torch.randint(0, CLASSES, (16,), generator=g)
    )


def plain_batch() -> PlainBatch:
    g = _generator()
    return PlainBatch(
        torch.randn(16, 8, generator=g), torch.randint(0, CLASSES, (16,), generator=g)
    )


def mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, CLASSES))


def object_loss(model: nn.Module, batch: Any) -> torch.Tensor:
    return F.cross_entropy(model(batch.features), batch.labels)
