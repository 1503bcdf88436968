"""The ``mlsmoke`` console script: one subcommand per hook.

Subcommand modules are imported lazily, so that a cached ``mlsmoke overfit`` pass
does not pay for importing the other hooks.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from mlsmoke import __version__
from mlsmoke.errors import EXIT_INTERRUPTED, MlsmokeError, Terminated
from mlsmoke.signals import signal_name, stdout_closed, terminated_on_signals

# subcommand -> (module whose main(argv) runs it, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "basics": (
        "mlsmoke.basics.main",
        "pre-commit-hooks' checks (end-of-file-fixer, ...) in one interpreter",
    ),
    "strict-mode": (
        "mlsmoke.strict_mode.main",
        "check that shell scripts enable errexit, nounset and pipefail",
    ),
    "doctest": (
        "mlsmoke.doctests.main",
        "run the >>> examples of the given Python, Markdown and rst files",
    ),
    "overfit": (
        "mlsmoke.overfit.process.main",
        "train the project's model on one batch and fail unless it memorizes it",
    ),
    "expect": (
        "mlsmoke.expect.main",
        "check the project's batches against expectations.json; --record infers it",
    ),
    "profile": (
        "mlsmoke.profile.main",
        "profile the training step: where the time goes, what to change, a trace",
    ),
    "suites": (
        "mlsmoke.suites.main",
        "record regression suites of hard examples; check a checkpoint against them",
    ),
    "new": (
        "mlsmoke.new",
        "scaffold a PyTorch project from mlsmoke's cookiecutter template",
    ),
    "init": ("mlsmoke.adopt.init", "adopt the hooks in a repository, debt baselined"),
    "debt": ("mlsmoke.adopt.debt", "print the baselines; --update shrinks them"),
    "torchfix": (
        "mlsmoke.torch_lint.main",
        "TorchFix's checks under the project's flake8 config, in the warm worker",
    ),
    "worker": (
        "mlsmoke.worker_command",
        "show or stop the warm workers that keep torch imported between commits",
    ),
}


def _top_level_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlsmoke",
        description="pre-commit hooks that catch silent ML bugs.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(
            f"  {name:<12} {help_}" for name, (_, help_) in COMMANDS.items()
        ),
    )
    parser.add_argument("--version", action="version", version=__version__)
    parser.add_argument("command", choices=sorted(COMMANDS), metavar="COMMAND")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; exit codes: 0 pass, 1 fail, 2 usage/config/environment,
    130 Ctrl-C, 143 SIGTERM, 129 SIGHUP, 141 stdout closed by its reader."""
    try:
        with terminated_on_signals():
            try:
                return _run(list(sys.argv[1:] if argv is None else argv))
            finally:  # argparse's --help and usage errors exit through here too
                sys.stdout.flush()
    except BrokenPipeError:
        return stdout_closed()


def _run(args: list[str]) -> int:
    if not args or args[0] not in COMMANDS:
        _top_level_parser().parse_args(args or ["--help"])
    command, rest = args[0], args[1:]
    module = importlib.import_module(COMMANDS[command][0])
    try:
        return module.main(rest)
    except MlsmokeError as error:
        _say(prefixed(f"mlsmoke {command}", str(error)))
        return error.exit_code
    except KeyboardInterrupt:
        _say(f"mlsmoke {command}: interrupted")
        return EXIT_INTERRUPTED
    except Terminated as stop:
        _say(f"mlsmoke {command}: stopped by {signal_name(stop.signum)}")
        return stop.exit_code


def prefixed(prefix: str, message: str) -> str:
    """``prefix: message``, unless the message already names the command."""
    if message.startswith(prefix):
        return message
    return f"{prefix}: {message}"


def _say(message: str) -> None:
    """One line on stderr, if stderr is still there (a hangup may have closed it)."""
    try:
        print(message, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    raise SystemExit(main())
