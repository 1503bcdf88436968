"""The ``args`` init proposes for a training script: command-line overrides that make
its run tiny, CPU-only and free of side effects, read from the script's own settings.

Three ways a script takes settings are read: module-level globals overridden by a
nanoGPT-style configurator (``exec(open("configurator.py").read())``, ``--name=value``),
argparse's ``add_argument("--lr", ...)``, and a config dataclass parsed from the
command line (``HfArgumentParser``, ``tyro.cli``, ``simple_parsing``). Only settings
the script defines are proposed, and only where the default differs. A pure function of
the source.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from mlsmoke.overfit.training.script_process import OUT_DIR

# Well-known names -> the tiny run's value. "{out_dir}" is the gate's temporary dir.
TINY: dict[str, object] = {
    "device": "cpu",
    **dict.fromkeys(("no_cuda", "no_mps", "no_accel", "cpu"), True),
    **dict.fromkeys(("cuda", "use_cuda"), False),
    "compile": False,
    "dtype": "float32",
    **dict.fromkeys(("amp", "fp16", "bf16", "use_amp"), False),
    **dict.fromkeys(("n_layer", "n_layers", "num_layers", "depth"), 2),
    **dict.fromkeys(("num_hidden_layers",), 2),
    **dict.fromkeys(("n_head", "n_heads", "num_heads", "num_attention_heads"), 2),
    **dict.fromkeys(("n_embd", "n_embed", "hidden_size", "d_model", "embed_dim"), 32),
    **dict.fromkeys(("block_size", "seq_len", "max_seq_len", "context_length"), 16),
    **dict.fromkeys(("batch_size", "train_batch_size"), 4),
    "per_device_train_batch_size": 4,
    "eval_iters": 1,
    **dict.fromkeys(("wandb_log", "log", "use_wandb", "wandb", "tensorboard"), False),
    **dict.fromkeys(
        ("out_dir", "output_dir", "save_dir", "checkpoint_dir", "ckpt_dir"), OUT_DIR
    ),
    **dict.fromkeys(("num_workers", "workers"), 0),
}
HEADS = ("n_head", "n_heads", "num_heads", "num_attention_heads")
WIDTHS = ("n_embd", "n_embed", "hidden_size", "d_model", "embed_dim")
WARMUPS = ("warmup_iters", "warmup_steps")
# Accumulation is kept (the gate checks an update of several backward passes), at two.
ACCUMULATION = ("gradient_accumulation_steps", "grad_accum_steps", "accumulation_steps")
# What a tiny run needs set, and the names that set it.
NEEDS = {
    "the device": ("device", "no_cuda", "cpu", "cuda", "use_cuda"),
    "the model's size": ("n_layer", "n_layers", "num_layers", "depth", *WIDTHS),
    "the output directory": ("out_dir", "output_dir", "save_dir", "checkpoint_dir"),
}
PARSERS = ("HfArgumentParser", "cli", "parse", "add_arguments")


class _NotLiteral:
    def __repr__(self) -> str:
        return "<not a literal>"


NOT_LITERAL = _NotLiteral()


@dataclass(frozen=True)
class Setting:
    """One setting of the script, as its command line sets it."""

    name: str  # the setting's name in the script (argparse's dest)
    option: str  # "--batch-size"
    default: object = NOT_LITERAL
    kind: str = "value"  # value, store_true, store_false, optional (--x/--no-x)
    choices: tuple[object, ...] | None = None
    required: bool = False


@dataclass(frozen=True)
class Proposal:
    style: str | None  # "configurator", "argparse", "dataclass"; None: none found
    args: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what is left to fill


def propose(path: str, source: str, budget: int) -> Proposal:
    """The args for a tiny run of the script at ``path``; ``budget``, the gate's
    max-steps, which a warmup should not fill."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return Proposal(None, [], [f"{path} does not parse"])
    for style, read in (
        ("configurator", configurator_settings),
        ("argparse", argparse_settings),
        ("dataclass", dataclass_settings),
    ):
        settings = read(tree)
        if settings:
            heads = "head" in source.lower()
            return _proposal(path, style, settings, budget, heads)
    return Proposal(
        None,
        [],
        [
            f"{path} takes no settings mlsmoke can read (a configurator, argparse or"
            " a config dataclass): set args in [tool.mlsmoke.overfit] to make its run"
            " small, on the CPU and without side effects"
        ],
    )


def _proposal(
    path: str, style: str, settings: list[Setting], budget: int, heads: bool
) -> Proposal:
    """``heads``: whether the script mentions attention heads at all."""
    by_name = {setting.name.lower(): setting for setting in settings}
    wanted = dict(TINY)
    if heads and not set(HEADS) & set(by_name):
        for width in WIDTHS:  # heads set elsewhere may not divide a width of 32
            wanted.pop(width)
    wanted.update(dict.fromkeys(WARMUPS, max(1, budget // 30)))
    wanted.update(dict.fromkeys(ACCUMULATION, 2))
    args = []
    for setting in settings:
        value = wanted.get(setting.name.lower(), NOT_LITERAL)
        if value is NOT_LITERAL or not _changes(setting, value, budget):
            continue
        arg = command_line(setting, value)
        if arg is not None:
            args.append(arg)
    notes = [
        f"{path}: {setting.option} is required; add it to args"
        for setting in settings
        if setting.required
    ]
    missing = [need for need, names in NEEDS.items() if not set(names) & set(by_name)]
    if missing:
        notes.append(
            f"{path} has no setting for {', '.join(missing)}; if its run needs one,"
            " add it to args in [tool.mlsmoke.overfit]"
        )
    return Proposal(style, args, notes)


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
    default = setting.default
    if isinstance(default, float) and type(value) is int:
        value = float(value)  # a configurator checks the type it replaces
    return f"{setting.option}={value}"


def literal(node: ast.expr | None) -> object:
    try:
        return ast.literal_eval(node) if node is not None else NOT_LITERAL
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return NOT_LITERAL


def configurator_settings(tree: ast.Module) -> list[Setting]:
    """Module-level globals assigned before a top-level ``exec(open(...).read())``."""
    settings: list[Setting] = []
    for node in tree.body:
        if _is_configurator(node):
            return settings
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name) and not target.id.startswith("_"):
                value = literal(node.value)  # type: ignore[union-attr]
                settings.append(Setting(target.id, f"--{target.id}", value))
    return []


def _is_configurator(node: ast.stmt) -> bool:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    call = node.value
    if not (isinstance(call.func, ast.Name) and call.func.id == "exec"):
        return False
    return any(
        isinstance(inner, ast.Call) and getattr(inner.func, "id", "") == "open"
        for inner in ast.walk(call)
    )


def argparse_settings(tree: ast.Module) -> list[Setting]:
    """Every ``add_argument`` of the module, by its dest."""
    settings = []
    for call in ast.walk(tree):
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "add_argument"
        ):
            continue
        setting = _argument(call)
        if setting is not None:
            settings.append(setting)
    return settings


def _argument(call: ast.Call) -> Setting | None:
    names = [literal(arg) for arg in call.args]
    strings = [name for name in names if isinstance(name, str)]
    options = [name for name in strings if name.startswith("--")]
    keywords = {keyword.arg: keyword.value for keyword in call.keywords}
    if not strings:
        return None
    if not any(name.startswith("-") for name in strings):  # positional: required
        return Setting(strings[0], strings[0], required=True)
    if not options:
        return None
    dest = literal(keywords.get("dest"))
    name = dest if isinstance(dest, str) else options[0][2:].replace("-", "_")
    action = keywords.get("action")
    kind = "value"
    if isinstance(action, ast.Constant) and action.value in (
        "store_true",
        "store_false",
    ):
        kind = action.value
    elif action is not None and _dotted_end(action) == "BooleanOptionalAction":
        kind = "optional"
    elif action is not None or _dotted_end(keywords.get("type")) == "bool":
        return None  # type=bool takes "False" as True: nothing to propose
    default = literal(keywords["default"]) if "default" in keywords else None
    if kind in ("store_true", "store_false") and "default" not in keywords:
        default = kind == "store_false"
    choices = literal(keywords.get("choices"))
    required = literal(keywords.get("required")) is True
    return Setting(
        name,
        options[0],
        default,
        kind,
        tuple(choices) if isinstance(choices, (list, tuple)) else None,
        required,
    )


def _dotted_end(node: ast.expr | None) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def dataclass_settings(tree: ast.Module) -> list[Setting]:
    """The fields of a dataclass the script parses from its command line."""
    classes = {
        node.name: node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
    }
    settings: list[Setting] = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or _dotted_end(call.func) not in PARSERS:
            continue
        tyro = _dotted(call.func) == "tyro.cli"
        for arg in call.args:
            parsed = arg.elts if isinstance(arg, (ast.Tuple, ast.List)) else [arg]
            for item in parsed:
                node = classes.get(_dotted_end(item))
                if node is not None and _is_dataclass(node):
                    settings += _fields(node, tyro)
    return settings


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def _is_dataclass(node: ast.ClassDef) -> bool:
    return any(
        _dotted_end(d.func if isinstance(d, ast.Call) else d) == "dataclass"
        for d in node.decorator_list
    )


def _fields(node: ast.ClassDef, tyro: bool) -> list[Setting]:
    """Fields with defaults; tyro spells them with hyphens and booleans as flags."""
    settings = []
    for item in node.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        value = item.value
        if isinstance(value, ast.Call) and _dotted_end(value.func) == "field":
            value = next((k.value for k in value.keywords if k.arg == "default"), None)
        name = item.target.id
        default = literal(value)
        option = f"--{name.replace('_', '-')}" if tyro else f"--{name}"
        boolean = tyro and _dotted_end(item.annotation) == "bool"
        settings.append(
            Setting(name, option, default, "optional" if boolean else "value")
        )
    return settings
