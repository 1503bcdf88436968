"""Each example's slice name, from the project's ``slice`` function: checked once
per name (a slice name becomes a file name), not once per example."""

from __future__ import annotations

from typing import Any

from mlsmoke.overfit.training.instruments import user_traceback
from mlsmoke.suites.problem import SuitesProblem
from mlsmoke.suites.project_objects import ProjectObjects
from mlsmoke.suites.settings import SUITE_NAME, SuitesSettings

# Slice names already found valid: a dataset has few, and each example names one.
_CHECKED_NAMES: set[str] = set()


def slice_names(
    objects: ProjectObjects, items: list[Any], indices: range, settings: SuitesSettings
) -> list[str | None]:
    """Each item's slice name (empty when no slice function is set)."""
    if objects.slice is None:
        return []
    key = settings.key_path("slice")
    names: list[Any] = []
    try:  # extend keeps the names given before an example that raised
        names.extend(map(objects.slice, items))
    except Exception as error:
        raise SuitesProblem(
            f"{key}: raised {type(error).__name__} on example"
            f" {indices.start + len(names)}: {error}",
            user_traceback(error),
        ) from None
    if _known(names):
        return names
    return [_slice_name(name, at, key) for name, at in zip(names, indices)]


def _known(names: list[Any]) -> bool:
    """Whether every name is None or a slice name already found valid."""
    try:
        return not set(names).difference(_CHECKED_NAMES, (None,))
    except TypeError:  # unhashable
        return False


def _slice_name(name: Any, index: int, key: str) -> str | None:
    if name is None:
        return None
    text = str(name)
    if text in _CHECKED_NAMES:
        return text
    if not SUITE_NAME.match(text):
        raise SuitesProblem(
            f"{key}: gave {name!r} for example {index}; a slice name becomes a file"
            " name: letters, digits, '.', '_' and '-' (up to 64)"
        )
    _CHECKED_NAMES.add(text)
    return text
