"""The fixer's round trips: the smallest edit, and a result that bash accepts."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from strict_mode_scripts import codes_of, fixed

from mlsmoke.strict_mode.checker import Policy

BASH = "#!/bin/bash\n"
RUN = "python train.py\n"

# name -> (script, the script --fix writes)
ROUND_TRIPS = {
    "insert-after-shebang": (BASH + RUN, BASH + "set -euo pipefail\n" + RUN),
    "insert-after-comment-block": (
        BASH + "# Train.\n# More.\n\n" + RUN,
        BASH + "# Train.\n# More.\nset -euo pipefail\n\n" + RUN,
    ),
    "insert-sh": ("#!/bin/sh\n" + RUN, "#!/bin/sh\nset -eu\n" + RUN),
    "amend-e": (BASH + "set -e\n" + RUN, BASH + "set -euo pipefail\n" + RUN),
    "amend-eu": (BASH + "set -eu\n" + RUN, BASH + "set -euo pipefail\n" + RUN),
    "amend-eo-pipefail": (
        BASH + "set -eo pipefail\n" + RUN,
        BASH + "set -euo pipefail\n" + RUN,
    ),
    "amend-ex": (BASH + "set -ex\n" + RUN, BASH + "set -exuo pipefail\n" + RUN),
    "amend-with-comment": (
        BASH + "set -e  # fail fast\n" + RUN,
        BASH + "set -euo pipefail  # fail fast\n" + RUN,
    ),
    "amend-long": (
        BASH + "set -o errexit\n" + RUN,
        BASH + "set -o errexit -o nounset -o pipefail\n" + RUN,
    ),
    "amend-before-positional": (
        BASH + 'set -o errexit -- "$@"\n' + RUN,
        BASH + 'set -o errexit -o nounset -o pipefail -- "$@"\n' + RUN,
    ),
    "amend-sh": (
        "#!/bin/sh\nset -e\n" + RUN,
        "#!/bin/sh\nset -eu\n" + RUN,
    ),
    "amend-last-header-set": (
        BASH + "set -x\nexport A=1\nset -e\n" + RUN,
        BASH + "set -x\nexport A=1\nset -euo pipefail\n" + RUN,
    ),
    "too-late-inserts-at-top": (
        BASH + RUN + "set -euo pipefail\n",
        BASH + "set -euo pipefail\n" + RUN + "set -euo pipefail\n",
    ),
    "crlf": (
        "#!/bin/bash\r\n# Train.\r\npython train.py\r\n",
        "#!/bin/bash\r\n# Train.\r\nset -euo pipefail\r\npython train.py\r\n",
    ),
    "no-final-newline": (
        BASH + "python train.py",
        BASH + "set -euo pipefail\npython train.py",
    ),
    "only-shebang-and-comment": (
        BASH + "# nothing yet\npython train.py",
        BASH + "# nothing yet\nset -euo pipefail\npython train.py",
    ),
    "heredoc-stays-untouched": (
        BASH + "cat <<EOF\n#!/bin/bash\n# set -e\nEOF\n",
        BASH + "set -euo pipefail\ncat <<EOF\n#!/bin/bash\n# set -e\nEOF\n",
    ),
    "in-function-only": (
        BASH + "main() {\n  set -e\n}\nmain\n",
        BASH + "set -euo pipefail\nmain() {\n  set -e\n}\nmain\n",
    ),
    "set-plus-e-on-the-command-line": (
        BASH + "set -euo pipefail; set +e; " + RUN,
        BASH + "set -euo pipefail; set +e -o errexit; " + RUN,
    ),
    "set-plus-e-in-header": (
        BASH + "set -euo pipefail\nset +e\n" + RUN,
        BASH + "set -euo pipefail\nset +e -o errexit\n" + RUN,
    ),
}


@pytest.mark.parametrize(
    "script, expected", ROUND_TRIPS.values(), ids=ROUND_TRIPS.keys()
)
def test_round_trip(script: str, expected: str) -> None:
    assert fixed(script) == expected
    assert codes_of(expected) == []
    assert fixed(expected) == expected


@pytest.mark.parametrize(
    "script, expected",
    [
        (
            BASH + "set -euo pipefail\n" + RUN,
            BASH + "set -euo pipefail\nIFS=$'\\n\\t'\n" + RUN,
        ),
        (
            BASH + "set -e; export A\n" + RUN,
            BASH + "IFS=$'\\n\\t'\nset -euo pipefail; export A\n" + RUN,
        ),
        (BASH + RUN, BASH + "set -euo pipefail\nIFS=$'\\n\\t'\n" + RUN),
        ("#!/bin/sh\n" + RUN, "#!/bin/sh\nset -eu\nIFS=\"$(printf '\\n\\t')\"\n" + RUN),
    ],
)
def test_require_ifs_adds_the_assignment(script: str, expected: str) -> None:
    policy = Policy(require_ifs=True)
    assert fixed(script, policy) == expected
    assert codes_of(expected, policy) == []


def test_pipefail_in_sh_when_configured() -> None:
    policy = Policy(require_pipefail_in_sh=True)
    assert fixed("#!/bin/sh\nset -eu\n" + RUN, policy) == (
        "#!/bin/sh\nset -euo pipefail\n" + RUN
    )


SAMPLES = [script for script, _ in ROUND_TRIPS.values()]


@pytest.mark.parametrize("shell", ["bash", "dash", "ksh"])
def test_fixed_scripts_still_parse(shell: str, tmp_path: Path) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    samples = {
        "bash": SAMPLES,
        "dash": ["#!/bin/sh\n" + RUN, "#!/bin/sh\nset -e\n" + RUN],
        "ksh": ["#!/bin/ksh\n" + RUN, "#!/bin/ksh\nset -o errexit\n" + RUN],
    }[shell]
    for index, script in enumerate(samples):
        path = tmp_path / f"{index}.sh"
        path.write_text(fixed(script) or "", newline="")
        completed = subprocess.run(
            [shell, "-n", str(path)], capture_output=True, text=True
        )
        assert completed.returncode == 0, (script, completed.stderr)


def test_fixed_sh_script_runs_under_dash_and_stops_at_the_first_error(
    tmp_path: Path,
) -> None:
    if shutil.which("dash") is None:
        pytest.skip("dash is not installed")
    path = tmp_path / "run.sh"
    path.write_text(fixed("#!/bin/sh\nfalse\necho survived\n") or "")
    completed = subprocess.run(["dash", str(path)], capture_output=True, text=True)
    assert completed.returncode == 1 and "survived" not in completed.stdout
