"""Catalog cases through each adapter: a project that trains with Lightning and
DataLoaders, named in the config as it is (``lightning_project.py``), no glue code.

Each case gets its verdict and code; the headline names the optimizer and lr that
trained, and ``-v`` notes say where the loss and the batch came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from mlsmoke.overfit.gate import run_gate
from mlsmoke.overfit.process.settings import GateSettings, load_gates


@dataclass(frozen=True)
class AdapterCase:
    name: str
    model: str
    batch: str
    code: str
    says: str = ""  # in the headline, summary or evidence
    keys: dict = field(default_factory=dict)


P = "lightning_project"
SITE = "tests/overfit/lightning_project.py:"  # where configure_optimizers builds AdamW
CASES = [
    AdapterCase("lightning-with-datamodule", f"{P}:Classifier", f"{P}:datamodule",
                "memorized", f"AdamW lr 0.003 (from configure_optimizers at {SITE}"),
    AdapterCase("lightning-with-loader", f"{P}:Classifier", f"{P}:train_loader",
                "memorized", f"AdamW lr 0.003 (from configure_optimizers at {SITE}"),
    AdapterCase("lightning-with-workers", f"{P}:Classifier", f"{P}:loader_with_workers",
                "memorized", "num_workers=2"),
    AdapterCase("warmup-stuck-at-zero", f"{P}:WarmupStuckAtZero", f"{P}:train_loader",
                "lr-too-low", "LambdaLR"),
    AdapterCase("broken-collate", f"{P}:Classifier", f"{P}:loader_with_broken_collate",
                "data-error", "'list' object has no attribute 'float'"),
    AdapterCase("detached-training-step", f"{P}:DetachedLoss", f"{P}:train_loader",
                "no-gradient", "DetachedLoss.training_step"),
    AdapterCase("lr-1000x-too-low", f"{P}:lr_typed_1000x_too_low", f"{P}:train_loader",
                "lr-too-low", "AdamW lr 3e-06"),
    AdapterCase("sgd-100x-too-high", f"{P}:sgd_100x_too_high", f"{P}:train_loader",
                "lr-too-high", "SGD lr 30"),
    AdapterCase("plain-module-project-optimizer", f"{P}:PlainClassifier",
                f"{P}:train_loader", "memorized",
                f"AdamW lr 0.003 (from {P}:make_optimizer at ",
                {"optimizer": f"{P}:make_optimizer"}),
    AdapterCase("project-optimizer-1000x-too-low", f"{P}:PlainClassifier",
                f"{P}:train_loader", "lr-too-low", "AdamW lr 3e-06",
                {"optimizer": f"{P}:make_optimizer_1000x_too_low"}),
    AdapterCase("gan", f"{P}:Gan", f"{P}:train_loader", "config-error",
                "returned 2 optimizers"),
]  # fmt: skip


def run(case: AdapterCase, **keys):
    table = {"model": case.model, "batch": case.batch, **case.keys, **keys}
    (settings,) = load_gates_from(table)
    result, _ = run_gate(settings, device="cpu")
    told = "\n".join([result.report(), *result.diagnosis.evidence, *result.notes])
    return result, told


def load_gates_from(table: dict) -> list[GateSettings]:
    """The gate a pyproject.toml with ``table`` as [tool.mlsmoke.overfit] declares."""
    import tempfile
    from pathlib import Path

    lines = ["[tool.mlsmoke.overfit]"]
    lines += [f"{key} = {value!r}".replace("'", '"') for key, value in table.items()]
    with tempfile.TemporaryDirectory() as root:
        Path(root, "pyproject.toml").write_text("\n".join(lines) + "\n")
        return load_gates(Path(root))


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_adapter_case(case: AdapterCase) -> None:
    result, told = run(case)
    assert result.diagnosis.code == case.code, told
    assert case.says in told
    if case.code != "config-error":
        assert any(note.startswith("batch: first batch of") for note in result.notes)


def test_notes_say_where_the_loss_and_batch_came_from():
    result, _ = run(CASES[0])
    assert result.notes[:2] == [
        "loss: Classifier.training_step(batch, 0)",
        "batch: first batch of DataModule.train_dataloader(), after prepare_data()"
        ' and setup("fit") from lightning_project:datamodule',
    ]
    assert any("self.log" in note for note in result.notes)  # warned, not raised


def test_an_lr_key_overrides_configure_optimizers_and_says_so():
    result, told = run(CASES[1], lr=0.001)
    assert result.passed, told
    assert (
        f"AdamW lr 0.001 (lr key, optimizer from configure_optimizers at {SITE}" in told
    )
    assert (
        "lr: 0.001 from tool.mlsmoke.overfit.lr, replacing configure_optimizers' 0.003"
        in result.notes
    )


def test_a_loss_and_optimizer_key_replace_the_modules_own():
    result, told = run(CASES[-1], loss="overfit_models:mlp_loss", optimizer="adam")
    assert result.diagnosis.code != "config-error" or "2 optimizers" not in told
