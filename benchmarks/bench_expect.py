"""data-expectations: record and check time on the template's loader and on a
nanoGPT-shaped token loader, the check's own cost beyond loading the batches, and
pandera's inference and validation of the same columns (side by side, one run).

In this process, one torch thread: loading 4 batches, then observing them and
inferring (record) or checking (check). The command's wall time (a process of its own,
torch imported) and a cached pass are measured with ``mlsmoke expect`` itself, on the
template and on a project whose batch factory is the token loader.
"""

from __future__ import annotations

import inspect
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from cookiecutter.main import cookiecutter

from benchmarks.report import Section
from mlsmoke.expect.checking import check
from mlsmoke.expect.draw import draw_batches
from mlsmoke.expect.kinds import MODEL_KINDS
from mlsmoke.expect.kinds.base import Observed
from mlsmoke.expect.model_probe import probe_model
from mlsmoke.expect.observe import observe_batch
from mlsmoke.expect.record import infer
from mlsmoke.expect.suite_file import Suite
from mlsmoke.overfit.training.determinism import deterministic

ROOT = Path(__file__).resolve().parents[1]
MLSMOKE = Path(sys.executable).parent / "mlsmoke"
BATCHES = 4
OVERHEAD_TARGET = 0.3  # seconds: the check beyond loading the batches


def token_loader(seed: int = 0, batch: int = 12, block: int = 64):
    """nanoGPT's get_batch over a 100k-token stream (vocabulary 65)."""
    data = torch.randint(0, 65, (100_000,), generator=torch.Generator().manual_seed(1))
    generator = torch.Generator().manual_seed(seed)

    def get_batch():
        ix = torch.randint(len(data) - block - 1, (batch,), generator=generator)
        x = torch.stack([data[i : i + block] for i in ix])
        y = torch.stack([data[i + 1 : i + 1 + block] for i in ix])
        return x, y

    return get_batch


class TokenModel(torch.nn.Module):
    """nanoGPT's ends, no blocks: token embedding, head, ``(logits, loss)``."""

    def __init__(self, vocab: int = 65, width: int = 64) -> None:
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, width)
        self.lm_head = torch.nn.Linear(width, vocab)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor):
        logits = self.lm_head(self.wte(idx))  # (B, T, V)
        loss = torch.nn.functional.cross_entropy(
            logits.view(-1, logits.size(-1)), targets.view(-1)
        )
        return logits, loss


def run(quick: bool) -> Section:
    torch.set_num_threads(1)
    repeats = 3 if quick else 9
    rows: list[list[object]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="mlsmoke-bench-expect-") as tmp:
        project = Path(cookiecutter(str(ROOT / "templates" / "ml-project"),
                                    no_input=True, output_dir=tmp))  # fmt: skip
        sys.path.insert(0, str(project / "src"))
        try:
            from spiral_classifier.data import train_loader
            from spiral_classifier.model import build_model
            from spiral_classifier.recipe import TrainConfig
        finally:
            sys.path.remove(str(project / "src"))
        workloads: dict[str, Callable[[], Any]] = {
            "template loader (64 x 2 floats, labels)": train_loader,
            "token loader (12 x 64 ids, shifted targets)": token_loader(),
        }
        models = [build_model, TokenModel]
        overheads = []
        for (label, factory), model in zip(workloads.items(), models):
            for with_model in (None, model):
                figures = _in_process(factory, repeats, with_model)
                overheads.append(figures["check"])
                named = f"{label}{', the model' if with_model else ''}"
                rows.append([named, *(f"{figures[k] * 1000:.1f} ms" for k in
                                      ("load", "record", "check"))])  # fmt: skip
        variants = {
            "template": lambda seed, size: lambda: train_loader(
                TrainConfig(seed=seed, batch_size=size)
            ),
            "tokens": lambda seed, size: token_loader(seed=seed, batch=size),
        }
        for (name, make), (label, factory) in zip(variants.items(), workloads.items()):
            alarms, runs = _false_alarms(factory, make, 10 if quick else 40)
            rows.append([f"{name}: false alarms, other seeds x batch sizes",
                         f"{runs} checks", "", f"{alarms} failed"])  # fmt: skip
        pandera = _pandera(train_loader, repeats)
        if pandera:
            rows.append(["pandera, template loader's columns", pandera["load"],
                         pandera["record"], pandera["check"]])  # fmt: skip
        else:
            notes.append("pandera is not installed here: no comparison")
        commands = {"template": project, "token loader": _token_project(Path(tmp))}
        for label, where in commands.items():
            cli = _command(where, 1 if quick else 3)
            times = [f"{cli[key]:.2f} s" for key in ("record", "check")]
            cached = f"cached pass {cli['cached']:.2f} s"
            rows.append([f"`mlsmoke expect`, {label}", cached, *times])
    notes += [
        f"in one process, torch threads: 1; median of {repeats}; {BATCHES} batches."
        " load: drawing them from the loader; record and check: beyond loading"
        " (observing the batches, then inferring or checking); ', the model' rows"
        " also build the model and run one forward of its loss for its widths",
        f"check overhead beyond loading: at most {max(overheads) * 1000:.1f} ms"
        f" (target {OVERHEAD_TARGET * 1000:.0f} ms):"
        f" {'met' if max(overheads) <= OVERHEAD_TARGET else 'MISSED'}",
        "pandera: DataFrame of the same columns (x0, x1, label) built from the"
        " batches (load), infer_schema (record), validate each batch (check);"
        " it has no notion of a tensor batch, so the token loader has no comparison",
        f"`mlsmoke expect` rows: the command's wall time, a process of its own (torch"
        f" imported, 1 thread not forced, no warm worker), median of"
        f" {1 if quick else 3}; check is --no-cache, the cached pass reads no batch",
    ]
    return Section(
        title="data-expectations: record and check time",
        columns=["workload", "load", "record", "check"],
        rows=rows,
        notes=notes,
    )


def _in_process(
    factory: Callable[[], Any], repeats: int, model: Callable[[], Any] | None
) -> dict[str, float]:
    """Record and check; with ``model``, each also builds it and runs one forward of
    its loss on the first batch for its widths, as the command does when the gate
    names a model."""
    loads, records, checks = [], [], []
    suite = None
    for _ in range(repeats):
        started = time.perf_counter()
        with deterministic(0):
            batches = draw_batches(factory, BATCHES, "bench")
        loads.append(time.perf_counter() - started)
        started = time.perf_counter()
        observed = _observed(batches, model)
        suite = Suite(Path("expectations.json"), infer(observed), 2.0)
        records.append(time.perf_counter() - started)
        assert model is None or any(
            e["kind"] in MODEL_KINDS for e in suite.expectations
        )
        started = time.perf_counter()
        failures = check(suite, _observed(batches, model))
        checks.append(time.perf_counter() - started)
        assert failures == [], failures
    return {"load": statistics.median(loads), "record": statistics.median(records),
            "check": statistics.median(checks)}  # fmt: skip


def _observed(batches: list[Any], model: Callable[[], Any] | None) -> Observed:
    found = Observed([observe_batch(batch) for batch in batches])
    if model is not None:
        found.model = probe_model(model, None, batches[0], 0)
    return found


def _false_alarms(
    factory: Callable[[], Any], make: Callable[[int, int], Any], seeds: int
) -> tuple[int, int]:
    """Checks against the suite recorded from ``factory`` of harmless variants: other
    seeds, at the recorded batch size, 4x it and a quarter of it."""
    with deterministic(0):
        recorded = draw_batches(factory, BATCHES, "bench")
    size = recorded[0][0].shape[0]
    observed = Observed([observe_batch(batch) for batch in recorded])
    suite = Suite(Path("expectations.json"), infer(observed), 2.0)
    alarms = runs = 0
    for seed in range(1, seeds + 1):
        for batch in (size, size * 4, max(2, size // 4)):
            with deterministic(0):
                batches = draw_batches(make(seed, batch), BATCHES, "bench")
            alarms += bool(check(suite, Observed([observe_batch(b) for b in batches])))
            runs += 1
    return alarms, runs


def _pandera(factory: Callable[[], Any], repeats: int) -> dict[str, str] | None:
    try:
        import pandas
        import pandera.pandas as pandera
    except ImportError:
        return None
    loads, records, checks = [], [], []
    for _ in range(repeats):
        with deterministic(0):
            batches = draw_batches(factory, BATCHES, "bench")
        started = time.perf_counter()
        frames = [
            pandas.DataFrame({"x0": x[:, 0].numpy(), "x1": x[:, 1].numpy(),
                              "label": y.numpy()})
            for x, y in batches
        ]  # fmt: skip
        loads.append(time.perf_counter() - started)
        started = time.perf_counter()
        schema = pandera.infer_schema(pandas.concat(frames))
        records.append(time.perf_counter() - started)
        started = time.perf_counter()
        for frame in frames:
            schema.validate(frame)
        checks.append(time.perf_counter() - started)
    return {
        "load": f"+{statistics.median(loads) * 1000:.1f} ms to build DataFrames",
        "record": f"{statistics.median(records) * 1000:.1f} ms",
        "check": f"{statistics.median(checks) * 1000:.1f} ms",
    }


def _token_project(tmp: Path) -> Path:
    """A project whose ``[tool.mlsmoke.expect] batch`` is ``token_loader()``'s
    get_batch, from this module's own source."""
    project = tmp / "token-project"
    (project / "src").mkdir(parents=True)
    source = inspect.getsource(token_loader)
    (project / "src" / "bench_tokens.py").write_text(
        f"import torch\n\n\n{source}\n\nget_batch = token_loader()\n"
    )
    (project / "pyproject.toml").write_text(
        '[tool.mlsmoke.expect]\nbatch = "bench_tokens:get_batch"\n'
    )
    return project


def _command(project: Path, repeats: int) -> dict[str, float]:
    env = {**os.environ, "MLSMOKE_PYTHON": sys.executable, "MLSMOKE_WORKER": "0"}

    def timed(*args: str) -> float:
        started = time.perf_counter()
        subprocess.run([str(MLSMOKE), "expect", *args], cwd=project, env=env,
                       check=True, capture_output=True)  # fmt: skip
        return time.perf_counter() - started

    (project / "expectations.json").unlink(missing_ok=True)
    record = statistics.median(timed("--record") for _ in range(repeats))
    check_time = statistics.median(timed("--no-cache") for _ in range(repeats))
    timed()
    cached = statistics.median(timed() for _ in range(repeats))
    return {"record": record, "check": check_time, "cached": cached}
