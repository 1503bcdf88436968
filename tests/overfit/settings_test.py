"""[tool.mlsmoke.overfit]: one gate, named gates, tiers, and the mistakes' messages."""

from __future__ import annotations

import pytest

from mlsmoke.errors import ConfigError, UsageError
from mlsmoke.overfit.process.settings import DEFAULT_LR, load_gates, select_gates

GATE = 'model = "pkg.model:build"\nbatch = "pkg.data:batch"\n'


def gates(tmp_path, toml: str, tier: str = "commit"):
    (tmp_path / "pyproject.toml").write_text(toml)
    return load_gates(tmp_path, tier)


def test_one_gate_gets_the_defaults(tmp_path):
    (gate,) = gates(tmp_path, f"[tool.mlsmoke.overfit]\n{GATE}")
    assert (gate.name, gate.model, gate.optimizer) == (
        "default",
        "pkg.model:build",
        "adam",
    )
    assert (gate.lr, gate.max_steps, gate.target_ratio) == (
        DEFAULT_LR["adam"],
        300,
        0.05,
    )
    assert gate.target_loss is None and gate.device == "auto" and gate.seed == 0
    assert gate.watch == ["**/*.py", "pyproject.toml"]


def test_named_gates_share_the_top_level_keys(tmp_path):
    toml = f"""
[tool.mlsmoke.overfit]
optimizer = "sgd"
max-steps = 50
[tool.mlsmoke.overfit.mlp]
{GATE}
[tool.mlsmoke.overfit.lm]
{GATE}
max-steps = 80
lr = 0.5
"""
    mlp, lm = gates(tmp_path, toml)
    assert (mlp.name, mlp.optimizer, mlp.lr, mlp.max_steps) == ("mlp", "sgd", 0.1, 50)
    assert (lm.name, lm.lr, lm.max_steps) == ("lm", 0.5, 80)
    assert select_gates([mlp, lm], "lm") == [lm]


def test_tiers_override_steps_targets_and_timeout(tmp_path):
    toml = f"""
[tool.mlsmoke.overfit]
max-steps = 100
[tool.mlsmoke.overfit.tiers.pr]
max-steps = 1000
target-loss = 0.01
[tool.mlsmoke.overfit.main]
{GATE}
[tool.mlsmoke.overfit.main.tiers.pr]
timeout = 5
"""
    (commit,) = gates(tmp_path, toml)
    (pr,) = gates(tmp_path, toml, "pr")
    (nightly,) = gates(tmp_path, toml, "nightly")
    assert (commit.max_steps, commit.target_ratio, commit.timeout) == (100, 0.05, 60)
    assert (pr.max_steps, pr.target_loss, pr.target_ratio, pr.timeout) == (
        1000, 0.01, None, 5)  # fmt: skip
    assert (nightly.max_steps, nightly.target_ratio) == (100, 0.01)


def test_an_explicit_target_loss_replaces_the_default_ratio(tmp_path):
    (gate,) = gates(tmp_path, f"[tool.mlsmoke.overfit]\n{GATE}target-loss = 0.2\n")
    assert (gate.target_loss, gate.target_ratio) == (0.2, None)


def test_a_project_optimizer_keeps_its_own_lr(tmp_path):
    toml = f'[tool.mlsmoke.overfit]\n{GATE}optimizer = "pkg.train:make_optimizer"\n'
    (gate,) = gates(tmp_path, toml)
    assert (gate.optimizer, gate.lr) == ("pkg.train:make_optimizer", None)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[tool.mlsmoke]\n", "no [tool.mlsmoke.overfit] table"),
        ('[tool.mlsmoke.overfit]\nbatch = "a:b"\n',
         "tool.mlsmoke.overfit.model: missing"),
        (f'[tool.mlsmoke.overfit]\n{GATE}model2 = 1\n',
         "tool.mlsmoke.overfit.model2: unknown key"),
        ('[tool.mlsmoke.overfit]\nmodel = "pkg.model"\nbatch = "a:b"\n',
         'tool.mlsmoke.overfit.model: expected "package.module:callable"'),
        (f'[tool.mlsmoke.overfit]\n{GATE}optimizer = "lbfgs"\n',
         "tool.mlsmoke.overfit.optimizer: expected one of adam, adamw, sgd"),
        (f"[tool.mlsmoke.overfit]\n{GATE}lr = -1\n",
         "tool.mlsmoke.overfit.lr: expected a positive number"),
        (f"[tool.mlsmoke.overfit]\n{GATE}max-steps = 1.5\n",
         "tool.mlsmoke.overfit.max-steps: expected a positive integer"),
        (f"[tool.mlsmoke.overfit]\n{GATE}target-ratio = 2\n",
         "tool.mlsmoke.overfit.target-ratio: expected a fraction"),
        (f'[tool.mlsmoke.overfit]\n{GATE}device = "gpu"\n',
         "tool.mlsmoke.overfit.device: expected"),
        (f'[tool.mlsmoke.overfit]\n{GATE}watch = [1]\n',
         "tool.mlsmoke.overfit.watch: expected an array of strings"),
        ('[tool.mlsmoke.overfit]\nscript = "train.py"\nargs = "--device=cpu --n=2"\n',
         "tool.mlsmoke.overfit.args: expected an array of strings, one per argument"),
        (f"[tool.mlsmoke.overfit]\n{GATE}[tool.mlsmoke.overfit.tiers.pr]\nlr = 1\n",
         "tool.mlsmoke.overfit.tiers.pr.lr: unknown key"),
        (f"[tool.mlsmoke.overfit.a]\n{GATE}seed = -1\n",
         "tool.mlsmoke.overfit.a.seed: expected an integer from 0 to 4294967295"),
        (f"[tool.mlsmoke.overfit.a]\n{GATE}seed = 4294967296\n",
         "tool.mlsmoke.overfit.a.seed: expected an integer from 0 to 4294967295,"
         " got 4294967296"),
        (f"[tool.mlsmoke.overfit]\n{GATE}target-ratio = nan\n",
         "tool.mlsmoke.overfit.target-ratio: expected a fraction between 0 and 1,"
         " got nan"),
        (f"[tool.mlsmoke.overfit]\n{GATE}target-loss = nan\n",
         "tool.mlsmoke.overfit.target-loss: expected a finite number, got nan"),
        (f"[tool.mlsmoke.overfit]\n{GATE}target-loss = inf\n",
         "tool.mlsmoke.overfit.target-loss: expected a finite number, got inf"),
        (f"[tool.mlsmoke.overfit]\n{GATE}lr = nan\n",
         "tool.mlsmoke.overfit.lr: expected a positive, finite number, got nan"),
        (f"[tool.mlsmoke.overfit]\n{GATE}timeout = 86400.5\n",
         "tool.mlsmoke.overfit.timeout: expected a finite number of seconds, above 0"
         " and up to 86400 (a day), got 86400.5"),
        (f"[tool.mlsmoke.overfit]\n{GATE}[tool.mlsmoke.overfit.tiers.x]\n"
         "timeout = nan\n",
         "tool.mlsmoke.overfit.tiers.x.timeout: expected a finite number of seconds"),
        (f"[tool.mlsmoke.overfit.a]\n{GATE}[tool.mlsmoke.overfit.a.b]\nx = 1\n",
         "tool.mlsmoke.overfit.a.b: unknown key; gates do not nest"),
        ("[tool.mlsmoke.overfit]\nmodel = { a = 1 }\n",
         "tool.mlsmoke.overfit.model: expected a string, got a table"),
        ("[tool.mlsmoke.overfit\n", "pyproject.toml: not valid TOML"),
        (f'[tool.mlsmoke.overfit]\n{GATE}step = "train_step"\n',
         'tool.mlsmoke.overfit.step: expected "package.module:callable"'),
        (f"[tool.mlsmoke.overfit]\n{GATE}accumulate = 0\n",
         "tool.mlsmoke.overfit.accumulate: expected a positive integer"),
        (f'[tool.mlsmoke.overfit]\n{GATE}train-mode = "no"\n',
         "tool.mlsmoke.overfit.train-mode: expected"),
    ],
)  # fmt: skip
def test_configuration_mistakes_name_the_key(tmp_path, toml, message):
    with pytest.raises(ConfigError) as raised:
        gates(tmp_path, toml)
    assert message in str(raised.value)
    assert raised.value.exit_code == 2


def test_a_step_function_and_its_declared_accumulation(tmp_path):
    toml = f'[tool.mlsmoke.overfit]\n{GATE}step = "train:train_step"\naccumulate = 4\n'
    (gate,) = gates(tmp_path, toml)
    assert (gate.step, gate.accumulate, gate.train_mode) == (
        "train:train_step",
        4,
        True,
    )
    (default,) = gates(tmp_path, f"[tool.mlsmoke.overfit]\n{GATE}train-mode = false\n")
    assert (default.step, default.accumulate, default.train_mode) == (None, 1, False)


def test_a_directory_without_pyproject_toml_says_so(tmp_path):
    with pytest.raises(ConfigError) as raised:
        load_gates(tmp_path)
    assert str(raised.value).startswith(f"no pyproject.toml in {tmp_path} or above;")
    assert "add a [tool.mlsmoke.overfit] table" in str(raised.value)


def test_unknown_tier_and_gate_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="--tier weekly: unknown tier"):
        gates(tmp_path, f"[tool.mlsmoke.overfit]\n{GATE}", "weekly")
    (gate,) = gates(tmp_path, f"[tool.mlsmoke.overfit]\n{GATE}")
    with pytest.raises(
        UsageError, match="--gate lm: no such gate; the gates are: default"
    ):
        select_gates([gate], "lm")


def test_the_longest_timeout_and_the_largest_seed_are_accepted(tmp_path):
    toml = f"[tool.mlsmoke.overfit]\n{GATE}timeout = 86400\nseed = 4294967295\n"
    (gate,) = gates(tmp_path, toml)
    assert (gate.timeout, gate.seed) == (86400.0, 2**32 - 1)


def test_a_tier_of_the_projects_own(tmp_path):
    toml = f"[tool.mlsmoke.overfit]\n{GATE}"
    toml += "[tool.mlsmoke.overfit.tiers.gpu]\nmax-steps = 9\n"
    (gate,) = gates(tmp_path, toml, "gpu")
    assert (gate.tier, gate.max_steps, gate.target_ratio) == ("gpu", 9, 0.05)
