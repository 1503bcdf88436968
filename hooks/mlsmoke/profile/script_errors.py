"""What to tell a user whose training script could not be profiled, and which key or
flag to name: the script's own words, quoted. Pure: the session passes in what the
script did, as text."""

from __future__ import annotations

import re

SCRIPT, ARGS = "script", "args"
ARGPARSE_USAGE_STATUS = 2  # argparse exits 2 on arguments it rejects


def blamed(args: list[str], status: object | None, said: str) -> str:
    """ARGS when the script stopped at its arguments: it exited with argparse's
    status, or its message names one of them (nanoGPT's configurator: ``Unknown
    config key: bogus``); else SCRIPT."""
    if not args:
        return SCRIPT
    if status == ARGPARSE_USAGE_STATUS:
        return ARGS
    words = set(re.findall(r"[\w.]+", said))
    return ARGS if any(name in words for name in argument_words(args)) else SCRIPT


def argument_words(args: list[str]) -> list[str]:
    """The names and values in ``args`` long enough to recognize in a message:
    ``--n_layer=2`` -> ``n_layer``; ``--device cpux`` -> ``device``, ``cpux``."""
    found = []
    for arg in args:
        for part in arg.lstrip("-").split("=", 1):
            if len(part) >= 3 and re.fullmatch(r"[\w.]+", part):
                found.append(part)
    return found


def exited(command: str, status: object, stderr: str) -> str:
    """The script exited (``sys.exit``, argparse) before building an optimizer."""
    said = last_lines(stderr) or (status if isinstance(status, str) else "")
    message = f"`{command}` exited with status {status} before building an optimizer"
    return f"{message}: {said}" if said else message


def raised(command: str, error: BaseException, line: str) -> str:
    """The script raised before building an optimizer; ``line`` is the project's
    innermost line in the traceback, or ""."""
    where = f" at {line}" if line else ""
    return (
        f"`{command}` raised {type(error).__name__}: {error}{where}, before building"
        " an optimizer"
    )


def never_trained(command: str) -> str:
    return (
        f"`{command}` ran to its end without building a torch.optim optimizer;"
        " the profile times the optimizer updates of a script that trains"
    )


def never_stepped(command: str, optimizer: str, site: str) -> str:
    return (
        f"`{command}` built {optimizer}{f' at {site}' if site else ''} but ended"
        " before its first optimizer.step(); do its arguments stop it early"
        " (max_iters, epochs)?"
    )


def ended_early(command: str, updates: int, needed: int, options: str) -> str:
    return (
        f"`{command}` ended after {updates} optimizer updates; the profile needs"
        f" {needed} ({options}): let it train longer (max_iters, epochs) or ask for"
        " fewer with --warmup and --steps"
    )


def last_lines(text: str, count: int = 3) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " / ".join(lines[-count:])
