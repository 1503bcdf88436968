"""Script mode through the CLI, on a repository shaped like nanoGPT: ``train.py`` runs
unchanged, pinned to one batch, and each realistic mistake gets its verdict."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import init_git_repo
from nanogpt_shaped import (
    DETACHED_ATTENTION,
    DROPOUT,
    GATE_ARGS,
    LOSS_ON_WRONG_AXIS,
    LR_6E7,
    NO_CAUSAL_MASK,
    NO_ZERO_GRAD,
    UNSHIFTED_TARGETS,
    Change,
    write_nanogpt_repo,
)


def overfit(project: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    answer = project / "result.json"
    env = {**os.environ, "MLSMOKE_PYTHON": sys.executable}
    ran = subprocess.run(
        [sys.executable, "-m", "mlsmoke", "overfit", "--no-cache", "-v",
         "--json", str(answer), *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    results = json.loads(answer.read_text()) if answer.exists() else [{}]
    return ran, results[0]


def nanogpt(tmp_path: Path, *changes: Change, extra: str = "", **kw) -> Path:
    project = write_nanogpt_repo(init_git_repo(tmp_path / "nanogpt"), *changes, **kw)
    if extra:
        with (project / "pyproject.toml").open("a") as config:
            config.write(extra)
    return project


def script_project(tmp_path: Path, script: str, source: str, config: str = "") -> Path:
    """A repository with one training script, ``script``, in script mode."""
    project = init_git_repo(tmp_path / "script")
    (project / script).write_text(source)
    (project / "pyproject.toml").write_text(
        f'[tool.mlsmoke.overfit]\nscript = "{script}"\n{config}'
    )
    return project


def code(result: dict) -> str:
    return result["diagnosis"]["code"]


def warnings(result: dict) -> dict[str, str]:
    return {w["code"]: w["message"] for w in result.get("warnings", [])}


def test_a_correct_run_of_the_script_passes(tmp_path):
    project = nanogpt(tmp_path)
    ran, result = overfit(project)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert code(result) == "memorized"
    assert "pinned: every batch is the first of get_batch()" in ran.stdout
    assert "4 backward() calls per update" in ran.stdout
    assert "from train.py:" in result["recipe"]
    assert not warnings(result)
    assert not (project / "out").exists()  # --out_dir={out_dir}: the gate's own


def test_an_lr_of_6e_7_in_train_py_is_blocked_naming_its_line(tmp_path):
    ran, result = overfit(nanogpt(tmp_path, LR_6E7))
    assert ran.returncode == 1
    assert code(result) == "lr-too-low"
    line = next(
        number
        for number, text in enumerate(LR_6E7_TRAIN(tmp_path).splitlines(), 1)
        if text.startswith("learning_rate = ")
    )
    assert f"in train.py:{line} (learning_rate = 6e-07)" in ran.stdout


def LR_6E7_TRAIN(tmp_path: Path) -> str:
    return (tmp_path / "nanogpt" / "train.py").read_text()


def test_unshifted_targets_warn_that_the_model_copies_its_input(tmp_path):
    ran, result = overfit(nanogpt(tmp_path, UNSHIFTED_TARGETS))
    found = warnings(result)
    assert "target-copies-input" in found, ran.stdout
    assert "get_batch()[1]" in found["target-copies-input"]
    assert "get_batch()[0]" in found["target-copies-input"]


def test_a_gpt_without_its_causal_mask_passes_with_a_warning_it_reads_ahead(tmp_path):
    ran, result = overfit(nanogpt(tmp_path, NO_CAUSAL_MASK))
    assert code(result) == "memorized", ran.stdout
    message = warnings(result)["reads-future-tokens"]
    assert (
        "the target get_batch()[1] is the input get_batch()[0] one position on"
        in message
    )
    assert (
        "output at position 7 moved when only the inputs at positions 8..15" in message
    )
    assert "reads-future-tokens" in ran.stdout


def test_a_detached_attention_warns_naming_the_modules_cut_from_the_graph(tmp_path):
    ran, result = overfit(nanogpt(tmp_path, DETACHED_ATTENTION))
    assert code(result) == "memorized", ran.stdout
    message = warnings(result)["dead-weights"]
    assert "transformer.h.0.attn" in message and "transformer.h.1.attn" in message
    assert "cut from the graph" in message
    assert "transformer.h.0.mlp" not in message


def test_logits_flattened_on_the_wrong_axis_warn_that_the_loss_mixes_samples(
    tmp_path,
):
    ran, result = overfit(nanogpt(tmp_path, LOSS_ON_WRONG_AXIS))
    assert "loss-mixes-samples" in warnings(result), ran.stdout


def test_a_deleted_zero_grad_is_blocked_with_a_fix_that_keeps_accumulation(tmp_path):
    ran, result = overfit(nanogpt(tmp_path, NO_ZERO_GRAD))
    assert ran.returncode == 1
    assert code(result) == "step-gradients-accumulate"
    fix = " ".join(result["diagnosis"]["suggestions"])
    assert "once per update, right after optimizer.step()" in fix
    assert "not before every micro-batch's backward()" in fix


def test_dropout_of_0_1_passes_within_a_calibrated_budget(tmp_path):
    ran, result = overfit(nanogpt(tmp_path, DROPOUT, extra="max-steps = 600\n"))
    assert ran.returncode == 0, ran.stdout
    assert code(result) == "memorized"
    assert set(warnings(result)) <= {"dropout-active"}


def test_train_mode_noise_is_judged_by_the_eval_mode_loss(tmp_path):
    heavy = Change("train.py", "dropout = 0.0", "dropout = 0.3")
    ran, result = overfit(nanogpt(tmp_path, heavy, extra="max-steps = 600\n"))
    assert code(result) == "memorized", ran.stdout
    assert "judged in eval mode" in result["diagnosis"]["summary"]
    assert result["final_loss"] > result["target"]  # the train-mode loss, reported


def test_a_warmup_longer_than_the_budget_names_the_setting(tmp_path):
    args = [arg for arg in GATE_ARGS if not arg.startswith("--warmup_iters")]
    ran, result = overfit(nanogpt(tmp_path, args=args))
    assert code(result) == "schedule-holds-lr", ran.stdout
    assert "warmup_iters = 2000 (train.py:" in ran.stdout
    assert "--warmup_iters=30" in " ".join(result["diagnosis"]["suggestions"])


def test_torchrun_variables_are_unset_for_the_script(tmp_path):
    project = nanogpt(tmp_path)
    env = {**os.environ, "RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "2"}
    answer = project / "result.json"
    ran = subprocess.run(
        [sys.executable, "-m", "mlsmoke", "overfit", "--no-cache", "--json",
         str(answer)],
        cwd=project, env={**env, "MLSMOKE_PYTHON": sys.executable},
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            'script = "missing.py"\n',
            "tool.mlsmoke.overfit.script: missing.py does not exist",
        ),
        (
            'script = "train.py"\nmodel = "model:GPT"\n',
            "tool.mlsmoke.overfit.model: not with tool.mlsmoke.overfit.script",
        ),
        (
            'script = "train.py"\nstep = "train:step"\n',
            "tool.mlsmoke.overfit.step: not with tool.mlsmoke.overfit.script",
        ),
        ('script = "train"\n', "tool.mlsmoke.overfit.script: expected a path"),
        (
            'script = "train.py"\npin = "train:fetch_batch"\n',
            "tool.mlsmoke.overfit.pin: train.py defines no function 'fetch_batch'",
        ),
        (
            'script = "train.py"\nargs = ["--no_such_key=1", "--device=cpu"]\n',
            "ValueError: Unknown config key: no_such_key",
        ),
    ],
)
def test_bad_script_configuration_is_a_config_error_naming_the_key(
    tmp_path, config, expected
):
    project = nanogpt(tmp_path)
    (project / "pyproject.toml").write_text("[tool.mlsmoke.overfit]\n" + config)
    ran, _ = overfit(project)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert expected in ran.stdout + ran.stderr
    assert "Traceback" not in ran.stdout + ran.stderr


def test_a_script_the_args_reject_quotes_its_own_message(tmp_path):
    project = script_project(
        tmp_path,
        "train.py",
        "import argparse\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--lr', type=float, required=True)\n"
        "parser.parse_args()\n",
        'args = ["--learning-rate=1"]\n',
    )
    ran, _ = overfit(project)
    assert ran.returncode == 2
    assert "tool.mlsmoke.overfit.args:" in ran.stdout
    assert "the following arguments are required: --lr" in ran.stdout


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("import torch\nprint('no training here')\n", "without building a torch.optim"),
        (
            "import torch\nopt = torch.optim.SGD([torch.zeros(1, requires_grad=True)],"
            " lr=0.1)\n",
            "ended before its first optimizer.step()",
        ),
        ("import sys\nsys.exit(3)\n", "exited with status 3 before building"),
        (
            "import json\njson.loads('{')\n",
            "raised JSONDecodeError",
        ),
    ],
)
def test_a_script_that_never_trains_is_a_config_error(tmp_path, script, expected):
    project = script_project(tmp_path, "train.py", script)
    ran, _ = overfit(project)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "tool.mlsmoke.overfit.script:" in ran.stdout
    assert expected in ran.stdout
    assert "Traceback" not in ran.stdout + ran.stderr


def test_a_first_batch_whose_file_is_missing_is_named_as_a_data_error(tmp_path):
    project = nanogpt(tmp_path, args=[*GATE_ARGS, "--dataset=openwebtext"])
    ran, result = overfit(project)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert code(result) == "data-error", ran.stdout
    assert result["diagnosis"]["summary"] == (
        "fetching the script's batch could not read"
        " data/openwebtext/train.bin: No such file or directory (FileNotFoundError)"
    )
    evidence = "\n".join(result["diagnosis"]["evidence"])
    assert "train.py raised FileNotFoundError" in evidence
    assert f"looked for as {project / 'data/openwebtext/train.bin'}" in evidence
    assert any("`args` or `globals`" in s for s in result["diagnosis"]["suggestions"])
    assert "forward pass" not in ran.stdout


def test_a_file_error_after_the_first_batch_is_not_the_batch_s(tmp_path):
    logging = Change(  # a log file opened after the first batch was fetched
        "train.py",
        '        X, Y = get_batch("train")\n',
        '        X, Y = get_batch("train")\n        open("logs/step.txt").close()\n',
    )
    ran, result = overfit(nanogpt(tmp_path, logging))
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert code(result) != "data-error", ran.stdout
    assert "could not read" not in result["diagnosis"]["summary"]


LOADER_SCRIPT = """\
import torch
from torch import nn


class Rows(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, index):
        with open("data/rows.txt") as rows:
            return torch.tensor([float(v) for v in rows.readline().split()]), 0


model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(100):
    for x, y in torch.utils.data.DataLoader(Rows(), batch_size=4):
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_a_first_dataloader_batch_whose_file_is_missing_is_a_data_error(tmp_path):
    project = script_project(tmp_path, "fit.py", LOADER_SCRIPT)
    ran, result = overfit(project)
    assert code(result) == "data-error", ran.stdout + ran.stderr
    assert result["diagnosis"]["summary"] == (
        "fetching the script's batch could not read data/rows.txt: No such file or"
        " directory (FileNotFoundError)"
    )


LOG_THREADS_IN_EVAL = Change(  # what each eval-mode forward runs on, and for whom
    "model.py",
    "        b, t = idx.size()\n",
    "        b, t = idx.size()\n"
    "        if not self.training:\n"
    "            import os, traceback\n"
    '            caller = "".join(traceback.format_stack())\n'
    '            who = "check" if "overfit/verdict" in caller else "script"\n'
    '            with open(os.environ["THREADS_LOG"], "a") as log:\n'
    '                log.write(f"{who}:{torch.get_num_threads()}\\n")\n',
)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: one thread anyway")
def test_a_small_script_model_is_checked_on_the_one_thread_it_trained_on(tmp_path):
    project = nanogpt(tmp_path, LOG_THREADS_IN_EVAL)
    log = tmp_path / "threads.log"
    env = {key: value for key, value in os.environ.items()
           if key not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}  # fmt: skip
    env.update(MLSMOKE_PYTHON=sys.executable, MLSMOKE_WORKER="0", THREADS_LOG=str(log))
    ran = subprocess.run(
        [sys.executable, "-m", "mlsmoke", "overfit", "--no-cache"],
        cwd=project, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    checks = [line for line in log.read_text().split() if line.startswith("check:")]
    assert len(checks) > 3, log.read_text()  # batch-mixing's forwards, among others
    assert set(checks) == {"check:1"}, checks
