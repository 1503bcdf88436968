"""``[tool.mlsmoke.expect]`` -> ExpectSettings.

::

    [tool.mlsmoke.expect]
    batch = "mypkg.data:train_loader"          # default: the overfit gate's batch
    validation = "mypkg.data:val_loader"      # optional: checked for leakage
    batches = 4
    suite = "expectations.json"

``batch`` and ``validation`` are the gate's factories: a callable returning a
DataLoader, a LightningDataModule, any iterable of batches, or one batch per call.
The gate's ``model`` and ``loss`` (``[tool.mlsmoke.overfit]``), when it sets them, give
the widths that class ids and token ids must stay below (``model_probe.py``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mlsmoke import config
from mlsmoke.config import Key, seed_value
from mlsmoke.errors import ConfigError
from mlsmoke.overfit.process.settings import factory_spec
from mlsmoke.overfit.process.shared_keys import gate_factory, gate_python

TABLE = f"{config.TOOL_PATH}.expect"
DEFAULT_BATCHES = 4
DEFAULT_SUITE = "expectations.json"
DEFAULT_TIMEOUT = 60.0
MAX_BATCHES = 64


def batch_count(value: Any, path: str) -> int:
    count = config.positive_int(value, path)
    if count < 2 or count > MAX_BATCHES:
        raise ConfigError(
            f"{path}: expected 2 to {MAX_BATCHES} batches (margins come from the"
            f" spread between them), got {count}"
        )
    return count


def suite_path(value: Any, path: str) -> str:
    text = config.string(value, path)
    if (
        not text.endswith(".json")
        or Path(text).is_absolute()
        or ".." in Path(text).parts
    ):
        raise ConfigError(
            f"{path}: expected a .json path inside the project,"
            f' such as "{DEFAULT_SUITE}"'
        )
    return text


SCHEMA: dict[str, Key] = {
    "batch": Key(factory_spec, help="package.module:callable: the training batches"),
    "validation": Key(factory_spec, help="package.module:callable: validation batches"),
    "batches": Key(batch_count, DEFAULT_BATCHES),
    "suite": Key(suite_path, DEFAULT_SUITE),
    "data": Key(
        config.string_list, [], help="data files whose change re-runs the check"
    ),
    "seed": Key(seed_value, 0),
    "timeout": Key(config.timeout_seconds, DEFAULT_TIMEOUT),
    "python": Key(config.string),
}


@dataclass
class ExpectSettings:
    """The resolved table; JSON-serialisable (sent to the worker, in the cache key)."""

    batch: str
    validation: str | None = None
    batches: int = DEFAULT_BATCHES
    suite: str = DEFAULT_SUITE
    data: list[str] = field(default_factory=list)
    seed: int = 0
    timeout: float = DEFAULT_TIMEOUT
    python: str | None = None
    batch_key: str = f"{TABLE}.batch"  # where ``batch`` came from, for messages
    model: str | None = None  # the gate's model and loss callables
    loss: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExpectSettings:
        return cls(**data)


def load_settings(root: Path) -> ExpectSettings:
    """The expect table of ``root``'s pyproject.toml; ``batch`` defaults to the
    overfit gate's, so a project with the gate needs no table at all."""
    parsed = config.validate(config.hook_table(root, "expect"), SCHEMA, TABLE)
    batch, batch_key = parsed["batch"], f"{TABLE}.batch"
    if batch is None:
        batch, batch_key = _gate_batch(root)
    python = parsed["python"] or gate_python(root)
    return ExpectSettings(
        batch=batch,
        validation=parsed["validation"],
        batches=parsed["batches"],
        suite=parsed["suite"],
        data=parsed["data"],
        seed=parsed["seed"],
        timeout=parsed["timeout"],
        python=python,
        batch_key=batch_key,
        model=_gate_spec(root, "model"),
        loss=_gate_spec(root, "loss"),
    )


def _gate_spec(root: Path, key: str) -> str | None:
    shared = gate_factory(root, key)
    return shared[0] if shared else None


def _gate_batch(root: Path) -> tuple[str, str]:
    shared = gate_factory(root, "batch")
    if shared is not None:
        return shared
    raise ConfigError(
        f'{TABLE}.batch: missing; set it to "package.module:callable" returning the'
        " training DataLoader (or one batch per call)"
    )
