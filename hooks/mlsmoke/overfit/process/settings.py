"""The overfit gate's configuration: ``[tool.mlsmoke.overfit]`` -> GateSettings.

One gate::

    [tool.mlsmoke.overfit]
    model = "mypkg.model:build"
    batch = "mypkg.data:one_batch"

Several gates are named sub-tables; keys in ``[tool.mlsmoke.overfit]`` itself are then
shared defaults. Tiers override steps, targets and timeout, for all gates in
``[tool.mlsmoke.overfit.tiers.<tier>]`` and for one gate in
``[tool.mlsmoke.overfit.<gate>.tiers.<tier>]``.
Precedence, lowest first: built-in tier defaults, shared keys, gate keys, shared tier
table, gate tier table.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from mlsmoke import config
from mlsmoke.config import Key, seed_value
from mlsmoke.errors import ConfigError, UsageError
from mlsmoke.overfit.training import script_globals
from mlsmoke.project_root import PYPROJECT

TABLE = f"{config.TOOL_PATH}.overfit"
# Keys whose value is a table, not a gate of that name.
TABLE_KEYS = ("globals",)
SINGLE_GATE = "default"
OPTIMIZERS = ("adam", "adamw", "sgd")
# Measured on 22 small correct models (tests/overfit/overfit_models.py, the catalog's
# correct models, benchmarks/gate_workloads): Adam at 1e-3 needs 135-400 steps to reach
# 5% of the initial loss; at 1e-2 a CNN diverges; at 5e-3 all 22 memorize in at most
# 137 steps (median 35). SGD (momentum 0.9) needs 12-41 steps at 0.1.
DEFAULT_LR = {"adam": 5e-3, "adamw": 5e-3, "sgd": 0.1}
DEFAULT_WATCH = ["**/*.py", "pyproject.toml"]
# How long a rank waits in one collective for the others before it is named stuck.
DEFAULT_COLLECTIVE_TIMEOUT = 10.0

# The field guide's slider: seconds at commit time, minutes on a PR, an hour nightly.
TIER_DEFAULTS: dict[str, dict[str, Any]] = {
    "commit": {"max-steps": 300, "target-ratio": 0.05, "timeout": 60.0},
    "pr": {"max-steps": 2000, "target-ratio": 0.02, "timeout": 600.0},
    "nightly": {"max-steps": 10000, "target-ratio": 0.01, "timeout": 3600.0},
}
DEFAULT_TIER = "commit"

_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def factory_spec(value: Any, path: str) -> str:
    """A ``"package.module:callable"`` string."""
    if not isinstance(value, str) or not _SPEC.match(value):
        raise ConfigError(f'{path}: expected "package.module:callable", got {value!r}')
    return value


def optimizer_spec(value: Any, path: str) -> str:
    if isinstance(value, str) and value.lower() in OPTIMIZERS:
        return value.lower()
    if isinstance(value, str) and _SPEC.match(value):
        return value
    raise ConfigError(
        f"{path}: expected one of {', '.join(OPTIMIZERS)} or"
        f' "package.module:callable" (params or model -> Optimizer), got {value!r}'
    )


def device_name(value: Any, path: str) -> str:
    if isinstance(value, str) and re.match(r"^(auto|cpu|mps|cuda(:\d+)?)$", value):
        return value
    raise ConfigError(
        f'{path}: expected "auto", "cpu", "cuda", "cuda:N" or "mps",' f" got {value!r}"
    )


def script_path(value: Any, path: str) -> str:
    """A relative path to a Python file inside the project."""
    if not isinstance(value, str) or not value.endswith(".py"):
        raise ConfigError(f'{path}: expected a path to a .py file, such as "train.py"')
    if Path(value).is_absolute() or ".." in Path(value).parts:
        raise ConfigError(f"{path}: expected a path inside the project, got {value!r}")
    return value


def module_globals(value: Any, path: str) -> dict[str, Any]:
    """Names of a script's module-level assignments, each with the value the gate
    gives it: ``{ batch_size = 4, eval_iters = 2 }``."""
    if not isinstance(value, dict) or not value:
        raise ConfigError(
            f"{path}: expected a table of the script's module-level names and their"
            " values, such as { batch_size = 4, eval_iters = 2 }"
        )
    for name, given in value.items():
        if not name.isidentifier() or keyword.iskeyword(name):
            raise ConfigError(f"{path}.{name}: not a Python name")
        if not script_globals.valid_value(given):
            raise ConfigError(
                f"{path}.{name}: expected a string, a number, a boolean, or a list or"
                f" table of them, got {given!r}"
            )
    return dict(value)


# What a script brings itself: these keys make no sense beside ``script``.
SCRIPT_OWNS = ("model", "batch", "loss", "step", "optimizer", "lr", "accumulate",
               "train-mode", "device")  # fmt: skip


def ratio(value: Any, path: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not 0 < value < 1
    ):
        raise ConfigError(f"{path}: expected a fraction between 0 and 1, got {value!r}")
    return float(value)


TIER_SCHEMA: dict[str, Key] = {
    "max-steps": Key(config.positive_int),
    "target-loss": Key(config.finite_number),
    "target-ratio": Key(ratio),
    "timeout": Key(config.timeout_seconds),
}

GATE_SCHEMA: dict[str, Key] = {
    "model": Key(factory_spec, help="package.module:callable returning an nn.Module"),
    "batch": Key(factory_spec, help="package.module:callable returning one batch"),
    "loss": Key(factory_spec, help="(model, batch) -> scalar tensor"),
    "step": Key(
        factory_spec, help="the project's training step, see docs/train-step.md"
    ),
    "script": Key(
        script_path, help="the training script the gate runs, see docs/script-mode.md"
    ),
    "args": Key(config.argument_list, help="the script's command-line arguments"),
    "pin": Key(factory_spec, help="module:function whose first batch is pinned"),
    "globals": Key(
        module_globals, help="values for the script's module-level assignments"
    ),
    "accumulate": Key(config.positive_int),
    "train-mode": Key(
        config.boolean, help="false: the step runs the model in eval mode"
    ),
    "optimizer": Key(optimizer_spec),
    "lr": Key(config.positive_number),
    **TIER_SCHEMA,
    "device": Key(device_name),
    "seed": Key(seed_value),
    "watch": Key(config.string_list),
    "frozen": Key(
        config.string_list, help="globs of parameter names frozen on purpose"
    ),
    "python": Key(config.string),
    "world-size": Key(
        config.positive_int, help="ranks the gate starts, see docs/distributed.md"
    ),
    "collective-timeout": Key(config.timeout_seconds),
}


@dataclass
class GateSettings:
    """One gate, fully resolved for one tier; JSON-serialisable (it is sent to the
    worker and is part of the cache key)."""

    name: str
    model: str
    batch: str
    loss: str | None = None
    step: str | None = None  # the project's train_step, called in place of the loop's
    script: str | None = None  # script mode: the training script the gate runs
    args: list[str] = field(default_factory=list)  # the script's arguments
    # values for the script's module-level assignments, by name
    globals: dict[str, Any] = field(default_factory=dict)
    pin: str | None = None  # "module:function" whose first result is every batch
    accumulate: int = 1  # backward passes per optimizer step the step function declares
    train_mode: bool = True  # False: the step function runs the model in eval mode
    optimizer: str = "adam"
    lr: float | None = DEFAULT_LR["adam"]  # None: the project optimizer's own lr
    max_steps: int = TIER_DEFAULTS["commit"]["max-steps"]
    target_loss: float | None = None
    target_ratio: float | None = TIER_DEFAULTS["commit"]["target-ratio"]
    device: str = "auto"
    seed: int = 0
    timeout: float = TIER_DEFAULTS["commit"]["timeout"]
    watch: list[str] = field(default_factory=lambda: list(DEFAULT_WATCH))
    frozen: list[str] = field(default_factory=list)  # parameter globs frozen on purpose
    python: str | None = None
    world_size: int = 1  # ranks under torch.distributed (docs/distributed.md)
    collective_timeout: float = DEFAULT_COLLECTIVE_TIMEOUT
    tier: str = DEFAULT_TIER
    where: str = "config"  # "api": keys are check()'s arguments
    # Of "optimizer" and "lr", those left unset and resolved to the built-in defaults:
    # a project recipe (configure_optimizers) then trains at its own optimizer and lr.
    unset: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GateSettings:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def key_path(self, key: str) -> str:
        """Where ``key`` of this gate is set: pyproject.toml, or check()'s arguments."""
        if self.where == "api":
            return f"check() argument {key.replace('-', '_')}"
        table = TABLE if self.name == SINGLE_GATE else f"{TABLE}.{self.name}"
        return f"{table}.{key}"


def load_gates(root: Path, tier: str = DEFAULT_TIER) -> list[GateSettings]:
    """Every gate of ``root``'s pyproject.toml, resolved for ``tier``."""
    table = config.hook_table(root, "overfit")
    if not table:
        pyproject = root / PYPROJECT
        missing = (
            f"{pyproject}: no [{TABLE}] table"
            if pyproject.is_file()
            else f"no {PYPROJECT} in {root} or above"
        )
        raise ConfigError(
            f"{missing}; add a [{TABLE}] table with at least"
            ' model = "package.module:callable" and batch = "package.module:callable"'
        )
    shared, named, shared_tiers = _split(table, TABLE)
    known_tiers = set(TIER_DEFAULTS) | set(shared_tiers)
    for name, gate in named.items():
        known_tiers |= set(_split(gate, f"{TABLE}.{name}")[2])
    if tier not in known_tiers:
        raise UsageError(
            f"--tier {tier}: unknown tier;"
            f" expected one of {', '.join(sorted(known_tiers))}"
        )
    if not named:
        gates = [_resolve(SINGLE_GATE, TABLE, shared, {}, shared_tiers, {}, tier)]
        check_script_exists(gates, root)
        return gates
    gates = []
    for name, gate in named.items():
        path = f"{TABLE}.{name}"
        own, nested, own_tiers = _split(gate, path)
        if nested:
            raise ConfigError(
                f"{path}.{next(iter(nested))}: unknown key; gates do not nest"
            )
        gates.append(_resolve(name, path, shared, own, shared_tiers, own_tiers, tier))
    check_script_exists(gates, root)
    return gates


def select_gates(gates: list[GateSettings], name: str | None) -> list[GateSettings]:
    if name is None:
        return gates
    chosen = [gate for gate in gates if gate.name == name]
    if not chosen:
        names = ", ".join(gate.name for gate in gates)
        raise UsageError(f"--gate {name}: no such gate; the gates are: {names}")
    return chosen


def _split(
    table: dict[str, Any], path: str
) -> tuple[dict[str, Any], dict[str, dict], dict[str, dict]]:
    """``table`` as (its own keys, its named sub-tables, its tier tables)."""
    own = {k: v for k, v in table.items() if not isinstance(v, dict) or k in TABLE_KEYS}
    named = {
        k: v
        for k, v in table.items()
        if isinstance(v, dict) and k != "tiers" and k not in TABLE_KEYS
    }
    for key in named:
        if key in GATE_SCHEMA:
            raise ConfigError(f"{path}.{key}: expected {_expected(key)}, got a table")
    tiers = table.get("tiers", {})
    if not isinstance(tiers, dict) or not all(
        isinstance(t, dict) for t in tiers.values()
    ):
        raise ConfigError(f"{path}.tiers: expected tables such as [{path}.tiers.pr]")
    return own, named, tiers


def _expected(key: str) -> str:
    strings = ("model", "batch", "loss", "step", "optimizer", "script", "pin")
    return "a string" if key in strings else "a value"


def _resolve(
    name: str,
    path: str,
    shared: dict[str, Any],
    own: dict[str, Any],
    shared_tiers: dict[str, dict],
    own_tiers: dict[str, dict],
    tier: str,
) -> GateSettings:
    values = {**TIER_DEFAULTS.get(tier, TIER_DEFAULTS[DEFAULT_TIER])}
    config.validate(shared, GATE_SCHEMA, TABLE)
    config.validate(own, GATE_SCHEMA, path)
    values.update(shared)
    values.update(own)
    layers = [shared, own]
    for tiers, base in ((shared_tiers, TABLE), (own_tiers, path)):
        for name_, table in tiers.items():  # all of them: errors do not wait for --tier
            config.validate(table, TIER_SCHEMA, f"{base}.tiers.{name_}")
        overrides = tiers.get(tier, {})
        values.update(overrides)
        layers.append(overrides)
    # An explicit target-loss replaces the default target-ratio, unless one is set.
    if any("target-loss" in layer for layer in layers) and not any(
        "target-ratio" in layer for layer in layers
    ):
        values.pop("target-ratio", None)
    parsed = config.validate(values, GATE_SCHEMA, path)
    if parsed["script"] is not None:
        return _script_gate(name, path, parsed, tier)
    for key in ("args", "pin", "globals"):
        if parsed[key] is not None:
            raise ConfigError(f'{path}.{key}: only with script = "train.py"')
    for key in ("model", "batch"):
        if parsed[key] is None:
            raise ConfigError(
                f'{path}.{key}: missing; set it to "package.module:callable"'
            )
    optimizer = parsed["optimizer"] or "adam"
    lr = parsed["lr"]
    if lr is None and optimizer in OPTIMIZERS:
        lr = DEFAULT_LR[optimizer]
    unset = [key for key in ("optimizer", "lr") if parsed[key] is None]
    return GateSettings(
        name=name,
        model=parsed["model"],
        batch=parsed["batch"],
        loss=parsed["loss"],
        step=parsed["step"],
        accumulate=parsed["accumulate"] or 1,
        train_mode=parsed["train-mode"] is not False,
        optimizer=optimizer,
        lr=lr,
        max_steps=parsed["max-steps"],
        target_loss=parsed["target-loss"],
        target_ratio=parsed["target-ratio"],
        device=parsed["device"] or "auto",
        seed=parsed["seed"] if parsed["seed"] is not None else 0,
        timeout=parsed["timeout"],
        watch=parsed["watch"] or list(DEFAULT_WATCH),
        frozen=parsed["frozen"] or [],
        python=parsed["python"],
        **_distributed(parsed),
        tier=tier,
        unset=unset,
    )


def _script_gate(
    name: str, path: str, parsed: dict[str, Any], tier: str
) -> GateSettings:
    """A gate in script mode: the script brings its model, data, loss and recipe."""
    for key in SCRIPT_OWNS:
        if parsed[key] is not None:
            raise ConfigError(
                f"{path}.{key}: not with {path}.script; the script brings its own"
                " model, data, loss, optimizer and device (remove one of the two keys,"
                " or give the script an argument)"
            )
    return GateSettings(
        name=name,
        model="",
        batch="",
        script=parsed["script"],
        args=parsed["args"] or [],
        pin=parsed["pin"],
        globals=parsed["globals"] or {},
        lr=None,
        max_steps=parsed["max-steps"],
        target_loss=parsed["target-loss"],
        target_ratio=parsed["target-ratio"],
        seed=parsed["seed"] if parsed["seed"] is not None else 0,
        timeout=parsed["timeout"],
        watch=parsed["watch"] or list(DEFAULT_WATCH),
        frozen=parsed["frozen"] or [],
        python=parsed["python"],
        **_distributed(parsed),
        tier=tier,
        unset=["optimizer", "lr"],
    )


def _distributed(parsed: dict[str, Any]) -> dict[str, Any]:
    timeout = parsed["collective-timeout"]
    return {
        "world_size": parsed["world-size"] or 1,
        "collective_timeout": timeout or DEFAULT_COLLECTIVE_TIMEOUT,
    }


def check_script_exists(gates: list[GateSettings], root: Path) -> None:
    """ConfigError naming ``script`` for a script that is not a file under ``root``."""
    for gate in gates:
        if gate.script is not None and not (root / gate.script).is_file():
            raise ConfigError(
                f"{gate.key_path('script')}: {gate.script} does not exist in {root}"
            )
