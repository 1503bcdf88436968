"""The session in this process: the project's zero_grad seen in the trace, and the
CUDA sync finder fed the warnings torch.cuda.set_sync_debug_mode("warn") gives."""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from mlsmoke.overfit.process.settings import GateSettings  # noqa: E402
from mlsmoke.profile import machine, session  # noqa: E402
from mlsmoke.profile.figures import Figures  # noqa: E402
from mlsmoke.profile.rules import recommend  # noqa: E402

import profiled_project  # noqa: E402

HERE = Path(__file__).parent


def gate(**changes) -> GateSettings:
    return GateSettings(
        name="default",
        model="profiled_project:model",
        batch="profiled_project:batch",
        loss="profiled_project:loss",
        device="cpu",
        **changes,
    )


def profiled(settings: GateSettings, tmp_path: Path) -> Figures:
    request = session.Request(3, 1, str(tmp_path / "trace.json.gz"))
    outcome = session.profile_gate(settings, request, HERE)
    assert outcome["status"] == "ok", outcome
    return Figures.from_json(outcome["figures"])


def test_a_zero_grad_that_fills_zeros_fires_at_its_line(tmp_path: Path) -> None:
    figures = profiled(gate(optimizer="profiled_project:zero_filling_sgd"), tmp_path)
    assert figures.zero_grad_fills == 2  # the Linear's weight and bias
    line = inspect.getsourcelines(profiled_project.ZeroFillingSGD.zero_grad)[1]
    where = f"profiled_project.py:{line}"
    assert figures.optimizer.zero_grad_where.endswith(where)
    # in this process torch runs its default threads: cpu-threads may fire too
    (found,) = [r for r in recommend(figures) if r.rule == "zero-grad"]
    assert where in found.change


def test_torchs_own_zero_grad_fills_nothing(tmp_path: Path) -> None:
    figures = profiled(gate(optimizer="sgd"), tmp_path)
    assert figures.zero_grad_fills == 0 and figures.optimizer.zero_grad_where == ""


def test_a_sync_warning_is_counted_at_the_projects_line(monkeypatch) -> None:
    modes = []
    monkeypatch.setattr(torch.cuda, "get_sync_debug_mode", lambda: 0)
    monkeypatch.setattr(torch.cuda, "set_sync_debug_mode", modes.append)
    project_line = {}
    with machine.sync_points(HERE, cuda=True) as found:
        for _ in range(3):
            project_line = _sync_in_project_code()
            warnings.warn("an unrelated warning")  # passed on, not counted
    assert modes == ["warn", 0]  # on for the profiled steps, then as it was
    (((where, code), count),) = found.items()
    assert where == f"{__file__}:{project_line}" and count == 3
    assert "synchronizing" in code


def _sync_in_project_code() -> int:
    warnings.warn("called a synchronizing CUDA operation")  # as .item() does on CUDA
    return _sync_in_project_code.__code__.co_firstlineno + 1


def test_frames_of_installed_packages_and_mlsmoke_are_not_the_projects() -> None:
    import traceback

    stack = traceback.extract_stack()
    assert machine.project_frame(stack, HERE).filename == __file__
    assert machine.project_frame(stack, Path("/nonexistent")) is None


def test_a_lightning_data_module_is_iterated_and_named_at_train_dataloader(
    tmp_path: Path, monkeypatch
) -> None:
    pytest.importorskip("lightning")
    overfit_tests = HERE.parent / "overfit"
    monkeypatch.syspath_prepend(str(overfit_tests))
    settings = GateSettings(
        name="default",
        model="lightning_project:Classifier",
        batch="lightning_project:datamodule",
        device="cpu",
        unset=["optimizer", "lr"],
    )
    request = session.Request(3, 1, str(tmp_path / "trace.json.gz"))
    outcome = session.profile_gate(settings, request, overfit_tests)
    assert outcome["status"] == "ok", outcome
    figures = Figures.from_json(outcome["figures"])
    assert figures.loader.kind == "DataModule.train_dataloader() (DataLoader)"
    assert figures.loader.where.startswith("DataModule.train_dataloader() (")
    assert figures.optimizer.name == "AdamW"  # configure_optimizers' recipe
    assert figures.split["data_wait"] > 0 and figures.split["backward"] > 0
