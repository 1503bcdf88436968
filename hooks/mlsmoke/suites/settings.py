"""``[tool.mlsmoke.suites]`` -> SuitesSettings, validated in one place.

::

    [tool.mlsmoke.suites]
    model = "mypkg.model:build"          # default: [tool.mlsmoke.overfit]'s model
    checkpoint = "checkpoints/model.pt"
    dataset = "mypkg.data:eval_set"      # indexable: len() and [i]
    slice = "mypkg.data:slice_of"        # example -> name or None

    [tool.mlsmoke.suites.by-hand.issue-123]
    indices = [12, 40]
    note = "the example behind issue #123"
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from mlsmoke import config
from mlsmoke.config import Key
from mlsmoke.errors import ConfigError
from mlsmoke.project_root import PYPROJECT
from mlsmoke.overfit.process.settings import device_name, factory_spec
from mlsmoke.overfit.process.shared_keys import GATE_TABLE, gate_factory

HOOK = "suites"
TABLE = f"{config.TOOL_PATH}.{HOOK}"
DEFAULT_DIRECTORY = "suites"
DEFAULT_HARD = 50
DEFAULT_BATCH_SIZE = 64
DEFAULT_TOLERANCE = 0.02
# nats: the examples a suite got right may lose at most this much mean log p(label)
DEFAULT_LOSS_TOLERANCE = 0.2
DEFAULT_RIGHT_AT = 0.5
DEFAULT_TIMEOUT = 3600.0
# The names the suite kinds take; a hand suite may not take them.
RESERVED = ("hard", "wrong", "whole-set")
SUITE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def relative_path(value: Any, path: str) -> str:
    """A path inside the project."""
    if not isinstance(value, str) or not value:
        raise ConfigError(f'{path}: expected a path such as "suites", got {value!r}')
    if Path(value).is_absolute() or ".." in Path(value).parts:
        raise ConfigError(f"{path}: expected a path inside the project, got {value!r}")
    return value


def fraction(value: Any, path: str) -> float:
    """A number from 0 to 1: a drop of a suite's mean score."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{path}: expected a number from 0 to 1, got {value!r}")
    if not 0 <= value <= 1:
        raise ConfigError(f"{path}: expected a number from 0 to 1, got {value!r}")
    return float(value)


def loss_tolerance(value: Any, path: str) -> float | None:
    """A rise of the mean loss (a number from 0 up), or false: no loss limit."""
    if value is False:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ConfigError(
            f"{path}: expected a number from 0 up (a rise of the mean loss), or"
            f" false, got {value!r}"
        )
    return float(value)


def tolerance_table(value: Any, path: str) -> dict[str, float]:
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: expected a table such as {{hard = 0.1}}")
    return {name: fraction(v, f"{path}.{name}") for name, v in value.items()}


def index_list(value: Any, path: str) -> list[int]:
    if not isinstance(value, list) or not value:
        raise ConfigError(f"{path}: expected a non-empty array of example indices")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int) or item < 0:
            raise ConfigError(f"{path}: expected indices from 0 up, got {item!r}")
    return sorted(set(value))


HAND_SCHEMA: dict[str, Key] = {
    "indices": Key(index_list, help="the examples, by index in the dataset"),
    "note": Key(config.string, default="", help="why they are kept"),
    "tolerance": Key(fraction, help="this suite's allowed drop of its mean score"),
}

SCHEMA: dict[str, Key] = {
    "model": Key(factory_spec, help="default: [tool.mlsmoke.overfit]'s model"),
    "checkpoint": Key(relative_path, help="the checkpoint record and check use"),
    "load": Key(factory_spec, help="(model, path) -> model; default: a state dict"),
    "dataset": Key(factory_spec, help="-> an indexable dataset or a DataLoader"),
    "collate": Key(factory_spec, help="list of examples -> batch"),
    "loss": Key(factory_spec, help="(outputs, batch) -> per-example loss, shape (B,)"),
    "score": Key(factory_spec, help="(outputs, batch) -> per-example score, (B,)"),
    "slice": Key(factory_spec, help="example -> slice name or None"),
    "hard": Key(config.positive_int, default=DEFAULT_HARD),
    "right-at": Key(config.finite_number, default=DEFAULT_RIGHT_AT),
    "tolerance": Key(fraction, default=DEFAULT_TOLERANCE),
    "tolerances": Key(tolerance_table, default={}),
    "loss-tolerance": Key(loss_tolerance, help="default: 0.2 with the default loss"),
    "by-hand": Key(lambda value, path: value, default={}),
    "directory": Key(relative_path, default=DEFAULT_DIRECTORY),
    "batch-size": Key(config.positive_int, default=DEFAULT_BATCH_SIZE),
    "device": Key(device_name, default="auto"),
    "timeout": Key(config.timeout_seconds, default=DEFAULT_TIMEOUT),
    "python": Key(config.string),
}


@dataclass
class HandSuite:
    name: str
    indices: list[int]
    note: str = ""
    tolerance: float | None = None


@dataclass
class SuitesSettings:
    """The suites of one project, resolved; JSON-serialisable (it is sent to the
    project's interpreter)."""

    model: str
    dataset: str
    checkpoint: str | None = None
    load: str | None = None
    collate: str | None = None
    loss: str | None = None
    score: str | None = None
    slice: str | None = None
    hard: int = DEFAULT_HARD
    right_at: float = DEFAULT_RIGHT_AT
    tolerance: float = DEFAULT_TOLERANCE
    tolerances: dict[str, float] = field(default_factory=dict)
    loss_tolerance: float | None = None
    by_hand: list[HandSuite] = field(default_factory=list)
    directory: str = DEFAULT_DIRECTORY
    batch_size: int = DEFAULT_BATCH_SIZE
    device: str = "auto"
    timeout: float = DEFAULT_TIMEOUT
    python: str | None = None
    where: str = "config"  # "api": keys are check()'s arguments

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SuitesSettings:
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        values["by_hand"] = [HandSuite(**item) for item in values.get("by_hand", [])]
        return cls(**values)

    def key_path(self, key: str) -> str:
        if self.where == "api":
            return f"check() argument {key.replace('-', '_')}"
        return f"{TABLE}.{key}"

    def tolerance_of(self, suite: str) -> float:
        """The allowed drop of ``suite``'s mean score."""
        hand = {s.name: s.tolerance for s in self.by_hand}
        if hand.get(suite) is not None:
            return hand[suite]  # type: ignore[return-value]
        return self.tolerances.get(suite, self.tolerance)


def load(root: Path) -> SuitesSettings:
    """``root``'s ``[tool.mlsmoke.suites]``; ConfigError naming the key."""
    table = config.hook_table(root, HOOK)
    if not table:
        raise ConfigError(
            f"{root / PYPROJECT}: no [{TABLE}] table; add one with at least"
            ' dataset = "package.module:callable" and checkpoint = "path/to/model.pt"'
            " (docs/suites.md)"
        )
    parsed = config.validate(table, SCHEMA, TABLE)
    model = parsed["model"] or _overfit_model(root)
    if parsed["dataset"] is None:
        raise ConfigError(
            f'{TABLE}.dataset: missing; set it to "package.module:callable"'
        )
    by_hand = _hand_suites(parsed["by-hand"])
    for name in parsed["tolerances"]:
        if (
            name not in RESERVED
            and not name.startswith("slice-")
            and name not in {s.name for s in by_hand}
        ):
            raise ConfigError(
                f"{TABLE}.tolerances.{name}: no such suite; the suites are hard, wrong,"
                " whole-set, slice-<name> and the by-hand ones"
            )
    return SuitesSettings(
        model=model,
        dataset=parsed["dataset"],
        checkpoint=parsed["checkpoint"],
        load=parsed["load"],
        collate=parsed["collate"],
        loss=parsed["loss"],
        score=parsed["score"],
        slice=parsed["slice"],
        hard=parsed["hard"],
        right_at=parsed["right-at"],
        tolerance=parsed["tolerance"],
        tolerances=parsed["tolerances"],
        loss_tolerance=_loss_tolerance(table, parsed),
        by_hand=by_hand,
        directory=parsed["directory"],
        batch_size=parsed["batch-size"],
        device=parsed["device"],
        timeout=parsed["timeout"],
        python=parsed["python"],
    )


def _loss_tolerance(table: dict[str, Any], parsed: dict[str, Any]) -> float | None:
    """The configured one; else a limit in nats for the default cross-entropy, and
    none for a project's loss, whose units mlsmoke does not know."""
    if "loss-tolerance" in table:
        return parsed["loss-tolerance"]
    return DEFAULT_LOSS_TOLERANCE if parsed["loss"] is None else None


def _overfit_model(root: Path) -> str:
    """The gate's model key, shared when the suites name none."""
    shared = gate_factory(root, "model")
    if shared is None:
        raise ConfigError(
            f'{TABLE}.model: missing; set it to "package.module:callable" (or set'
            f" {GATE_TABLE}.model, which the suites share)"
        )
    return shared[0]


def _hand_suites(table: Any) -> list[HandSuite]:
    path = f"{TABLE}.by-hand"
    if not isinstance(table, dict) or not all(
        isinstance(v, dict) for v in table.values()
    ):
        raise ConfigError(f"{path}: expected tables such as [{path}.issue-123]")
    suites = []
    for name, entry in table.items():
        key = f"{path}.{name}"
        check_suite_name(name, key)
        if name in RESERVED or name.startswith("slice-"):
            raise ConfigError(f"{key}: {name!r} is the name of a built-in suite")
        parsed = config.validate(entry, HAND_SCHEMA, key)
        if parsed["indices"] is None:
            raise ConfigError(f"{key}.indices: missing; list the examples' indices")
        suites.append(
            HandSuite(name, parsed["indices"], parsed["note"], parsed["tolerance"])
        )
    return suites


def check_suite_name(name: str, key: str) -> None:
    if not SUITE_NAME.match(name):
        raise ConfigError(
            f"{key}: {name!r} cannot name a suite file; use letters, digits, '.', '_'"
            " and '-' (up to 64)"
        )
