"""What each project file imports, remembered by its content between runs.

Reading a large module's imports means parsing it (a 5,000-line module costs about
0.2 s). The result, with the file's fingerprint for the pass cache, is stored in
``<root>/.mlsmoke/doctest-imports/imports.json`` under the sha256 of the file's text,
so an entry can never be stale: an edited file has another digest. The file is
written once per run, atomically, and only when something new was parsed; a garbled
or unwritable one only costs the parse.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from mlsmoke.cache_files import CacheDirectory, CacheNotWritten

NAME = "imports"
FORMAT = 3  # bump when what is stored per file changes
MAX_FILES = 4096

RawImport = tuple[str, int, list[str]]  # (module, level, names), as in the source


class ParsedImports(NamedTuple):
    module: list[RawImport]  # at module level, relative ones unresolved
    examples: list[str]  # absolute names imported by ``>>>`` lines
    # The file with its prose left out: the code and the examples (see
    # ``requirements.examples_fingerprint``); what a doctest pass depends on.
    fingerprint: str = ""


class ImportCache:
    """``imports_of(path, text, parse)`` answers from the cache or parses and keeps it.

    ``root`` None keeps nothing between runs.
    """

    def __init__(self, root: Path | None) -> None:
        self.store = (
            CacheDirectory(root, "doctest-imports") if root is not None else None
        )
        self.known: dict[str, ParsedImports] = {}
        self.used: set[str] = set()
        self.changed = False
        self.parse: Callable[[Path, str], ParsedImports] | None = None
        self.fingerprints: dict[Path, str] = {}
        if self.store is not None:
            self.known = _entries(self.store.read(NAME))

    def imports_of(
        self, path: Path, text: str, parse: Callable[[Path, str], ParsedImports]
    ) -> ParsedImports:
        # The path is in the digest: a document and a module of the same text differ.
        key = f"{FORMAT}\0{path.suffix}\0{text}".encode("utf-8", "surrogateescape")
        digest = hashlib.sha256(key).hexdigest()
        self.used.add(digest)
        self.parse = parse
        found = self.known.get(digest)
        if found is None:
            found = self.known[digest] = parse(path, text)
            self.changed = True
        return found

    def fingerprint(self, path: Path) -> str:
        """A project file's fingerprint (its code and examples, prose aside);
        "missing" when it cannot be read. Read once a run: every stored pass of a
        run names the same modules."""
        if path not in self.fingerprints:
            self.fingerprints[path] = self._fingerprint(path)
        return self.fingerprints[path]

    def _fingerprint(self, path: Path) -> str:
        try:
            text = path.read_bytes().decode("utf-8", "surrogateescape")
        except OSError:
            return "missing"
        if self.parse is None:  # pragma: no cover - set by the first imports_of
            return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
        return self.imports_of(path, text, self.parse).fingerprint

    def save(self) -> None:
        """Write what was parsed; the entries used this run are kept first."""
        if self.store is None or not self.changed:
            return
        order = sorted(self.known, key=lambda digest: digest not in self.used)
        kept = {digest: self.known[digest] for digest in order[:MAX_FILES]}
        data = {"format": FORMAT, "files": {d: list(p) for d, p in kept.items()}}
        try:
            self.store.write(NAME, data)
        except CacheNotWritten:
            pass  # the next run parses again


def _entries(data: object) -> dict[str, ParsedImports]:
    """The stored entries; none when the file is missing, garbled or of another
    format."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}
    entries = {}
    try:
        for digest, (module, examples, fingerprint) in data["files"].items():
            raw = [
                (str(m), int(level), [str(n) for n in names])
                for m, level, names in module
            ]
            examples = [str(name) for name in examples]
            entries[str(digest)] = ParsedImports(raw, examples, str(fingerprint))
    except (LookupError, TypeError, ValueError, AttributeError):
        return {}
    return entries
