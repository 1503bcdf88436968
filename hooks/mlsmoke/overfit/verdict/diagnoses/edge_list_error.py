"""``data-error`` for graph layers: the edge list a message-passing layer raised on.

A message-passing layer (a module with ``propagate()``, torch_geometric's
``MessagePassing``) takes a graph's edges as a (2, E) tensor of int64 node ids: a row
of sources, a row of targets, each id below the number of nodes. When such a layer
raises, the batch's tensor that reached it with a dimension of 2 is read for the three
ways an edge list goes wrong: (E, 2) rows of pairs, float ids, ids counted from 1 (or
otherwise past the nodes). The error's own words vary with the layer; the tensor
does not.
"""

from __future__ import annotations

from typing import Any

import torch

from mlsmoke.overfit.training.batch_objects import named_tensors
from mlsmoke.overfit.verdict import batch_probes, forward_probes
from mlsmoke.overfit.verdict.diagnoses import _errors
from mlsmoke.overfit.verdict.diagnoses._codes import diagnoser
from mlsmoke.overfit.verdict.gate_run import GateRun
from mlsmoke.overfit.verdict.result import Diagnosis

CODE = "data-error"

SUGGESTIONS = [
    "an edge list is (2, E) int64: edge_index[0] holds the source nodes,"
    " edge_index[1] the targets",
    "node ids count from 0 to num_nodes - 1 within one graph; a Batch from"
    " torch_geometric's DataLoader offsets them per graph itself",
    "check it where the graph is built: Data.validate(raise_on_error=True) names"
    " what is wrong",
]


@diagnoser(CODE)
def diagnose(run: GateRun) -> Diagnosis | None:
    evidence = run.evidence
    if not _errors.raised_in_forward(evidence) or evidence.failed_module is None:
        return None
    layer = _graph_layer(run, evidence.failed_module)
    if layer is None:
        return None
    shapes = [tuple(s) for s in evidence.module_inputs.get(layer, [])]
    batch = batch_probes.shared_batch(run)
    for name, value in named_tensors(batch[0]) if batch else []:
        if tuple(value.shape) in shapes and _pairs(value):
            problem = edge_problem(value, _node_count(shapes, tuple(value.shape)))
            if problem is not None:
                return _report(run, layer, name, value, problem)
    return None


def edge_problem(edges: torch.Tensor, nodes: int | None) -> tuple[str, str] | None:
    """What is wrong with ``edges`` as an edge list of ``nodes`` nodes, and the fix;
    None when it is one."""
    rows, columns = (int(size) for size in edges.shape)
    if columns == 2 and rows != 2:
        return (
            f"{rows} edges as ({rows}, 2) rows of pairs, where a graph layer takes"
            f" (2, {rows}): a row of sources and a row of targets",
            "transpose it: edge_index = edge_index.t().contiguous()",
        )
    if edges.is_floating_point():
        return (
            f"node ids as {str(edges.dtype).replace('torch.', '')}, where a graph layer"
            " indexes with int64",
            "make it int64: edge_index = edge_index.long()",
        )
    if nodes is None or edges.numel() == 0 or int(edges.max()) < nodes:
        return None
    low, high = int(edges.min()), int(edges.max())
    if low >= 1 and high == nodes:
        return (
            f"node ids {low}..{high} for {nodes} nodes: they count from 1, where node"
            f" ids count from 0 (0..{nodes - 1})",
            "subtract 1 where the edges are read: edge_index = edge_index - 1",
        )
    return (
        f"node ids up to {high} for {nodes} nodes (ids 0..{nodes - 1}): edges point"
        " past the node features",
        "build the edges from the same node numbering as the node features (x)",
    )


def _graph_layer(run: GateRun, failed: str) -> str | None:
    """The failed module, or the nearest module around it, that passes messages."""
    capture = forward_probes.capture_forward(run)
    if capture is None:
        return None
    modules = dict(capture.model.named_modules())
    parts = failed.split(".") if failed else []
    for end in range(len(parts), -1, -1):
        name = ".".join(parts[:end])
        if callable(getattr(modules.get(name), "propagate", None)):
            return name
    return None


def _pairs(value: torch.Tensor) -> bool:
    """A 2-D tensor of whole numbers with a dimension of 2: an edge list's shape."""
    if value.dim() != 2 or 2 not in tuple(value.shape) or value.dtype == torch.bool:
        return False
    if value.is_floating_point():
        return value.numel() > 0 and bool(torch.equal(value, value.round()))
    return not value.is_complex()


def _node_count(shapes: list[tuple[int, ...]], edges: tuple[int, ...]) -> int | None:
    """The layer's node count: the rows of its first other input (the features x)."""
    for shape in shapes:
        if shape != edges and len(shape) >= 1:
            return int(shape[0])
    return None


def _report(
    run: GateRun, layer: str, name: str, value: Any, problem: tuple[str, str]
) -> Diagnosis:
    evidence = run.evidence
    held, fix = problem
    lines = [
        f"{_errors.where(evidence)} raised {_errors.raised(evidence)}",
        f"module {layer!r} passes messages along a graph's edges, and was given"
        f" {name}: {batch_probes.describe_value(value)}",
    ]
    shapes = _errors.input_shapes(evidence, layer)
    if shapes:
        lines.append(f"inputs of module {layer!r}: {shapes}")
    return Diagnosis(
        CODE,
        f"batch field {name} holds {held} ({_errors.where(evidence)})",
        lines,
        [fix, *SUGGESTIONS],
    )
