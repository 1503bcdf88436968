"""The hook through real pre-commit, with this checkout as the hook repository."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import HookRepo, commit_all, init_git_repo

STRICT = "#!/usr/bin/env bash\n# Evaluate.\nset -euo pipefail\npython eval.py\n"
LOOSE = "#!/usr/bin/env bash\n# Train.\npython train.py\n"


def _config(hook_repo: HookRepo, args: list[str]) -> str:
    return (
        "repos:\n"
        f"  - repo: {hook_repo.path}\n"
        f"    rev: {hook_repo.rev}\n"
        "    hooks:\n"
        "      - id: bash-strict-mode\n"
        f"        args: {args!r}\n"
    )


@pytest.mark.e2e
def test_hook_through_pre_commit(
    tmp_path: Path, hook_repo: HookRepo, run_pre_commit
) -> None:
    project = init_git_repo(tmp_path / "project")
    (project / ".pre-commit-config.yaml").write_text(_config(hook_repo, []))
    for name, text in {"strict.sh": STRICT, "scripts/train.sh": LOOSE}.items():
        (project / name).parent.mkdir(exist_ok=True)
        (project / name).write_text(text)
        (project / name).chmod(0o755)
    commit_all(project)

    checked = run_pre_commit(project, "run", "--all-files")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "bash strict mode" in checked.stdout and "Failed" in checked.stdout
    assert (
        "scripts/train.sh:3:1: SM001 errexit, nounset and pipefail are off when "
        "`python train.py` runs; add `set -euo pipefail` before it"
    ) in checked.stdout
    assert "strict.sh:" not in checked.stdout.replace("scripts/train.sh", "")

    (project / ".pre-commit-config.yaml").write_text(_config(hook_repo, ["--fix"]))
    fixed = run_pre_commit(project, "run", "--all-files")
    assert fixed.returncode == 1
    assert "Fixing scripts/train.sh" in fixed.stdout
    assert "files were modified by this hook" in fixed.stdout
    assert (project / "scripts/train.sh").read_text() == (
        "#!/usr/bin/env bash\n# Train.\nset -euo pipefail\npython train.py\n"
    )

    rerun = run_pre_commit(project, "run", "--all-files")
    assert rerun.returncode == 0, rerun.stdout
    assert "Passed" in rerun.stdout
