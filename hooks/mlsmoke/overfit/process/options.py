"""The options ``mlsmoke overfit`` and ``mlsmoke profile`` share: ``--device`` and the
files they write (``--json``, the profile's ``--trace``), checked before any gate runs
so that a typo costs no training, and the ``--json`` report written as standard JSON."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from mlsmoke.errors import UsageError
from mlsmoke.overfit.process.settings import device_name


def check_gate_options(device: str | None, json_file: str | None) -> None:
    """A ``--device`` that names no device, or a ``--json`` file that cannot be
    written, as a usage error now rather than after the gates ran."""
    if device is not None:
        device_name(device, "--device")
    if json_file:
        check_writable(Path(json_file), "--json")


def check_writable(path: Path, option: str) -> None:
    """Fail before any gate runs when ``option``'s file cannot be written: open it as
    the write will (so that a read-only file system and root both tell the truth),
    and remove it again if it was not there."""
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a directory, not a file")
    if not path.parent.is_dir():
        raise UsageError(f"{option} {path}: no such directory: {path.parent}")
    existed = path.exists()
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644))
    except OSError as error:
        raise UsageError(f"{option} {path}: cannot write: {error.strerror}") from None
    if not existed:
        path.unlink(missing_ok=True)


def write_json(path: Path, data: object) -> None:
    """``data`` to the ``--json`` file, NaN and infinities as strings."""
    try:
        path.write_text(json.dumps(finite(data), indent=2) + "\n")
    except OSError as error:
        raise UsageError(f"--json {path}: cannot write: {error.strerror}") from None


def finite(value: object) -> object:
    """``value`` with NaN and infinities as strings: the JSON file stays standard."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value
