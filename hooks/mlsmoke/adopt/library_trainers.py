"""Scripts that train through a library's trainer: they build transformers'
``Trainer`` (or a subclass a library ships, ``Seq2SeqTrainer``, trl's ``SFTTrainer``)
and call its ``train()``, or build Lightning's ``Trainer`` and call its ``fit()``. The
optimizer, ``backward()`` and ``step()`` are the library's; the script trains as surely
as one that holds the loop itself. Found by reading the source; nothing is imported.
"""

from __future__ import annotations

import ast

from mlsmoke.ast_names import dotted, last

# The libraries are the subject here (an adapter): a trainer's training call is
# found by its name. A script that trains through a trainer not listed is found
# only by its own optimizer, backward() and step() (script_candidates.trains).
# A library's top-level package -> the method of its trainers that trains.
TRAINING_METHODS = {
    "transformers": "train",
    "trl": "train",
    "lightning": "fit",
    "pytorch_lightning": "fit",
}


def trains_through(tree: ast.Module) -> str | None:
    """Why ``tree`` trains through a library trainer, or None: it builds one and
    calls its training method, on the trainer built or on a name bound to it."""
    libraries = _imported(tree)
    built: dict[str, tuple[str, ast.Call]] = {}  # a name bound to a trainer
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            trainer = _trainer(node.value, libraries)
            for target in node.targets:
                if trainer is not None and isinstance(target, ast.Name):
                    built[target.id] = (trainer, node.value)
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            continue
        receiver = call.func.value
        if isinstance(receiver, ast.Call):
            trainer = _trainer(receiver, libraries)
            found = (trainer, receiver) if trainer else None
        else:
            found = (
                built.get(last(receiver)) if isinstance(receiver, ast.Name) else None
            )
        if found is None:
            continue
        trainer, construction = found
        method = TRAINING_METHODS[trainer.split(".")[0]]
        if call.func.attr == method:
            return (
                f"builds {trainer} (line {construction.lineno}) and calls its"
                f" {method}() (line {call.lineno})"
            )
    return None


def _imported(tree: ast.Module) -> dict[str, str]:
    """Local names of the trainer libraries and of what is imported from them:
    ``L`` -> ``lightning``, ``Trainer`` -> ``transformers.Trainer``."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in TRAINING_METHODS:
                    names[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0]
                    )
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            module = node.module or ""
            if module.split(".")[0] in TRAINING_METHODS:
                for alias in node.names:
                    names[alias.asname or alias.name] = f"{module}.{alias.name}"
    return names


def _trainer(call: ast.Call, libraries: dict[str, str]) -> str | None:
    """The library trainer ``call`` builds (``transformers.Trainer``), or None."""
    name = dotted(call.func)
    head, _, rest = name.partition(".")
    if not name or head not in libraries:
        return None
    full = f"{libraries[head]}.{rest}" if rest else libraries[head]
    if not full.split(".")[-1].endswith("Trainer"):
        return None
    return f"{full.split('.')[0]}.{full.split('.')[-1]}"
