"""Every form the hook accepts and rejects, as a table of scripts and expected codes."""

from __future__ import annotations

import pytest
from strict_mode_scripts import codes_of, verdict_of

from mlsmoke.strict_mode.checker import Policy

BASH = "#!/bin/bash\n"
RUN = "python train.py\n"

ACCEPTED = {
    "euo-pipefail": BASH + "set -euo pipefail\n" + RUN,
    "Eeuo-pipefail": BASH + "set -Eeuo pipefail\n" + RUN,
    "eux-then-o-pipefail": BASH + "set -eux\nset -o pipefail\n" + RUN,
    "long-options": BASH + "set -o errexit -o nounset -o pipefail\n" + RUN,
    "separate-o-lines": BASH
    + "set -o errexit\nset -o nounset\nset -o pipefail\n"
    + RUN,
    "semicolons": BASH + "set -e; set -u; set -o pipefail\n" + RUN,
    "separate-letters": BASH + "set -e -u -o pipefail\n" + RUN,
    "quoted-option-words": BASH + "set '-euo' \"pipefail\"\n" + RUN,
    "builtin-prefix": BASH + "builtin set -euo pipefail\n" + RUN,
    "or-exit": BASH + "set -euo pipefail || exit 1\n" + RUN,
    "trailing-comment": BASH + "set -euo pipefail  # strict mode\n" + RUN,
    "continued-line": BASH + "set -e \\\n  -u \\\n  -o pipefail\n" + RUN,
    "license-header": BASH
    + "# Copyright 2026 The Authors.\n#\n# Licensed under the MIT license.\n\n"
    + "set -euo pipefail\n"
    + RUN,
    "no-shebang-comment-block": "#!/usr/bin/env bash\n\n# Train.\n\n"
    + "set -euo pipefail\n"
    + RUN,
    "prepares-first": BASH
    + '# Setup.\n\nROOT="$(cd "$(dirname "$0")" && pwd)"\n'
    + 'export PATH="$ROOT/bin:$PATH"\n'
    + "readonly VERSION=1\ndeclare -a ITEMS=(a b\n  c)\nshopt -s nullglob\n"
    + 'trap \'echo failed\' ERR\nsource "$ROOT/env.sh"\n. ./common.sh\ncd "$ROOT"\n'
    + "set -euo pipefail\n"
    + RUN,
    "function-defined-first": BASH
    + 'die() { echo "$*" >&2; exit 1; }\nset -euo pipefail\n'
    + RUN,
    "set-plus-e-later": BASH
    + "set -euo pipefail\n"
    + RUN
    + "set +e\nflaky_command\nset -e\n",
    "env-bash": "#!/usr/bin/env bash\nset -euo pipefail\n" + RUN,
    "env-S": "#!/usr/bin/env -S bash -x\nset -euo pipefail\n" + RUN,
    "ksh": "#!/bin/ksh\nset -euo pipefail\n" + RUN,
    "zsh": "#!/usr/bin/env zsh\nset -euo pipefail\n" + RUN,
    "sh-eu": "#!/bin/sh\nset -eu\n" + RUN,
    "dash-eu": "#!/usr/bin/dash\nset -e\nset -u\n" + RUN,
    "env-S-sh": "#!/usr/bin/env -S sh\nset -eu\n" + RUN,
    "sh-with-pipefail": "#!/bin/sh\nset -euo pipefail\n" + RUN,
    "crlf": "#!/bin/bash\r\nset -euo pipefail\r\n" + "python train.py\r\n",
    "library-with-shebang": BASH + "greet() {\n  echo hi\n}\nVALUE=1\n",
    "pragma": BASH + "# mlsmoke: disable=strict-mode -- sourced by CI only\n" + RUN,
    "pragma-without-reason": BASH + "#mlsmoke: disable=strict-mode\n" + RUN,
    "late-set-but-pragma": BASH
    + "# mlsmoke: disable=SM002 -- the banner may fail\n"
    + "echo banner\nset -euo pipefail\n"
    + RUN,
    "heredoc-after-set": BASH
    + "set -euo pipefail\ncat <<'EOF'\nset +euo pipefail\nEOF\n"
    + RUN,
}

# name -> (script, expected codes)
REJECTED = {
    "nothing": (BASH + RUN, ["SM001"]),
    "e-only": (BASH + "set -e\n" + RUN, ["SM001"]),
    "eu-without-pipefail": (BASH + "set -eu\n" + RUN, ["SM001"]),
    "errexit-only-long": (BASH + "set -o errexit\n" + RUN, ["SM001"]),
    "eux-without-pipefail": (BASH + "set -eux\n" + RUN, ["SM001"]),
    "sh-e-only": ("#!/bin/sh\nset -e\n" + RUN, ["SM001"]),
    "dash-nothing": ("#!/bin/dash\n" + RUN, ["SM001"]),
    "ksh-eu": ("#!/bin/ksh\nset -eu\n" + RUN, ["SM001"]),
    "in-comment": (BASH + "# set -euo pipefail\n" + RUN, ["SM001"]),
    "in-double-quotes": (BASH + 'echo "\nset -euo pipefail\n"\n' + RUN, ["SM001"]),
    "in-single-quotes": (BASH + "MSG='\nset -euo pipefail\n'\n" + RUN, ["SM001"]),
    "in-ansi-c-string": (
        BASH + "MSG=$'it\\'s\nset -euo pipefail\n'\n" + RUN,
        ["SM001"],
    ),
    "in-heredoc": (
        BASH + "USAGE=$(cat <<'EOF'\nset -euo pipefail\nEOF\n)\n" + RUN,
        ["SM001"],
    ),
    "in-heredoc-dash": (
        BASH + "USAGE=$(cat <<-EOF\n\tset -euo pipefail\n\tEOF\n)\n" + RUN,
        ["SM001"],
    ),
    "continued-echo": (BASH + "echo \\\nset -euo pipefail\n" + RUN, ["SM001"]),
    "in-function": (BASH + "main() {\n  set -euo pipefail\n}\nmain\n", ["SM001"]),
    "in-function-keyword": (
        BASH + "function main {\n  set -euo pipefail\n}\nmain\n",
        ["SM001"],
    ),
    "in-subshell": (BASH + "(\n  set -euo pipefail\n  " + RUN + ")\n", ["SM001"]),
    "in-if": (
        BASH + "if [[ -n ${CI:-} ]]; then\n  set -euo pipefail\nfi\n" + RUN,
        ["SM001"],
    ),
    "after-and": (BASH + "[[ -n ${CI:-} ]] && set -euo pipefail\n" + RUN, ["SM001"]),
    "in-case": (
        BASH + "case $1 in\n  -s) set -euo pipefail ;;\nesac\n" + RUN,
        ["SM001"],
    ),
    "in-while": (BASH + "while true; do set -euo pipefail; done\n", ["SM001"]),
    "in-command-substitution": (
        BASH + "X=$(set -euo pipefail; echo)\n" + RUN,
        ["SM001"],
    ),
    "too-late": (BASH + RUN + "set -euo pipefail\n", ["SM002"]),
    "too-late-partial": (BASH + RUN + "set -e\n", ["SM001", "SM002"]),
    "unset-before-command": (
        BASH + "set -euo pipefail\nset +e\n" + RUN,
        ["SM001"],
    ),
    "for-loop-first": (
        BASH + 'for f in *.csv; do wc -l "$f"; done\nset -euo pipefail\n',
        ["SM002"],
    ),
    "pragma-after-command": (
        BASH + RUN + "# mlsmoke: disable=strict-mode\n",
        ["SM001"],
    ),
    "shebang-options": ("#!/bin/bash -eu\nset -o pipefail\n" + RUN, ["SM001"]),
    "positional-not-options": (BASH + "set -- -e -u\n" + RUN, ["SM001"]),
    "computed-option": (BASH + 'set -eu -o "$OPT"\n' + RUN, ["SM001"]),
}


@pytest.mark.parametrize("script", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_accepted(script: str) -> None:
    assert codes_of(script) == []


@pytest.mark.parametrize("script, codes", REJECTED.values(), ids=REJECTED.keys())
def test_rejected(script: str, codes: list[str]) -> None:
    assert codes_of(script) == codes


@pytest.mark.parametrize(
    "script, missing",
    [
        (BASH + RUN, ("errexit", "nounset", "pipefail")),
        (BASH + "set -e\n" + RUN, ("nounset", "pipefail")),
        (BASH + "set -eu\n" + RUN, ("pipefail",)),
        ("#!/bin/sh\nset -e\n" + RUN, ("nounset",)),
        (BASH + "set -euo pipefail\nset +u\n" + RUN, ("nounset",)),
    ],
)
def test_missing_options_are_named(script: str, missing: tuple[str, ...]) -> None:
    verdict = verdict_of(script)
    assert verdict.missing == missing
    message = verdict.problems[0].message
    assert all(name in message for name in missing)
    assert all(
        name not in message.split(":")[0]
        for name in {"errexit", "nounset", "pipefail"} - set(missing)
    )


def test_sh_needs_pipefail_only_when_configured() -> None:
    script = "#!/bin/sh\nset -eu\n" + RUN
    assert codes_of(script) == []
    assert codes_of(script, Policy(require_pipefail_in_sh=True)) == ["SM001"]


@pytest.mark.parametrize(
    "assignment",
    [
        "IFS=$'\\n\\t'",
        "IFS=$'\\t\\n'",
        "export IFS=$'\\n\\t'",
        "IFS=\"$(printf '\\n\\t')\"",
    ],
)
def test_require_ifs_accepts(assignment: str) -> None:
    script = BASH + "set -euo pipefail\n" + assignment + "\n" + RUN
    assert codes_of(script, Policy(require_ifs=True)) == []


def test_require_ifs_rejects_and_its_pragma() -> None:
    script = BASH + "set -euo pipefail\nIFS=' '\n" + RUN
    assert codes_of(script) == []
    assert codes_of(script, Policy(require_ifs=True)) == ["SM003"]
    disabled = (
        BASH + "# mlsmoke: disable=SM003 -- word splitting on spaces\n" + script[12:]
    )
    assert codes_of(disabled, Policy(require_ifs=True)) == []


def test_too_late_names_the_command_that_runs_first() -> None:
    (problem,) = verdict_of(BASH + "# x\n" + RUN + "set -euo pipefail\n").problems
    assert problem.message == (
        "`set -euo pipefail` comes too late: `python train.py` on line 3 runs before it"
    )


@pytest.mark.parametrize(
    ("header", "late", "off"),
    [
        ("", "set -e\n", "errexit, nounset and pipefail are"),
        ("", "set -u\n", "errexit, nounset and pipefail are"),
        ("", "set -eu\n", "errexit, nounset and pipefail are"),
        ("set -e\n", "set -u\n", "nounset and pipefail are"),
        ("set -eu\n", "set -o pipefail\n", None),  # only SM002: nothing stays off
        ("set -eo pipefail\n", "echo no set\n", "nounset is"),
    ],
)
def test_missing_names_every_option_off_when_the_first_command_runs(
    header: str, late: str, off: str | None
) -> None:
    problems = verdict_of(BASH + header + RUN + late).problems
    missing = [p.message for p in problems if p.code == "SM001"]
    if off is None:
        assert missing == []
    else:
        (message,) = missing
        assert message.startswith(f"{off} off when `python train.py` runs")
        assert message.endswith("`set -euo pipefail` before it" if not header
                                else "use `set -euo pipefail`")  # fmt: skip


def test_nested_set_is_explained() -> None:
    (problem,) = verdict_of(BASH + "main() {\n  set -euo pipefail\n}\nmain\n").problems
    assert "the `set` on line 3 is inside a function" in problem.message
