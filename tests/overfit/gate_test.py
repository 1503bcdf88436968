"""One gate, in-process: each bad input gets a clear verdict, never our traceback."""

from __future__ import annotations

import itertools
import pytest
from frames import package_frames

from mlsmoke.overfit.gate import run_gate
from mlsmoke.overfit.process.settings import GateSettings

MLP_GATE = {"model": "overfit_models:MLP", "batch": "overfit_models:mlp_batch",
            "loss": "overfit_models:mlp_loss"}  # fmt: skip
_modules = itertools.count()


def gate(**keys) -> GateSettings:
    return GateSettings(name="default", **{**MLP_GATE, **keys})


def report_of(settings: GateSettings):
    result, _ = run_gate(settings, device="cpu")
    return result, result.report()


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (
            {
                "loss": None,
                "model": "overfit_models:CNN",
                "batch": "overfit_models:cnn_batch",
            },
            "memorized",
        ),  # noqa: E501
        (
            {
                "loss": None,
                "model": "overfit_models:TinyLM",
                "batch": "overfit_models:lm_batch",
            },
            "memorized",
        ),  # noqa: E501
        (
            {
                "loss": None,
                "model": "overfit_models:HFStyleClassifier",
                "batch": "overfit_models:hf_batch",
            },
            "memorized",
        ),  # noqa: E501
        ({"optimizer": "sgd"}, "memorized"),
        ({"optimizer": "adamw"}, "memorized"),
        ({"optimizer": "bad_inputs:sgd_factory", "lr": None}, "memorized"),
    ],
    ids=["cnn", "causal-lm", "hf-style", "sgd", "adamw", "project-optimizer"],
)
def test_small_models_and_optimizers_pass(keys, expected):
    result, report = report_of(gate(**keys))
    assert result.diagnosis.code == expected, report
    assert result.exit_code == 0 and "PASS" in report


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"model": "no_such_package.models:build"},
         "tool.mlsmoke.overfit.model: cannot import 'no_such_package.models'"),
        ({"batch": "overfit_models:no_such_batch"},
         "tool.mlsmoke.overfit.batch: module 'overfit_models' has no 'no_such_batch'"),
        ({"loss": "bad_inputs:number"},
         "tool.mlsmoke.overfit.loss: bad_inputs:number is a int, not callable"),
        ({"model": "bad_inputs:not_a_module"},
         "tool.mlsmoke.overfit.model: the model callable returned a str, not a"),
        ({"model": "bad_inputs:NoParameters"},
         "tool.mlsmoke.overfit.model: the model (NoParameters) has no parameters"),
        ({"model": "bad_inputs:LogitsOnly", "loss": None},
         "tool.mlsmoke.overfit.loss: the model returned a tensor of shape (16, 4)"),
        ({"optimizer": "bad_inputs:not_an_optimizer"},
         "tool.mlsmoke.overfit.optimizer: the optimizer callable returned a list"),
    ],
    ids=["missing-module", "missing-attribute", "not-callable", "not-a-module",
         "no-parameters", "loss-not-found", "not-an-optimizer"],
)  # fmt: skip
def test_configuration_mistakes_are_config_errors_naming_the_key(keys, message):
    result, report = report_of(gate(**keys))
    assert (result.verdict, result.exit_code) == ("error", 2)
    assert result.diagnosis.code == "config-error"
    assert message in result.diagnosis.summary
    assert package_frames(report) == []


def test_loss_not_found_shows_how_to_add_a_loss_callable():
    result, report = report_of(gate(model="bad_inputs:LogitsOnly", loss=None))
    assert "def loss(model, batch):" in report
    assert 'loss = "mypkg.gate:loss"' in report


@pytest.mark.parametrize(
    ("source", "raised", "line", "shown"),
    [
        ("import torch\n\nWIDTH = 16 / 0\n", "ZeroDivisionError", 3,
         "WIDTH = 16 / 0"),
        ("def build(:\n    pass\n", "SyntaxError", 1, "def build(:"),
    ],
    ids=["raises", "syntax-error"],
)  # fmt: skip
def test_a_module_that_fails_to_import_shows_the_users_line(
    tmp_path, monkeypatch, source, raised, line, shown
):
    name = f"broken_models_{next(_modules)}"
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    result, report = report_of(gate(model=f"{name}:build"))
    assert result.exit_code == 2
    assert f"importing '{name}' raised {raised}" in report
    assert f'{name}.py", line {line}' in report and shown in report
    assert "importlib" not in report  # the import machinery is not the user's code


@pytest.mark.parametrize(
    ("keys", "phase_text", "user_line"),
    [
        ({"model": "bad_inputs:model_that_raises"}, "building the model raised",
         "hidden=-1"),
        ({"loss": "bad_inputs:per_sample_loss"}, "not a scalar", None),
        ({"model": "bad_inputs:model_that_exits"},
         "building the model raised SystemExit", "usage: train.py"),
    ],
    ids=["model-factory-raises", "loss-not-scalar", "model-factory-exits"],
)  # fmt: skip
def test_code_mistakes_fail_with_the_users_line(keys, phase_text, user_line):
    result, report = report_of(gate(**keys))
    assert (result.verdict, result.exit_code) == ("fail", 1)
    assert phase_text in report
    if user_line:
        assert user_line in report and "bad_inputs.py" in report
    assert package_frames(report) == [] and "ProjectProblem" not in report


def test_a_tuple_batch_for_a_one_input_model_points_at_the_loss_key():
    result, report = report_of(gate(loss=None))  # MLP.forward(x), batch (x, y)
    assert (result.diagnosis.code, result.exit_code) == ("data-error", 1)
    assert "more fields than forward() takes" in result.diagnosis.summary
    assert "calls model(*batch)" in result.diagnosis.suggestions[0]


def test_a_batch_with_no_tensors_fails_saying_what_it_holds():
    result, report = report_of(gate(batch="bad_inputs:batch_of_strings"))
    assert (result.verdict, result.exit_code) == ("fail", 1)
    assert "no tensors" in report and "list of 2" in report
    assert result.diagnosis.summary.startswith("building the batch: the batch holds")


def test_a_loss_that_does_not_require_grad_fails():
    result, report = report_of(gate(loss="bad_inputs:detached_loss"))
    assert (result.verdict, result.exit_code) == ("fail", 1)
    assert result.diagnosis.code in ("no-gradient", "train-error")


def test_a_model_that_cannot_memorize_in_time_fails_with_its_curve():
    result, report = report_of(gate(lr=1e-6, max_steps=5))
    assert (result.verdict, result.exit_code) == ("fail", 1)
    assert result.steps == 5 and len(result.losses) == 6
    assert "in 5 steps" in report


def test_timeout_stops_training_with_a_failure_that_says_so():
    result, run = run_gate(gate(lr=1e-6, max_steps=10_000, timeout=0.2), device="cpu")
    assert run.evidence.timed_out and result.verdict == "fail"
    assert result.steps < 10_000 and "timeout" in result.report()


def test_unavailable_device_is_a_config_error():
    result, _ = run_gate(gate(device="cuda"))
    assert result.exit_code == 2
    assert "tool.mlsmoke.overfit.device: device 'cuda' is not available" in (
        result.diagnosis.summary
    )


def test_named_gate_keys_are_named_in_messages():
    settings = GateSettings(name="cnn", model="overfit_models:nope", batch="x:y")
    result, _ = run_gate(settings, device="cpu")
    assert result.diagnosis.summary.startswith("tool.mlsmoke.overfit.cnn.model:")


def test_the_headline_draws_the_run_the_diagnosis_is_about():
    result, report = report_of(gate(loss="bad_inputs:negated_loss"))
    assert result.diagnosis.code == "wrong-objective"
    assert result.steps == 0  # the gate's own run stops at once: no target below 0
    probe = result.diagnosis.losses
    assert len(probe) > 4 and probe[-1] < probe[0] < 0
    _, spark, figures = report.splitlines()[:3]
    assert len(spark.split()[-1]) == min(len(probe), 40)
    assert figures.startswith(
        f"  {probe[0]:.4g} -> {probe[-1]:.4g}  in {result.diagnosis.steps} steps, cpu"
    )
    assert f"in {result.diagnosis.steps} steps at lr" in report  # the evidence agrees
