"""``mlsmoke_gate.py``: the gate's factories, written by ``init`` for the user to
finish when the source holds no buildable model and batch factories.

A pure function of the candidates: the project's model class built from its config
class at a tiny size (or a TODO naming the class and what it needs), a batch of random
tokens when the model is a language model whose config says its vocabulary and
context (else a TODO), and ``optimizer(model)`` calling the model's own
``configure_optimizers`` when it has one.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass

from mlsmoke.adopt.candidates import Candidates, ConfigClass, ModelClass

MODULE = "mlsmoke_gate"
FILENAME = f"{MODULE}.py"
BATCH_SIZE = 4

# Config fields shrunk for a gate that memorizes in seconds: name -> tiny value.
TINY = {
    **dict.fromkeys(("n_layer", "n_layers", "num_layers", "depth", "layers"), 1),
    **dict.fromkeys(("n_head", "n_heads", "num_heads", "heads"), 2),
    **dict.fromkeys(
        ("n_embd", "d_model", "hidden_size", "dim", "embed_dim", "n_embed"), 32
    ),
    **dict.fromkeys(("block_size", "max_seq_len", "context_length", "seq_len"), 16),
    **dict.fromkeys(("dropout", "attn_dropout", "resid_dropout", "embd_pdrop"), 0.0),
}
VOCAB = ("vocab_size", "num_tokens", "n_vocab")
TINY.update(dict.fromkeys(VOCAB, 64))  # the random batch's; real data needs its own
CONTEXT = ("block_size", "max_seq_len", "context_length", "seq_len")
# configure_optimizers' parameters as nanoGPT's train.py passes them.
RECIPE_ARGUMENTS = {
    "weight_decay": 0.1,
    "learning_rate": 6e-4,
    "lr": 6e-4,
    "betas": (0.9, 0.95),
    "device_type": "cpu",
}


@dataclass(frozen=True)
class GateModule:
    text: str
    model: str  # the specs [tool.mlsmoke.overfit] names
    batch: str
    optimizer: str | None
    todo: list[str]  # what the user must finish before the gate can pass


def choose_class(found: Candidates) -> ModelClass | None:
    """The model to build: a configurable class no other one builds (the one with a
    recipe first), else the model class no other model class builds."""
    for kind in (found.configurable, found.classes):
        built = {name for model in found.classes for name in model.builds}
        outer = [model for model in kind if model.name not in built] or kind
        if outer:
            return sorted(outer, key=lambda model: model.recipe is None)[0]
    return None


def gate_module(found: Candidates) -> GateModule:
    chosen = choose_class(found)
    todo: list[str] = []
    model = _model_lines(chosen, todo)
    batch = _batch_lines(chosen, todo)
    recipe = _recipe_lines(chosen, todo)
    body = [*model, "", "", *batch, *(["", "", *recipe] if recipe else [])]
    head = [
        '"""The overfit-batch gate\'s factories, written by `mlsmoke init` for you to',
        "finish. [tool.mlsmoke.overfit] in pyproject.toml names them; once",
        "`mlsmoke overfit` passes, `mlsmoke init` turns on `overfit-batch` in",
        '.pre-commit-config.yaml (or uncomment it there)."""',
    ]
    imports = _imports(chosen, body)
    head += ["", *imports] if imports else []
    return GateModule(
        "\n".join([*head, "", "", *body]) + "\n",
        f"{MODULE}:model",
        f"{MODULE}:batch",
        f"{MODULE}:optimizer" if recipe else None,
        todo,
    )


def _imports(chosen: ModelClass | None, body: list[str]) -> list[str]:
    """The import lines the code of ``body`` uses."""
    code = "\n".join(line for line in body if not line.lstrip().startswith("#"))
    lines = ["import torch"] if "torch." in code else []
    by_module: dict[str, list[str]] = {}
    if chosen is not None:
        pairs = [(chosen.module, chosen.name)]
        if chosen.config is not None:
            pairs.append((chosen.config.module, chosen.config.name))
        for module, name in pairs:
            if f"{name}(" in code:
                by_module.setdefault(module, []).append(name)
    if lines and by_module:
        lines.append("")
    lines += [
        f"from {module} import {', '.join(sorted(names))}"
        for module, names in sorted(by_module.items())
    ]
    return lines


def _model_lines(chosen: ModelClass | None, todo: list[str]) -> list[str]:
    head = [
        "def model():",
        '    """The project\'s model, tiny: one batch memorized in seconds."""',
    ]
    if chosen is not None and chosen.config is not None:
        arguments = ", ".join(
            f"{name}={python(value)}"
            for name, value in tiny_config(chosen.config).items()
        )
        config = f"{chosen.config.name}({arguments})"
        note = []
        if any(field.name in VOCAB for field in chosen.config.fields):
            note = ["    # A batch of your own data needs its vocabulary size here."]
        return [*head, *note, f"    return {chosen.name}({config})"]
    if chosen is not None and not any(p.required for p in chosen.init):
        return [*head, f"    return {chosen.name}()"]
    needs = ", ".join(p.name for p in chosen.init if p.required) if chosen else ""
    example = f"{chosen.name}({needs}) of {chosen.module}" if chosen else "your model"
    todo.append(f"{MODULE}.model: build {example} at a tiny size")
    comment = textwrap.wrap(f"TODO: build {example} at a tiny size.", 70)
    return [
        *head,
        *(f"    # {line}" for line in comment),
        f'    raise NotImplementedError("{MODULE}.model: build the model")',
    ]


def python(value: object) -> str:
    """``value`` as black writes it: strings in double quotes."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, tuple):
        return "(" + ", ".join(python(item) for item in value) + ")"
    return repr(value)


def tiny_config(config: ConfigClass) -> dict[str, object]:
    """The fields of ``config`` to set for a tiny model (heads divide the width)."""
    return {
        field.name: TINY[field.name]
        for field in config.fields
        if field.name in TINY and field.default != TINY[field.name]
    }


def _batch_lines(chosen: ModelClass | None, todo: list[str]) -> list[str]:
    head = ["def batch():"]
    language = chosen is not None and chosen.config is not None and _tokens(chosen)
    if language:
        vocab, context = language
        return [
            *head,
            '    """One batch of token ids and next-token targets, as forward takes',
            "    them. Random tokens memorize as well as text; for the data's own",
            '    shapes and ids, return one batch of your data loader here instead."""',
            "    generator = torch.Generator().manual_seed(0)",
            f"    shape = ({BATCH_SIZE}, {context} + 1)",
            f"    tokens = torch.randint(0, {vocab}, shape, generator=generator)",
            "    return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()",
        ]
    todo.append(f"{MODULE}.batch: return one training batch")
    return [
        *head,
        '    """One training batch, as the model\'s forward (or training_step) takes',
        '    it, e.g. (inputs, targets)."""',
        "    # TODO: return one batch of your data, e.g. next(iter(train_loader)).",
        f'    raise NotImplementedError("{MODULE}.batch: return one training batch")',
    ]


def _tokens(chosen: ModelClass) -> tuple[str, str] | None:
    """The vocabulary and context expressions of a language model's config, when
    its forward takes ids and targets."""
    config = chosen.config
    forward = [p.name for p in chosen.forward]
    fields = {field.name: field for field in config.fields}
    vocab = next((name for name in VOCAB if name in fields), None)
    context = next((name for name in CONTEXT if name in fields), None)
    if vocab is None or context is None or len(forward) < 2:
        return None
    tiny = tiny_config(config)
    size = tiny.get(context, fields[context].default)
    return str(tiny.get(vocab, fields[vocab].default)), str(size)


def _recipe_lines(chosen: ModelClass | None, todo: list[str]) -> list[str]:
    """``optimizer(model)`` calling the model's configure_optimizers, if it has one."""
    if chosen is None or chosen.recipe is None or chosen.config is None:
        return []
    arguments = []
    for parameter in chosen.recipe:
        if not parameter.required:
            continue
        value = RECIPE_ARGUMENTS.get(parameter.name)
        mark = "  # TODO" if value is None else ""
        arguments.append(f"        {parameter.name}={python(value)},{mark}")
        if value is None:
            what = f"configure_optimizers' {parameter.name}"
            todo.append(f"{MODULE}.optimizer: pass {what}")
    return [
        "def optimizer(model):",
        '    """The model\'s own recipe: its optimizer and parameter groups."""',
        "    return model.configure_optimizers(",
        *arguments,
        "    )",
    ]
