"""``--record`` and ``--check``: steps/s and the step split per gate and device name,
in a small JSON file the project commits.

``{"version": 1, "gates": {gate: {device name: {"steps_per_second", "split",
"batch_size"}}}}``. A check compares only the same gate on the same device name: a
number from another machine says nothing about this one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mlsmoke.atomic import write_atomically
from mlsmoke.errors import ConfigError, UsageError
from mlsmoke.profile.figures import Figures
from mlsmoke.profile.phases import LABELS

FILE_NAME = "mlsmoke-profile.json"
VERSION = 1
DEFAULT_TOLERANCE = 0.20
# A phase is shown as changed when its share of the step moved this much, or when it
# grew by this part of the recorded step: it explains the slowdown, not the noise.
SHARE_CHANGE = 0.05
STEP_GROWTH = 0.10


def read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"version": VERSION, "gates": {}}
    try:
        data = json.loads(path.read_text())
        if not isinstance(data.get("gates"), dict):
            raise ValueError('no "gates" table')
        return data
    except (ValueError, AttributeError) as error:
        raise ConfigError(f"{path}: not a profile record: {error}") from None


def require(path: Path, gates: list[str]) -> None:
    """UsageError unless ``path`` holds a record of every gate in ``gates``."""
    recorded = read(path)["gates"]
    for gate in gates:
        if not recorded.get(gate):
            raise UsageError(_no_record(path, gate, "any device"))


def _no_record(path: Path, gate: str, device: str) -> str:
    return (
        f"{path}: no record for gate {gate!r} on {device};"
        " run mlsmoke profile --record on this device first"
    )


def record(path: Path, figures: Figures) -> None:
    data = read(path)
    data["version"] = VERSION
    gate = data["gates"].setdefault(figures.gate, {})
    gate[figures.device_name] = {
        "steps_per_second": round(figures.steps_per_second, 4),
        "split": {phase: round(s, 6) for phase, s in figures.split.items()},
        "step_seconds": round(figures.step_seconds, 6),
        "batch_size": figures.batch_size,
    }
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    try:
        mode = path.stat().st_mode if path.exists() else 0o644
        write_atomically(path, text.encode(), mode)
    except OSError as error:
        raise UsageError(f"{path}: cannot write: {error.strerror}") from None


def check(path: Path, figures: Figures, tolerance: float) -> tuple[bool, list[str]]:
    """Whether steps/s held within ``tolerance`` of the record, and the lines that
    say so; UsageError when there is no record for this gate and device."""
    data = read(path)
    recorded = data["gates"].get(figures.gate, {}).get(figures.device_name)
    if recorded is None:
        raise UsageError(_no_record(path, figures.gate, repr(figures.device_name)))
    before = float(recorded["steps_per_second"])
    now = figures.steps_per_second
    change = now / before - 1 if before else 0.0
    ok = change >= -tolerance
    verdict = "within" if ok else "beyond"
    lines = [
        f"check {figures.gate}: {now:.2f} steps/s against {before:.2f} recorded on"
        f" {figures.device_name} ({change:+.0%}, {verdict} the tolerance of"
        f" -{tolerance:.0%})"
    ]
    if not ok:
        lines += _changed_split(recorded, figures)
    return ok, lines


def _changed_split(recorded: dict[str, Any], figures: Figures) -> list[str]:
    old_step = float(recorded.get("step_seconds") or 0) or sum(
        recorded["split"].values()
    )
    lines = ["  the step split, recorded -> now:"]
    for phase, seconds in figures.split.items():
        old = float(recorded["split"].get(phase, 0.0))
        old_share = old / old_step if old_step else 0.0
        share = figures.share(phase)
        grew = (seconds - old) / old_step if old_step else 0.0
        moved = abs(share - old_share) >= SHARE_CHANGE or grew >= STEP_GROWTH
        mark = "  <- changed" if moved else ""
        lines.append(
            f"    {LABELS.get(phase, phase):<15}{old * 1e3:9.2f} ms {old_share:4.0%}"
            f"  ->{seconds * 1e3:9.2f} ms {share:4.0%}{mark}"
        )
    return lines
