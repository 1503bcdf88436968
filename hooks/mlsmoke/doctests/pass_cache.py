"""The doctest pass cache: a file whose examples passed is not run again until
something they ran changes.

The gate's pass cache is the model (``overfit/process/cache.py``), and the files on
disk are the same kind (:mod:`mlsmoke.cache_files`). A pass is stored under a key
built from the file's path, the fingerprint of its examples and code (its prose and
comments left out, see ``requirements.examples_fingerprint``), how the examples run
(option flags, seed), the interpreters the hook would choose from (found, not
started) and mlsmoke's version. The entry records, from the run:

- every project module imported by the time the file's examples were done, by its
  fingerprint too (a module's prose is not what the examples ran);
- every third-party package imported, by the stat of its module file, which changes
  when it is reinstalled or upgraded;
- the import directories of the interpreters passed over before the one that ran.

So a prose edit to a README or a docstring is a hit and starts no interpreter, and a
change to anything the examples ran is a miss. Failures, and files with skipped
examples, are never stored; a pass whose sources changed while it ran is not stored
either.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mlsmoke
from mlsmoke.cache_files import CacheDirectory, settled, stat_stamp
from mlsmoke.interpreter import still_passed_over

if TYPE_CHECKING:
    from mlsmoke.doctests.results import FileResult


def pass_key(
    shown: str,
    fingerprint: str,
    options: Mapping[str, Any],
    interpreters: Sequence[Sequence[str]],
) -> str:
    parts = {
        "mlsmoke": mlsmoke.__version__,
        "file": shown,
        "examples": fingerprint,
        "options": dict(options),
        "interpreters": [list(identity) for identity in interpreters],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


class DoctestPassCache:
    """Passes stored as one JSON file per key under ``<root>/.mlsmoke/doctest/``."""

    def __init__(self, root: Path, fingerprint: Callable[[Path], str]) -> None:
        """``fingerprint(path)``: a project file's code and examples, prose aside."""
        self.root, self.fingerprint = root, fingerprint
        self.entries = CacheDirectory(root, "doctest", keep=1024)

    def hit(self, key: str) -> bool:
        """Whether a pass is stored for ``key`` and all it depends on is unchanged."""
        entry = self.entries.read(key)
        try:
            return bool(
                entry["key"] == key
                and still_passed_over(entry["passed_over"])
                and _packages_unchanged(entry["packages"])
                and self._sources_unchanged(dict(entry["sources"]))
            )
        except (LookupError, TypeError, ValueError, AttributeError):
            return False  # garbled: never trusted

    def store(
        self,
        key: str,
        path: Path,
        modules: Iterable[str],
        packages: Iterable[Sequence[str]],
        passed_over: Mapping[str, Any],
        started: float,
    ) -> None:
        """Record a pass of the file at ``path``; CacheNotWritten when the cache
        cannot be written. ``modules`` and ``packages`` are what was imported by the
        time its examples were done; ``started`` is a time.time() from before the
        run: a source changed since is not trusted."""
        itself = _relative(path, self.root)
        names = sorted(set(modules) - {itself})
        if not settled(self.root, [*names, itself], started):
            return
        entry = {
            "key": key,
            "sources": {name: self.fingerprint(self.root / name) for name in names},
            "packages": {name: [where, stat_stamp(where)] for name, where in packages},
            "passed_over": dict(passed_over),
        }
        self.entries.write(key, entry)

    def _sources_unchanged(self, sources: Mapping[str, str]) -> bool:
        return all(
            recorded != "missing" and self.fingerprint(self.root / name) == recorded
            for name, recorded in sources.items()
        )


def passes_to_store(
    results: Sequence[FileResult],
) -> Iterable[tuple[FileResult, list, list]]:
    """Each passing result with skipped examples none, with the project modules and
    packages imported by the time it was done (the runner reports what is new)."""
    modules: list[str] = []
    packages: list[list[str]] = []
    for result in results:
        modules += result.modules
        packages += result.packages
        if result.passed and not result.skipped:
            yield result, list(modules), list(packages)


def _packages_unchanged(packages: Mapping[str, Sequence[Any]]) -> bool:
    return all(
        stamp is not None and stat_stamp(where) == list(stamp)
        for where, stamp in packages.values()
    )


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
