"""The gate's keys that the other torch hooks (``expect``, ``suites``) fall back to
when their own table names none, so that a project with the gate sets them once."""

from __future__ import annotations

from pathlib import Path

from mlsmoke import config
from mlsmoke.overfit.process.settings import factory_spec

GATE_TABLE = f"{config.TOOL_PATH}.overfit"


def gate_factory(root: Path, key: str) -> tuple[str, str] | None:
    """The gate's ``key`` factory (``model`` or ``batch``), checked, with the key's
    path for messages; None when the gate sets none."""
    value = config.hook_table(root, "overfit").get(key)
    if value is None:
        return None
    return factory_spec(value, f"{GATE_TABLE}.{key}"), f"{GATE_TABLE}.{key}"


def gate_python(root: Path) -> str | None:
    """The gate's ``python`` key, when it is a path."""
    value = config.hook_table(root, "overfit").get("python")
    return value if isinstance(value, str) else None
