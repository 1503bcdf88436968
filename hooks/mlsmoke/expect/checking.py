"""Check observed batches against a suite: each expectation's kind says whether it
held; a field in the batches that no expectation names is reported as new."""

from __future__ import annotations

from typing import Any

from mlsmoke.errors import ConfigError
from mlsmoke.expect.kinds import KINDS
from mlsmoke.expect.kinds.base import BATCH, Failure, Observed
from mlsmoke.expect.suite_file import Suite

NEW_FIELD = "a new field: not in the suite"


def check(suite: Suite, observed: Observed) -> list[Failure]:
    failures: list[Failure] = []
    for number, expectation in enumerate(suite.expectations):
        if expectation.get("off"):
            continue
        try:
            failures += KINDS[expectation["kind"]].check(expectation, observed)
        except (TypeError, ValueError, KeyError, IndexError) as error:
            raise ConfigError(
                f"{suite.where(number)}: expectation {expectation['kind']} of"
                f" {expectation['field']}: a value of the wrong type or shape"
                f" ({type(error).__name__}: {error})"
            ) from None
    failures += new_fields(suite.expectations, observed)
    return failures


def new_fields(expectations: list[dict[str, Any]], observed: Observed) -> list[Failure]:
    named = {e["field"] for e in expectations} | {BATCH}
    return [
        Failure(name, "presence", "no such field", NEW_FIELD)
        for name in observed.field_names()
        if name not in named
    ]
