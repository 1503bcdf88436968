#!/usr/bin/env bash
# make demo: the bash-strict-mode hook through real pre-commit, on two sample scripts.
#
# This checkout is committed to a temporary git repository and used as the hook's
# `repo:` (pre-commit cannot clone from GitHub on every machine). A sample project with
# one strict and one non-strict script runs the hook, then `--fix` repairs the loose one
# and the hook passes.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${VENV:-$ROOT/.venv}/bin"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/mlsmoke-demo.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
export PRE_COMMIT_HOME="$WORK/pre-commit-home" PRE_COMMIT_COLOR=never
export GIT_AUTHOR_NAME=mlsmoke-demo GIT_AUTHOR_EMAIL=demo@mlsmoke.invalid
export GIT_COMMITTER_NAME=mlsmoke-demo GIT_COMMITTER_EMAIL=demo@mlsmoke.invalid

step() {
    printf '\n==> %s\n' "$*"
}

commit_all() {
    git -C "$1" add --all
    git -C "$1" commit --quiet --no-verify --message "$2"
}

copy_checkout() {
    local destination=$1 file
    git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' file; do
            if [[ -f "$ROOT/$file" ]]; then
                mkdir -p "$destination/$(dirname "$file")"
                cp -p "$ROOT/$file" "$destination/$file"
            fi
        done
}

step "Committing this checkout to a temporary repository, to use as the hook's repo:"
HOOK_REPO="$WORK/mlsmoke"
mkdir -p "$HOOK_REPO"
copy_checkout "$HOOK_REPO"
git -C "$HOOK_REPO" init --quiet --initial-branch=main
commit_all "$HOOK_REPO" "mlsmoke for the demo"
REV="$(git -C "$HOOK_REPO" rev-parse HEAD)"

step "A sample project with one strict and one non-strict script"
PROJECT="$WORK/project"
mkdir -p "$PROJECT/scripts"
git -C "$PROJECT" init --quiet --initial-branch=main
cat >"$PROJECT/.pre-commit-config.yaml" <<YAML
repos:
  - repo: $HOOK_REPO  # https://github.com/mlsmoke/mlsmoke in your project
    rev: $REV
    hooks:
      - id: bash-strict-mode
YAML
cat >"$PROJECT/scripts/evaluate.sh" <<'SCRIPT'
#!/usr/bin/env bash
# Evaluate the latest checkpoint.
set -euo pipefail

python -m evaluate --checkpoint "$(ls -t checkpoints/*.pt | head -n 1)"
SCRIPT
cat >"$PROJECT/scripts/train.sh" <<'SCRIPT'
#!/usr/bin/env bash
# Train, then publish the checkpoint. Without errexit, a crashed run still publishes.
python -m train --epochs 10 | tee train.log
cp checkpoints/last.pt "$PUBLISH_DIR/"
SCRIPT
chmod +x "$PROJECT"/scripts/*.sh
commit_all "$PROJECT" "sample scripts"
head -n 20 "$PROJECT/.pre-commit-config.yaml" "$PROJECT"/scripts/*.sh

step "pre-commit run --all-files (the first run builds the hook's environment)"
status=0
(cd "$PROJECT" && "$BIN/pre-commit" run --all-files) || status=$?
echo "(exit code $status: evaluate.sh is strict, train.sh is not)"

step "mlsmoke strict-mode --fix scripts/*.sh"
status=0
(cd "$PROJECT" && "$BIN/mlsmoke" strict-mode --fix scripts/*.sh) || status=$?
echo "(exit code $status: a file was fixed)"
git -C "$PROJECT" --no-pager diff

step "pre-commit run --all-files, again"
(cd "$PROJECT" && "$BIN/pre-commit" run --all-files)
echo "(exit code 0: both scripts now stop at their first error)"
