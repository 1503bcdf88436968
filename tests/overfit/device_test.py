"""Device selection, batches moved through containers, and the CUDA paths, simulated:
CUDA is faked available and the errors CUDA raises are raised where they would be."""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import pytest
import torch
from torch.nn import functional as F

from mlsmoke.overfit.gate import run_gate
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.training import batch_objects, device
from mlsmoke.overfit.training.evidence import ProjectProblem


@pytest.mark.parametrize(
    ("requested", "cuda", "mps", "expected"),
    [
        ("auto", True, True, "cuda"),
        ("auto", False, True, "mps"),
        ("auto", False, False, "cpu"),
        ("cpu", True, True, "cpu"),
        ("cuda:1", True, False, "cuda:1"),
    ],
)
def test_pick_device(requested, cuda, mps, expected):
    assert device.pick_device(requested, cuda=cuda, mps=mps) == expected


@pytest.mark.parametrize("requested", ["cuda", "cuda:0", "mps"])
def test_an_unavailable_device_names_the_device_key(requested):
    with pytest.raises(ProjectProblem) as raised:
        device.pick_device(requested, cuda=False, mps=False)
    assert raised.value.config_key == "device"


def test_auto_takes_cuda_when_torch_sees_it(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert device.resolve_device("auto") == "cuda"


Pair = namedtuple("Pair", "inputs labels")


@dataclass
class Features:
    values: torch.Tensor
    names: list[str]


def test_batch_to_moves_tensors_through_every_container():
    batch = {
        "pair": Pair(torch.zeros(2), torch.ones(2, dtype=torch.long)),
        "list": [torch.zeros(1), "text"],
        "features": Features(torch.zeros(3), ["a"]),
    }
    moved = device.batch_to(batch, "cpu", torch.float64)
    assert (
        isinstance(moved["pair"], Pair) and moved["pair"].inputs.dtype == torch.float64
    )
    assert moved["pair"].labels.dtype == torch.long  # integers keep their dtype
    assert moved["list"][1] == "text" and moved["list"][0].dtype == torch.float64
    assert isinstance(moved["features"], Features)
    assert moved["features"].values.dtype == torch.float64
    assert len(batch_objects.tensors_in(batch)) == 4


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (RuntimeError("CUDA error: device-side assert triggered\nCUDA kernel errors"),
         "device-side-assert"),
        (RuntimeError("CUDA error: an illegal memory access was encountered"),
         "illegal-memory-access"),
        (torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB"),
         "out-of-memory"),
        (RuntimeError("mat1 and mat2 shapes cannot be multiplied"), None),
        (ValueError("CUDA error: device-side assert triggered"), None),
    ],
)  # fmt: skip
def test_classify_cuda_error(error, kind):
    assert device.classify_cuda_error(error) == kind


# --- the simulated GPU: tensors stay on the CPU, the gate believes it has CUDA -------

ON = {"device": "cpu"}


@pytest.fixture
def fake_cuda(monkeypatch):
    def placement(name: str) -> torch.device:
        ON["device"] = name
        return torch.device("cpu")

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(device, "placement", placement)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    gib = 2**30
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda d=None: 7 * gib)
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda d=None: 7.5 * gib)
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda d=None: 7 * gib)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda d=None: (gib // 4, 8 * gib))
    yield
    ON["device"] = "cpu"


def classifier():
    return torch.nn.Linear(8, 2)  # 2 classes


def labels_out_of_range():
    return torch.randn(4, 8), torch.tensor([0, 1, 2, 1])  # label 2 with 2 logits


def loss_with_cuda_semantics(model, batch):
    inputs, labels = batch
    logits = model(inputs)
    if ON["device"].startswith("cuda"):
        # On a GPU the bad label trips an assert inside the kernel, reported later.
        raise RuntimeError("CUDA error: device-side assert triggered\nCompile with ...")
    return F.cross_entropy(logits, labels)  # the real line: IndexError on the CPU


def loss_out_of_memory(model, batch):
    if ON["device"].startswith("cuda"):
        raise torch.cuda.OutOfMemoryError(
            "CUDA out of memory. Tried to allocate 20.00 GiB (GPU 0; 8.00 GiB total)"
        )
    return model(batch[0]).sum()


def simulated(loss):
    return GateSettings(
        name="default", model=f"{__name__}:classifier", batch="x:y", device="auto"
    ), {"model": classifier, "batch": labels_out_of_range, "loss": loss}


def test_device_side_assert_reruns_on_the_cpu_to_find_the_real_line(fake_cuda):
    settings, factories = simulated(loss_with_cuda_semantics)
    result, run = run_gate(settings, factories=factories)
    assert run.evidence.rerun_of.device == "cuda"
    assert run.evidence.rerun_of.cuda_error == "device-side-assert"
    assert result.device == "cpu" and result.exit_code == 1
    report = result.report()
    assert "cuda" in report and "device-side assert" in report
    assert "return F.cross_entropy(logits, labels)" in report  # the CPU's traceback
    assert "IndexError" in report or "out of bounds" in report


def test_a_cuda_error_the_cpu_does_not_reproduce_is_reported_as_it_was(fake_cuda):
    def always_cuda_error(model, batch):
        if ON["device"].startswith("cuda"):
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        return model(batch[0]).pow(2).mean()

    settings, factories = simulated(always_cuda_error)
    factories["batch"] = lambda: (torch.randn(4, 8), torch.tensor([0, 1, 0, 1]))
    result, run = run_gate(settings, factories=factories)
    assert run.evidence.device == "cuda" and result.exit_code == 1
    assert "illegal memory access" in result.report()


def test_out_of_memory_fails_with_memory_figures_and_batch_size(fake_cuda):
    settings, factories = simulated(loss_out_of_memory)
    result, run = run_gate(settings, factories=factories)
    assert run.evidence.cuda_error == "out-of-memory" and run.evidence.rerun_of is None
    assert run.evidence.memory["total"] == 8 * 2**30
    report = result.report()
    assert result.exit_code == 1 and result.device == "cuda"
    assert "batch size" in report and "4" in report
    assert "7.00 GiB" in report and "8.00 GiB" in report
