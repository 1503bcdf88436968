"""How a training script takes its settings, read from its source: module-level
globals overridden by a nanoGPT-style configurator, argparse's ``add_argument``, a
config dataclass parsed from the command line (``HfArgumentParser``, ``tyro.cli``,
``simple_parsing``), and a config object's attributes set by ``--a.b=value``
(minGPT's ``CfgNode.merge_from_args``). Each reader returns the script's settings as
its command line sets them."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from mlsmoke.ast_names import assigned, dotted, last

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
    # value, store_true, store_false, optional (--x/--no-x), literal (--x='a str')
    kind: str = "value"
    choices: tuple[object, ...] | None = None
    required: bool = False


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


def module_level_settings(tree: ast.Module) -> list[Setting]:
    """The module's own top-level assignments of one name each, as the gate's
    ``globals`` can give them (first assignment of a name, in order)."""
    settings: dict[str, Setting] = {}
    for found in filter(None, map(assigned, tree.body)):
        name, value = found
        if name not in settings:
            settings[name] = Setting(name, name, _choice(value))
    return list(settings.values())


def _choice(node: ast.expr) -> object:
    """A literal's value; for a choice between two literals of one type (``'cuda'
    if torch.cuda.is_available() else 'cpu'``), the first."""
    if isinstance(node, ast.IfExp):
        first, other = literal(node.body), literal(node.orelse)
        if first is not NOT_LITERAL and type(first) is type(other):
            return first
    return literal(node)


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
    elif action is not None and last(action) == "BooleanOptionalAction":
        kind = "optional"
    elif action is not None or last(keywords.get("type")) == "bool":
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


def dataclass_settings(tree: ast.Module) -> list[Setting]:
    """The fields of a dataclass the script parses from its command line."""
    classes = {
        node.name: node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
    }
    settings: list[Setting] = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or last(call.func) not in PARSERS:
            continue
        tyro = dotted(call.func) == "tyro.cli"
        for arg in call.args:
            parsed = arg.elts if isinstance(arg, (ast.Tuple, ast.List)) else [arg]
            for item in parsed:
                node = classes.get(last(item))
                if node is not None and _is_dataclass(node):
                    settings += _fields(node, tyro)
    return settings


def _is_dataclass(node: ast.ClassDef) -> bool:
    return any(
        last(d.func if isinstance(d, ast.Call) else d) == "dataclass"
        for d in node.decorator_list
    )


def _fields(node: ast.ClassDef, tyro: bool) -> list[Setting]:
    """Fields with defaults; tyro spells them with hyphens and booleans as flags."""
    settings = []
    for item in node.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        value = item.value
        if isinstance(value, ast.Call) and last(value.func) == "field":
            value = next((k.value for k in value.keywords if k.arg == "default"), None)
        name = item.target.id
        default = literal(value)
        option = f"--{name.replace('_', '-')}" if tyro else f"--{name}"
        boolean = tyro and last(item.annotation) == "bool"
        settings.append(
            Setting(name, option, default, "optional" if boolean else "value")
        )
    return settings


def dotted_settings(tree: ast.Module) -> list[Setting]:
    """A config object's attributes that the script sets, when it hands its command
    line to one of that object's methods (``config = get_config()``, then
    ``config.merge_from_args(sys.argv[1:])``): ``C.system.work_dir = "./out"`` in
    ``get_config`` is ``--system.work_dir=<a Python literal>``."""
    receivers = {
        call.func.value.id
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
        and any(_is_argv(arg) for arg in call.args)
    }
    built_by = {
        node.value.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id in receivers for t in node.targets)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
    }
    settings: list[Setting] = []
    for function in tree.body:
        if isinstance(function, ast.FunctionDef) and function.name in built_by:
            settings += _attributes_set(function)
    return settings


def _is_argv(node: ast.expr) -> bool:
    """``sys.argv`` or ``sys.argv[1:]``."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return dotted(node) == "sys.argv"


def _attributes_set(function: ast.FunctionDef) -> list[Setting]:
    """``root.a.b = <literal>`` in ``function``, for a ``root`` it returns."""
    returned = {
        node.value.id
        for node in ast.walk(function)
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Name)
    }
    settings = []
    for node in ast.walk(function):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        chain = dotted(node.targets[0]).split(".")
        value = literal(node.value)
        if len(chain) >= 2 and chain[0] in returned and value is not NOT_LITERAL:
            option = "--" + ".".join(chain[1:])
            settings.append(Setting(chain[-1], option, value, "literal"))
    return settings
