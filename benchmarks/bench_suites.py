"""``mlsmoke suites``: record and check time per 1,000 examples, against a plain
evaluation loop over the same examples.

Three workloads: the template's residual MLP trained on spiral points (its suites as a
user has them: few wrong examples), the same MLP untrained on labels it cannot learn
(two thirds of the set in ``wrong``: the most a record writes and a check reads), and
a small transformer untrained on random labels (transformers'
BertForSequenceClassification, 2 layers, width 64, 32 tokens). For
each, three runs over the same 4,000 examples (times quoted per 1,000), in batches
of 64, on the CPU, interleaved in this process (each round runs the three in a
rotated order):

- the plain loop: what a project's own evaluation script does. Build the model, load
  the checkpoint, then per batch: index the dataset, collate, forward, per-example
  cross-entropy, argmax, the batch's accuracy, and the losses and predictions to
  Python once per batch;
- the suites' record: the same evaluation with its bookkeeping (content hashes,
  per-example loss, score, prediction and probabilities, slices, the suites chosen,
  label-issue hints, every suite file written, atomically, to a new directory), as
  ``mlsmoke suites record`` does after its worker evaluated;
- the suites' check: the suite files read, the same evaluation (no slices: a check
  does not use them), identity verified, compared, as ``mlsmoke.suites.check`` does.

A ratio is the median over rounds of the round's record (or check) time over its
plain time. Target: record and check at most 1.2x the plain loop.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from benchmarks.machine import load_average
from benchmarks.report import Section

EXAMPLES = (
    4000  # figures are per 1,000: fixed costs (files, fsync) amortize as on a real set
)
BATCH = 64
TARGET = 1.2
THREADS = 1
TEMPLATE_PACKAGE = (
    Path(__file__).resolve().parents[1] / "templates" / "ml-project"
    / "{{cookiecutter.project_slug}}" / "src" / "{{cookiecutter.package_name}}"
)  # fmt: skip


def run(quick: bool) -> Section:
    repeats = 3 if quick else 15
    previous = torch.get_num_threads()
    torch.set_num_threads(THREADS)
    rows, loads = [], [load_average()]
    try:
        for name, workload in WORKLOADS.items():
            rows.append([name, *measure(workload(), repeats)])
            loads.append(load_average())
    finally:
        torch.set_num_threads(previous)
    return Section(
        title="Regression suites: record and check against a plain evaluation loop",
        columns=["model", "plain loop s/1k", "record s/1k", "record / plain",
                 "check s/1k", "check / plain", "target"],  # fmt: skip
        rows=rows,
        notes=[
            f"{repeats} interleaved rounds over {EXAMPLES} examples (times per 1,000,"
            f" medians), batches of {BATCH}, CPU, torch.set_num_threads({THREADS})"
            f" (torch.get_num_threads() = {THREADS}); each run builds the model and"
            " loads the checkpoint; a ratio is the median of the rounds' ratios",
            "plain loop: index, collate, forward, per-example cross-entropy, argmax,"
            " accuracy, .tolist() of losses and predictions per batch",
            "record: evaluation + content hashes + per-example records + slices +"
            " suites (hard, wrong, slices) + label-issue hints + files written"
            " (atomically, with fsync) to a new directory; check: files read +"
            " evaluation + identity verified + comparison",
            "load average (1, 5, 15 min) before and after each workload: "
            + "; ".join(loads),
        ],
    )


def measure(workload: dict[str, Any], repeats: int) -> list[object]:
    from mlsmoke.suites import session
    from mlsmoke.suites.suite_file import read_directory

    with tempfile.TemporaryDirectory(prefix="mlsmoke-bench-suites-") as tmp:
        checkpoint = Path(tmp, "model.pt")
        state = workload.get("state") or workload["build"]().state_dict()
        torch.save({"model": state}, checkpoint)
        directory = Path(tmp, "suites")
        settings, recording, checking = _suites(workload)

        def plain() -> None:
            plain_loop(workload, checkpoint)

        fresh = iter(range(10**6))

        def record() -> None:  # into a new directory: every file is written
            evaluation = _evaluate(settings, recording, checkpoint)
            session.record(settings, evaluation, Path(tmp, f"record-{next(fresh)}"))

        def check() -> None:
            suites = read_directory(directory)
            evaluation = _evaluate(settings, checking, checkpoint)
            assert session.check(settings, suites, evaluation).passed

        evaluation = _evaluate(settings, recording, checkpoint)  # warm-up, and
        session.record(settings, evaluation, directory)  # the suites check reads
        times = rounds(
            {"plain": plain, "record": record, "check": check}, repeats
        )  # fmt: skip
    per_k = {name: statistics.median(t) * 1000 / EXAMPLES for name, t in times.items()}
    return [
        per_k["plain"],
        per_k["record"],
        f"{ratio(times['record'], times['plain']):.2f}x",
        per_k["check"],
        f"{ratio(times['check'], times['plain']):.2f}x",
        f"<= {TARGET}x",
    ]


def rounds(
    actions: dict[str, Callable[[], None]], repeats: int
) -> dict[str, list[float]]:
    """Each action's seconds in each round; round r starts with action r mod n, so
    no action always follows the same one."""
    names = list(actions)
    times: dict[str, list[float]] = {name: [] for name in names}
    for repeat in range(repeats):
        shift = repeat % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            actions[name]()
            times[name].append(time.perf_counter() - start)
    return times


def ratio(times: list[float], plain: list[float]) -> float:
    """The median of the rounds' ratios: each round's runs are seconds apart, so a
    load that comes and goes moves both sides of a ratio alike."""
    return statistics.median(t / p for t, p in zip(times, plain))


def plain_loop(workload: dict[str, Any], checkpoint: Path) -> tuple[list, list, float]:
    """What a project's own evaluation script does: no hashes, no records."""
    model = workload["build"]()
    model.load_state_dict(torch.load(checkpoint, weights_only=True)["model"])
    model.eval()
    dataset, losses, predictions, correct = workload["dataset"], [], [], 0
    with torch.inference_mode():
        for start in range(0, len(dataset), BATCH):
            items = [dataset[i] for i in range(start, min(start + BATCH, len(dataset)))]
            batch = torch.utils.data.default_collate(items)
            logits, labels = workload["forward"](model, batch)
            loss = torch.nn.functional.cross_entropy(logits, labels, reduction="none")
            prediction = logits.argmax(dim=-1)
            correct += int((prediction == labels).sum())
            losses += loss.tolist()
            predictions += prediction.tolist()
    return losses, predictions, correct / len(dataset)


def _suites(workload: dict[str, Any]) -> tuple[Any, Any, Any]:
    """The settings, and the objects a record and a check evaluate with."""
    from mlsmoke.suites import session
    from mlsmoke.suites.project_objects import resolve
    from mlsmoke.suites.settings import SuitesSettings

    settings = SuitesSettings(model="bench:model", dataset="bench:dataset",
                              device="cpu", batch_size=BATCH)  # fmt: skip
    recording = resolve(settings, workload["build"], workload["dataset"])
    recording.slice = workload["slice"]
    settings.slice = "bench:slice"
    checking = resolve(session.for_check(settings), workload["build"],
                       workload["dataset"])  # fmt: skip
    return settings, recording, checking


def _evaluate(settings: Any, objects: Any, checkpoint: Path) -> Any:
    from mlsmoke.suites.evaluation import evaluate

    return evaluate(settings, objects, checkpoint, "checkpoint")


# Workloads ------------------------------------------------------------------------


def trained_template_mlp() -> dict[str, Any]:
    """The template as a user has it: its MLP trained (300 steps of its recipe) and
    evaluated on spiral points it did not train on, sliced by arm."""
    package = _template_package()

    def build() -> torch.nn.Module:
        torch.manual_seed(0)
        return package.build_model()

    readings, y = package.spirals(EXAMPLES, seed=1)
    x = package.normalize(readings).round(decimals=4)  # as the template's eval_set
    return {
        "build": build,
        "state": _trained(package, build()),
        "dataset": torch.utils.data.TensorDataset(x, y),
        "forward": lambda model, batch: (model(batch[0])[0], batch[1]),
        "slice": package.data.arm,
    }


def untrained_template_mlp() -> dict[str, Any]:
    """The template's MLP untrained, on random points with labels it cannot learn:
    two thirds of the set is wrong, so the ``wrong`` suite is as large as it gets."""
    package = _template_package()

    def build() -> torch.nn.Module:
        torch.manual_seed(0)
        return package.build_model()

    generator = torch.Generator().manual_seed(0)
    x = torch.randn(EXAMPLES, 2, generator=generator)
    y = torch.arange(EXAMPLES) % 3
    return {
        "build": build,
        "dataset": torch.utils.data.TensorDataset(x, y),
        "forward": lambda model, batch: (model(batch[0])[0], batch[1]),
        "slice": package.data.arm,
    }


def _trained(package: Any, model: torch.nn.Module) -> dict[str, torch.Tensor]:
    config = package.TrainConfig(steps=300)
    optimizer, scheduler = package.make_optimizer(model.parameters(), config)
    loader, step = package.train_loader(config), 0
    while step < config.steps:
        for x, y in loader:
            _, loss = model(x, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            step += 1
    return model.state_dict()


def _template_package() -> Any:
    """The template's package, as generated (its modules hold no template syntax)."""
    import importlib.util
    import sys

    name = "bench_template_package"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, TEMPLATE_PACKAGE / "__init__.py",
        submodule_search_locations=[str(TEMPLATE_PACKAGE)],
    )  # fmt: skip
    package = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = package
    spec.loader.exec_module(package)  # type: ignore[union-attr]
    return package


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
    "template MLP, trained (spirals)": trained_template_mlp,
    "template MLP, untrained (random labels)": untrained_template_mlp,
    "small transformer (BERT, 2x64)": small_transformer,
}
