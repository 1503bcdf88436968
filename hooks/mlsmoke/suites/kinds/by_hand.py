"""Suites listed by hand in ``[tool.mlsmoke.suites.by-hand.<name>]``: indices and a
note (the example behind issue #123)."""

from __future__ import annotations

from mlsmoke.errors import ConfigError
from mlsmoke.suites.kinds import Selected
from mlsmoke.suites.records import Evaluation
from mlsmoke.suites.settings import TABLE, SuitesSettings


def select(evaluation: Evaluation, settings: SuitesSettings) -> list[Selected]:
    size = len(evaluation)
    chosen = []
    for suite in settings.by_hand:
        outside = [index for index in suite.indices if index >= size]
        if outside:
            raise ConfigError(
                f"{TABLE}.by-hand.{suite.name}.indices: {outside[0]} is past the"
                f" dataset's end ({size} examples)"
            )
        chosen.append(Selected(suite.name, "by-hand", suite.note, suite.indices))
    return chosen
