"""The pre-commit-hooks checks ``mlsmoke basics`` runs, and the files each one gets.

The table is the one ``offline_hooks`` keeps of pre-commit-hooks' manifest, so each
check gets exactly the files its own hook would: those whose identify tags include
every one of its ``types``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from mlsmoke.offline_hooks import PRE_COMMIT_HOOKS, UPSTREAMS

Main = Callable[[Sequence[str]], int]


class Check(NamedTuple):
    id: str
    module: str  # pre_commit_hooks.<module>, whose main(argv) the hook entry runs
    types: frozenset[str]

    def files(self, tags: Mapping[str, frozenset[str]]) -> list[str]:
        return [path for path, found in tags.items() if self.types <= found]

    def main(self) -> Main:
        return importlib.import_module(f"pre_commit_hooks.{self.module}").main


def _checks() -> dict[str, Check]:
    manifests = UPSTREAMS[PRE_COMMIT_HOOKS].hooks
    return {
        hook_id: Check(
            hook_id,
            str(manifest["entry"]).replace("-", "_"),
            frozenset(manifest.get("types", ("file",))),
        )
        for hook_id, manifest in manifests.items()
    }


CHECKS = _checks()
