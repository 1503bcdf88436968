"""``mlsmoke suites``: record and check time per 1,000 examples, against a plain
evaluation loop over the same examples.

Two workloads: the template's residual MLP on spiral points, and a small transformer
(transformers' BertForSequenceClassification, 2 layers, width 64, 32 tokens). For
each, three runs over the same 4,000 examples (times quoted per 1,000), in batches
of 64, interleaved, in this process: the plain loop (build the model, load the
checkpoint, then per batch: index the dataset, collate, forward, per-example
cross-entropy, ``.tolist()``), the suites' record (the same evaluation with its
bookkeeping: content hashes, per-example records, label-issue hints, the suite files
written) and its check (the evaluation, the suite files read, identity verified,
compared). Target: record and check at most 1.2x the plain loop.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from benchmarks.report import Section

EXAMPLES = (
    4000  # figures are per 1,000: fixed costs (files, fsync) amortize as on a real set
)
BATCH = 64
TARGET = 1.2
THREADS = 1
TEMPLATE_MODEL = (
    Path(__file__).resolve().parents[1] / "templates" / "ml-project"
    / "{{cookiecutter.project_slug}}" / "src" / "{{cookiecutter.package_name}}"
    / "model.py"
)  # fmt: skip


def run(quick: bool) -> Section:
    repeats = 2 if quick else 7
    previous = torch.get_num_threads()
    torch.set_num_threads(THREADS)
    rows = []
    try:
        for name, workload in WORKLOADS.items():
            rows.append([name, *measure(workload(), repeats)])
    finally:
        torch.set_num_threads(previous)
    return Section(
        title="Regression suites: record and check against a plain evaluation loop",
        columns=["model", "plain loop s/1k", "record s/1k", "record / plain",
                 "check s/1k", "check / plain", "target"],  # fmt: skip
        rows=rows,
        notes=[
            f"median of {repeats} interleaved runs over {EXAMPLES} examples (times per"
            f" 1,000), batches of {BATCH}, CPU, torch.set_num_threads({THREADS});"
            " each run builds the model and loads the checkpoint",
            "record: evaluation + content hashes + suites (hard, wrong, slices) +"
            " label-issue hints + files written (atomically, with fsync) to a new"
            " directory; check: evaluation + files read +"
            " identity verified + comparison",
        ],
    )


def measure(workload: dict[str, Any], repeats: int) -> list[object]:
    from mlsmoke.suites import session
    from mlsmoke.suites.suite_file import read_directory

    with tempfile.TemporaryDirectory(prefix="mlsmoke-bench-suites-") as tmp:
        checkpoint = Path(tmp, "model.pt")
        torch.save({"model": workload["build"]().state_dict()}, checkpoint)
        directory = Path(tmp, "suites")
        settings, objects = _suites(workload)

        def plain() -> None:
            plain_loop(workload, checkpoint)

        fresh = iter(range(10**6))

        def record() -> None:  # into a new directory: every file is written
            evaluation = _evaluate(settings, objects, checkpoint)
            session.record(settings, evaluation, Path(tmp, f"record-{next(fresh)}"))

        def check() -> None:
            suites = read_directory(directory)
            evaluation = _evaluate(settings, objects, checkpoint)
            assert session.check(settings, suites, evaluation).passed

        evaluation = _evaluate(settings, objects, checkpoint)  # warm-up, and
        session.record(settings, evaluation, directory)  # the suites check reads
        times: dict[str, list[float]] = {"plain": [], "record": [], "check": []}
        actions: list[tuple[str, Callable[[], None]]] = [
            ("plain", plain), ("record", record), ("check", check)]  # fmt: skip
        for repeat in range(repeats):
            shift = repeat % len(actions)
            for name, action in actions[shift:] + actions[:shift]:
                start = time.perf_counter()
                action()
                times[name].append(time.perf_counter() - start)
    per_k = {name: statistics.median(t) * 1000 / EXAMPLES for name, t in times.items()}
    # per 1,000 examples, measured over EXAMPLES
    return [
        per_k["plain"],
        per_k["record"],
        f"{per_k['record'] / per_k['plain']:.2f}x",
        per_k["check"],
        f"{per_k['check'] / per_k['plain']:.2f}x",
        f"<= {TARGET}x",
    ]


def plain_loop(workload: dict[str, Any], checkpoint: Path) -> list[float]:
    """What a project's own evaluation script does: no hashes, no records."""
    model = workload["build"]()
    model.load_state_dict(torch.load(checkpoint, weights_only=True)["model"])
    model.eval()
    dataset, losses = workload["dataset"], []
    with torch.inference_mode():
        for start in range(0, len(dataset), BATCH):
            items = [dataset[i] for i in range(start, min(start + BATCH, len(dataset)))]
            batch = torch.utils.data.default_collate(items)
            logits, labels = workload["forward"](model, batch)
            loss = torch.nn.functional.cross_entropy(logits, labels, reduction="none")
            losses += loss.tolist()
    return losses


def _suites(workload: dict[str, Any]) -> tuple[Any, Any]:
    from mlsmoke.suites.project_objects import resolve
    from mlsmoke.suites.settings import SuitesSettings

    settings = SuitesSettings(model="bench:model", dataset="bench:dataset",
                              device="cpu", batch_size=BATCH)  # fmt: skip
    objects = resolve(settings, workload["build"], workload["dataset"])
    objects.slice = workload["slice"]
    settings.slice = "bench:slice"
    return settings, objects


def _evaluate(settings: Any, objects: Any, checkpoint: Path) -> Any:
    from mlsmoke.suites.evaluation import evaluate

    return evaluate(settings, objects, checkpoint, "checkpoint")


# Workloads ------------------------------------------------------------------------


def template_mlp() -> dict[str, Any]:
    """The template's model: a residual MLP on spiral points, 3 classes."""
    module = _template_model_module()

    def build() -> torch.nn.Module:
        torch.manual_seed(0)
        return module.build_model()

    generator = torch.Generator().manual_seed(0)
    x = torch.randn(EXAMPLES, 2, generator=generator)
    y = torch.arange(EXAMPLES) % 3
    return {
        "build": build,
        "dataset": torch.utils.data.TensorDataset(x, y),
        "forward": lambda model, batch: (model(batch[0])[0], batch[1]),
        "slice": lambda example: f"arm-{int(example[1])}",
    }


def _template_model_module() -> Any:
    """The template's model.py, as generated (it holds no template syntax)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(
        "bench_template_model", TEMPLATE_MODEL
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def small_transformer() -> dict[str, Any]:
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=128,
                        max_position_embeddings=64, num_labels=4)  # fmt: skip

    def build() -> torch.nn.Module:
        torch.manual_seed(0)
        return BertForSequenceClassification(config)

    generator = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, 1000, (EXAMPLES, 32), generator=generator)
    labels = torch.randint(0, 4, (EXAMPLES,), generator=generator)
    dataset = [
        {"input_ids": tokens[i], "attention_mask": torch.ones(32, dtype=torch.long),
         "labels": labels[i]}
        for i in range(EXAMPLES)
    ]  # fmt: skip

    def forward(model: torch.nn.Module, batch: dict) -> tuple[torch.Tensor, Any]:
        inputs = {k: v for k, v in batch.items() if k != "labels"}
        return model(**inputs).logits, batch["labels"]

    return {
        "build": build,
        "dataset": dataset,
        "forward": forward,
        "slice": lambda example: f"class-{int(example['labels'])}",
    }


WORKLOADS: dict[str, Callable[[], dict[str, Any]]] = {
    "template MLP (spirals)": template_mlp,
    "small transformer (BERT, 2x64)": small_transformer,
}
