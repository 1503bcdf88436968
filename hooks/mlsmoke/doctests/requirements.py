"""Which third-party modules the files under test need, found without importing them.

Two kinds of need, both read from the source:

- **required**: the absolute imports at module level of the named files, and of the
  project modules those import in turn (module level again). Without them a file does
  not import, so the interpreter must have them.
- **wanted**: the imports of the named files' own ``>>>`` lines, and what the project
  modules imported there import at module level. An example whose package is missing is
  skipped, naming it; the interpreter search prefers one that has them.

Imports under ``try``, ``if`` or inside functions are optional and left out, as are
``+SKIP`` examples, the standard library and the project's own modules. The examples of
modules the named files merely import are never read: their optional dependencies are
not this commit's business.
"""

from __future__ import annotations

import ast
import hashlib
import re
import sys
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from mlsmoke.doctests.documents import document_kind, example_text
from mlsmoke.doctests.import_cache import ImportCache, ParsedImports, RawImport
from mlsmoke.doctests.selection import docstrings
from mlsmoke.doctests.modules import (
    is_local_module,
    locate_module,
    project_source_roots,
)

# A bound on the project modules followed, for huge monorepos.
MAX_FOLLOWED_FILES = 2000

_EXAMPLE_IMPORT = re.compile(
    r"^[ \t]*>>>[ \t]+(?:import[ \t]+(?P<imported>[\w.]+)|from[ \t]+(?P<source>[\w.]+)"
    r"[ \t]+import\b)(?P<rest>.*)$",
    re.MULTILINE,
)
# doctest expands tabs before it reads prompts and blank lines.
_PROMPT_LINE = re.compile(r"[ \t]*>>>")
_BLANK_LINE = re.compile(r"[ \t]*")
_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_NOT_THIRD_PARTY = frozenset(sys.stdlib_module_names) | {"__future__", "__main__"}


class Needs(NamedTuple):
    """Top-level third-party modules, each with a file that needs it."""

    required: dict[str, Path]
    wanted: dict[str, Path]


def required_modules(
    files: dict[Path, str], root: Path, cache: ImportCache | None = None
) -> Needs:
    """What the named files need; ``files`` maps their paths to their text."""
    walk = _Walk(root, _search_roots(list(files), root), cache or ImportCache(None))
    parsed = {path: walk.parsed(path, text) for path, text in files.items()}
    required = walk.third_party(
        (path, module_level_names(imports, path, root))
        for path, imports in parsed.items()
    )
    wanted = walk.third_party(
        (path, imports.examples) for path, imports in parsed.items()
    )
    return Needs(
        dict(sorted(required.items())),
        {name: path for name, path in sorted(wanted.items()) if name not in required},
    )


class _Walk:
    """Breadth first through the project's modules, module-level imports only: a
    module is credited to a named file before a file it imports. A project module is
    followed once, by the first walk that reaches it."""

    def __init__(self, root: Path, search_roots: list[Path], cache: ImportCache):
        self.root, self.search_roots, self.cache = root, search_roots, cache
        self.seen: set[Path] = set()

    def parsed(self, path: Path, text: str) -> ParsedImports:
        return self.cache.imports_of(path, text, parse_imports)

    def third_party(
        self, starts: Iterable[tuple[Path, Iterable[str]]]
    ) -> dict[str, Path]:
        found: dict[str, Path] = {}
        queue = deque(starts)
        while queue:
            importer, names = queue.popleft()
            for dotted in names:
                top_level = dotted.partition(".")[0]
                if top_level in _NOT_THIRD_PARTY:
                    continue
                local = project_files(dotted, self.search_roots)
                if local is None:
                    found.setdefault(top_level, importer)
                    continue
                for path in local:
                    if path in self.seen or len(self.seen) >= MAX_FOLLOWED_FILES:
                        continue
                    self.seen.add(path)
                    imports = self.parsed(path, _read_text(path))
                    queue.append((path, module_level_names(imports, path, self.root)))
        return found


def parse_imports(path: Path, text: str) -> ParsedImports:
    """A file's module-level imports, unresolved, its examples' imports, and the
    fingerprint of its code and examples."""
    kind = document_kind(path.name)
    if kind != "python":
        fingerprint = _digest(examples_only(example_text(text, kind)))
        return ParsedImports([], list(example_imports(text)), fingerprint)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        # the runner reports it when importing the file; a failure is never cached
        return ParsedImports([], [], _digest(text))
    examples = [name for doc in docstrings(tree) for name in example_imports(doc)]
    module = list(module_level_imports(tree))
    return ParsedImports(module, examples, examples_fingerprint(tree))


def examples_fingerprint(tree: ast.Module) -> str:
    """The module's code with each docstring cut down to its examples: an edit to
    prose or comments, or one that moves lines, keeps it."""
    for node in ast.walk(tree):
        if isinstance(node, _DOCUMENTED) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                first.value.value = examples_only(first.value.value)
    return _digest(ast.dump(tree))


def examples_only(text: str) -> str:
    """The example blocks of a docstring or document: each ``>>>`` line with the
    lines after it, up to a blank line. doctest's grammar puts an example's source
    (a ``>>>`` line and its ``...`` lines), options and expected output (the non-blank
    lines after it) inside these blocks, so an edit to an example changes them and
    prose between examples does not. doctest itself is not imported: with pdb,
    unittest and inspect, its import costs a prose commit more than the rest of
    the hook's cached pass."""
    blocks: list[str] = []
    in_block = False
    for line in text.split("\n"):  # doctest's lines: \r and \f are characters
        if _BLANK_LINE.fullmatch(line):
            in_block = False
        elif in_block or _PROMPT_LINE.match(line):
            in_block = True
            blocks.append(line)
    return "\n".join(blocks)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def module_level_imports(tree: ast.Module) -> Iterator[RawImport]:
    """The imports directly in the module's body, as ``(module, level, names)``."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            yield from ((alias.name, 0, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
            yield (node.module or "", node.level, names)


def module_level_names(imports: ParsedImports, path: Path, root: Path) -> list[str]:
    """Absolute dotted names; ``from a import b`` gives ``a`` and ``a.b``, since ``b``
    may be a submodule."""
    package = _package_parts(path, root) if any(i[1] for i in imports.module) else []
    dotted = []
    for module, level, names in imports.module:
        base = _absolute(module, level, package)
        if base:
            dotted += [base] + [f"{base}.{name}" for name in names if name != "*"]
    return dotted


def example_imports(text: str) -> Iterator[str]:
    """Absolute names imported by ``>>>`` lines, except those skipped with +SKIP."""
    for match in _EXAMPLE_IMPORT.finditer(text):
        name = match["imported"] or match["source"]
        if "+SKIP" not in match["rest"] and not name.startswith("."):
            yield name


def project_files(dotted: str, search_roots: list[Path]) -> list[Path] | None:
    """The project's files that importing ``dotted`` runs; None when it is not local."""
    first, *rest = dotted.split(".")
    for search_root in search_roots:
        if not is_local_module(first, [search_root]):
            continue
        found, directory = [], search_root
        for part in [first, *rest]:
            if (directory / part / "__init__.py").is_file():
                found.append(directory / part / "__init__.py")
            elif (directory / f"{part}.py").is_file():
                found.append(directory / f"{part}.py")
                break
            elif not (directory / part).is_dir():
                break
            directory = directory / part
        return found
    return None


def _read_text(path: Path) -> str:
    try:
        return path.read_text("utf-8", "replace")
    except OSError:
        return ""  # unreadable here, so it fails loudly in the runner instead


def _search_roots(paths: list[Path], root: Path) -> list[Path]:
    roots = project_source_roots(root)
    for path in paths:
        if document_kind(path.name) == "python":
            location = locate_module(path, root)
            roots += [location.search_root]
            roots += [location.script_dir] if location.script_dir else []
    return list(dict.fromkeys(roots))


def _package_parts(path: Path, root: Path) -> list[str] | None:
    name = locate_module(path, root).name
    if not name:
        return None
    parts = name.split(".")
    return parts if path.name == "__init__.py" else parts[:-1]


def _absolute(module: str, level: int, package: list[str] | None) -> str:
    if level == 0:
        return module
    if package is None or level > len(package):
        return ""
    base = package[: len(package) - (level - 1)]
    return ".".join(base + ([module] if module else []))
