"""The ``args`` init proposes for a training script: command-line overrides that make
its run tiny, CPU-only and free of side effects, read from the script's own settings.

The script's settings come from ``script_settings`` (a configurator's globals,
argparse, a config dataclass, a config object's attributes). Only settings the script
defines are proposed, and only where the default differs. A pure function of the
source.
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from mlsmoke.adopt.script_candidates import builds_optimizer, optimizer_names
from mlsmoke.script_settings import (
    NOT_LITERAL,
    Setting,
    argparse_settings,
    configurator_settings,
    dataclass_settings,
    dotted_settings,
    module_level_settings,
)
from mlsmoke.overfit.training.script_process import OUT_DIR

# Well-known names -> the tiny run's value. "{out_dir}" is the gate's temporary dir.
TINY: dict[str, object] = {
    "device": "cpu",
    **dict.fromkeys(("no_cuda", "no_mps", "no_accel", "cpu"), True),
    **dict.fromkeys(("cuda", "use_cuda"), False),
    "compile": False,
    "dtype": "float32",
    **dict.fromkeys(("amp", "fp16", "bf16", "use_amp"), False),
    **dict.fromkeys(("n_layer", "n_layers", "num_layers", "nlayers", "depth"), 2),
    **dict.fromkeys(("num_hidden_layers",), 2),
    **dict.fromkeys(("n_head", "n_heads", "num_heads", "num_attention_heads",
                     "nhead"), 2),  # fmt: skip
    **dict.fromkeys(("n_embd", "n_embed", "hidden_size", "d_model", "embed_dim",
                     "emsize", "nhid"), 32),  # fmt: skip
    **dict.fromkeys(("block_size", "seq_len", "max_seq_len", "context_length"), 16),
    **dict.fromkeys(("batch_size", "train_batch_size"), 4),
    "per_device_train_batch_size": 4,
    "eval_iters": 1,
    **dict.fromkeys(("wandb_log", "log", "use_wandb", "wandb", "tensorboard"), False),
    **dict.fromkeys(
        ("out_dir", "output_dir", "save_dir", "checkpoint_dir", "ckpt_dir", "work_dir"),
        OUT_DIR,
    ),
    **dict.fromkeys(("num_workers", "workers"), 0),
}
HEADS = ("n_head", "n_heads", "num_heads", "num_attention_heads", "nhead")
WIDTHS = ("n_embd", "n_embed", "hidden_size", "d_model", "embed_dim", "emsize", "nhid")
# A setting whose default is a file of one of these kinds is where the script saves
# its checkpoint: the gate's directory, under the file's own name.
CHECKPOINT_FILES = (".pt", ".pth", ".ckpt", ".bin", ".safetensors")
WARMUPS = ("warmup_iters", "warmup_steps")
# Accumulation is kept (the gate checks an update of several backward passes), at two.
ACCUMULATION = ("gradient_accumulation_steps", "grad_accum_steps", "accumulation_steps")
# What a tiny run needs set, and the names that set it.
NEEDS = {
    "the device": ("device", "no_cuda", "cpu", "cuda", "use_cuda"),
    "the model's size": ("n_layer", "n_layers", "num_layers", "nlayers", "depth",
                         *WIDTHS),  # fmt: skip
    "the output directory": (
        "out_dir",
        "output_dir",
        "save_dir",
        "checkpoint_dir",
        "work_dir",
    ),
}
MODULE_LEVEL = "module-level"  # the style of a script that reads no settings


@dataclass(frozen=True)
class Proposal:
    style: str | None  # "configurator", "argparse", ...; None: none found
    args: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what is left to fill
    # for a script that reads no settings: values for its module-level assignments
    globals: dict[str, object] = field(default_factory=dict)


def propose(path: str, source: str, budget: int) -> Proposal:
    """The args for a tiny run of the script at ``path``; ``budget``, the gate's
    max-steps, which a warmup should not fill."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return Proposal(None, [], [f"{path} does not parse"])
    heads = "head" in source.lower()  # the script mentions attention heads at all
    for style, read in (
        ("configurator", configurator_settings),
        ("argparse", argparse_settings),
        ("dataclass", dataclass_settings),
        ("config object", dotted_settings),
    ):
        settings = read(tree)
        if settings:
            proposal = _proposal(path, style, settings, budget, heads)
            switches = optimizer_switches(tree, settings)
            if not switches:
                return proposal
            note = (
                f"{path} builds its optimizer only with {' and '.join(switches)};"
                " without, it updates its weights by hand, which the gate (watching"
                " torch.optim's updates) cannot see: the gate runs it with them"
            )
            return dataclasses.replace(
                proposal, args=switches + proposal.args, notes=[note, *proposal.notes]
            )
    found = _globals_proposal(path, module_level_settings(tree), budget, heads)
    if found is not None:
        return found
    return Proposal(
        None,
        [],
        [
            f"{path} takes no settings mlsmoke can read (a configurator, argparse, a"
            " config dataclass or module-level assignments of sizes): set args or"
            " globals in [tool.mlsmoke.overfit] to make its run small, on the CPU and"
            " without side effects"
        ],
    )


def _proposal(
    path: str, style: str, settings: list[Setting], budget: int, heads: bool
) -> Proposal:
    """``heads``: whether the script mentions attention heads at all."""
    args = []
    for setting, value in _tiny_values(settings, budget, heads):
        arg = command_line(setting, value)
        if arg is not None:
            args.append(arg)
    notes = [
        f"{path}: {setting.option} is required; add it to args"
        for setting in settings
        if setting.required
    ]
    return Proposal(style, args, notes + _missing(path, settings, "args"))


def optimizer_switches(tree: ast.Module, settings: list[Setting]) -> list[str]:
    """The switches (``store_true`` options) under which the script builds its
    optimizer, ``if args.use_optimizer:``: without them it updates its weights by
    hand, which the gate, watching torch.optim's updates, cannot see."""
    switches = {s.name: s.option for s in settings if s.kind == "store_true"}
    imported = optimizer_names(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or not isinstance(node.test, ast.Attribute):
            continue
        option = switches.get(node.test.attr)
        builds = any(
            isinstance(call, ast.Call) and builds_optimizer(call, imported)
            for statement in node.body
            for call in ast.walk(statement)
        )
        if option is not None and builds and option not in found:
            found.append(option)
    return found


def _globals_proposal(
    path: str, settings: list[Setting], budget: int, heads: bool
) -> Proposal | None:
    """The values ``globals`` gives a script that reads no settings, for the
    module-level assignments it has of a literal (a value of another kind, as
    ``torch.float16`` or a logger, is left as the script makes it); None when none
    needs one."""
    given: dict[str, object] = {}
    literals = [setting for setting in settings if setting.default is not NOT_LITERAL]
    for setting, value in _tiny_values(literals, budget, heads):
        if isinstance(setting.default, float) and type(value) is int:
            value = float(value)  # as the script wrote it
        given[setting.name] = value
    if not given:
        return None
    notes = _missing(path, settings, "globals")
    return Proposal(MODULE_LEVEL, [], notes, given)


def _tiny_values(
    settings: list[Setting], budget: int, heads: bool
) -> list[tuple[Setting, object]]:
    """Each setting a tiny run changes, with its value there."""
    by_name = {setting.name.lower(): setting for setting in settings}
    wanted = dict(TINY)
    if heads and not set(HEADS) & set(by_name):
        for width in WIDTHS:  # heads set elsewhere may not divide a width of 32
            wanted.pop(width)
    wanted.update(dict.fromkeys(WARMUPS, max(1, budget // 30)))
    wanted.update(dict.fromkeys(ACCUMULATION, 2))
    chosen = []
    for setting in settings:
        value = wanted.get(setting.name.lower(), NOT_LITERAL)
        if value is NOT_LITERAL and _checkpoint_file(setting.default):
            value = f"{OUT_DIR}/{PurePosixPath(str(setting.default)).name}"
        if value is not NOT_LITERAL and _changes(setting, value, budget):
            chosen.append((setting, value))
    return chosen


def _checkpoint_file(default: object) -> bool:
    return isinstance(default, str) and default.lower().endswith(CHECKPOINT_FILES)


def _missing(path: str, settings: list[Setting], key: str) -> list[str]:
    names = {setting.name.lower() for setting in settings}
    if any(_checkpoint_file(setting.default) for setting in settings):
        names.add("out_dir")
    missing = [need for need, those in NEEDS.items() if not set(those) & names]
    if not missing:
        return []
    return [
        f"{path} has no setting for {', '.join(missing)}; if its run needs one,"
        f" add it to {key} in [tool.mlsmoke.overfit]"
    ]


def _changes(setting: Setting, value: object, budget: int) -> bool:
    """Whether setting ``value`` changes the run: a warmup only when it would fill
    more than a tenth of the budget, accumulation only when it is larger."""
    default = setting.default
    name = setting.name.lower()
    if _other_type(default, value):
        return False  # a --log level is not a switch: not the setting it names
    if isinstance(default, bool) or not isinstance(default, (int, float)):
        return default != value
    if name in WARMUPS:
        return default > budget // 10
    if name in ACCUMULATION:
        return default > value  # type: ignore[operator]
    return default != value


def _other_type(default: object, value: object) -> bool:
    if default is None or default is NOT_LITERAL or value == OUT_DIR:
        return False
    numbers = (int, float)
    if isinstance(value, bool) or isinstance(default, bool):
        return type(value) is not type(default)
    if isinstance(value, numbers) and isinstance(default, numbers):
        return False
    return type(value) is not type(default)


def command_line(setting: Setting, value: object) -> str | None:
    """The argument that sets ``setting`` to ``value``, or None when none does."""
    if setting.choices is not None and str(value) not in map(str, setting.choices):
        return None
    if setting.kind == "store_true":
        return setting.option if value is True else None
    if setting.kind == "store_false":
        return setting.option if value is False else None
    if setting.kind == "optional":
        stem = setting.option.lstrip("-")
        return f"--{stem}" if value is True else f"--no-{stem}"
    if setting.kind == "literal":  # read back with ast.literal_eval
        return f"{setting.option}={value!r}"
    default = setting.default
    if isinstance(default, float) and type(value) is int:
        value = float(value)  # a configurator checks the type it replaces
    return f"{setting.option}={value}"
