#!/usr/bin/env bash
# make demo: generate a project from mlsmoke's template, commit through every hook, then
# watch the overfit-batch gate block a commit that carries a classic training bug, and
# one that breaks the training loop itself; then data-expectations block a loader that
# lost its normalization, the regression suites block a trained checkpoint that got worse
# on one slice, and the gate on 2 ranks blocks a push whose loader lost its
# DistributedSampler.
#
# Runs offline (`mlsmoke new --offline`): the project's hooks come from this checkout
# (its HEAD commit) and from PyPI at the versions the template pins, not from GitHub.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="$ROOT/.venv/bin"
WORK="${MLSMOKE_DEMO_DIR:-$ROOT/demo-project}"
PROJECT="$WORK/spiral-classifier"
MODEL="src/spiral_classifier/model.py"
TORCH="torch==${TORCH_VERSION:-2.13.0}"
REV="$(git -C "$ROOT" rev-parse HEAD)"

# mlsmoke and pre-commit from this checkout's .venv, as if installed on the machine.
export PATH="$BIN:$PATH"

step() { printf '\n=== %s\n' "$*"; }
# Print a command the way it would be typed, then run it.
show() {
    local arg line='$'
    for arg in "$@"; do
        if [[ "$arg" == *[[:space:]]* ]]; then line+=" '$arg'"; else line+=" $arg"; fi
    done
    printf '%s\n' "$line"
    "$@"
}
# sed on the model that stops the demo when the line to change is not there, so a change
# to the template cannot quietly turn a step into a no-op.
edit_model() {
    if ! grep -q -- "$1" "$MODEL"; then
        echo "demo: $MODEL has no line matching '$1'" >&2
        exit 1
    fi
    sed -i "s/$1/$2/" "$MODEL"
}
# Delete the line of train.py that matches, stopping the demo when there is none.
drop_train_line() {
    if ! grep -q -- "$1" train.py; then
        echo "demo: train.py has no line matching '$1'" >&2
        exit 1
    fi
    sed -i "/$1/d" train.py
}
quiet_pip() { "$@" 2>&1 | { grep -v '^WARNING: Location' || true; }; }

step "1. Generate a project"
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
show mlsmoke new spiral-classifier --no-input --offline --hooks-repo "$ROOT" --hooks-rev "$REV"
cd "$PROJECT"

step "2. Its environment: a venv with $TORCH, mlsmoke and the project"
python3 -m venv .venv
quiet_pip .venv/bin/pip install --quiet "$TORCH" pytest "git+file://$ROOT@$REV"
quiet_pip .venv/bin/pip install --quiet -e .
# An activated venv: the doctest and overfit-batch hooks find this interpreter on PATH.
# shellcheck source=/dev/null
source .venv/bin/activate
printf 'python: %s (torch %s)\n' "$(command -v python)" \
    "$(python -c 'import torch; print(torch.__version__)')"

step "3. Install its hooks (offline: mlsmoke from this checkout, the rest from PyPI)"
git init --quiet --initial-branch=main
git config user.name "mlsmoke demo"
git config user.email "demo@mlsmoke.invalid"
if [[ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no)" ]]; then
    echo "note: mlsmoke comes from HEAD ${REV:0:12}; uncommitted changes are not in it"
fi
show pre-commit install
echo "(building the hook environments once; later runs reuse them)"
pre-commit install-hooks >/dev/null

step "4. First commit: the gate memorizes one batch, and every hook passes"
git add --all
show pre-commit run overfit-batch --verbose
show git commit --quiet -m "Start from the mlsmoke template"

step "5. A change to the model: a wider hidden layer, and a flipped loss sign with it"
edit_model '    hidden: int = 64' '    hidden: int = 96'
edit_model 'loss = F.cross_entropy(' 'loss = -F.cross_entropy('
show git --no-pager diff --unified=0
git add --all
if show git commit --quiet -m "Widen the hidden layer"; then
    echo "demo: the commit with a flipped loss sign was NOT blocked" >&2
    exit 1
fi

step "6. Fix the sign: the same change now commits, and the gate memorizes again"
edit_model 'loss = -F.cross_entropy(' 'loss = F.cross_entropy('
git add --all
show git commit --quiet -m "Widen the hidden layer"
show git --no-pager log --oneline

step "7. A change to the training loop: train_step loses its optimizer.zero_grad()"
drop_train_line 'optimizer.zero_grad(set_to_none=True)'
show git --no-pager diff --unified=1
git add --all
echo "(the gate calls train.py's train_step, so the loop it checks is the one that trains)"
if show git commit --quiet -m "Simplify the training step"; then
    echo "demo: the commit without zero_grad was NOT blocked" >&2
    exit 1
fi
git checkout --quiet HEAD -- train.py

step "8. A change to the data: the loader no longer normalizes the readings"
DATA=$(dirname "$MODEL")/data.py
if ! grep -q -- 'points = normalize(readings)' "$DATA"; then
    echo "demo: $DATA has no line matching the normalization" >&2
    exit 1
fi
sed -i 's/points = normalize(readings) .*$/points = readings  # (N, 2) in millimetres/' "$DATA"
show git --no-pager diff --unified=0
git add --all
echo "(data-expectations checks the loader's batches against the committed expectations.json)"
if show git commit --quiet -m "Train on the raw readings"; then
    echo "demo: the commit without the normalization was NOT blocked" >&2
    exit 1
fi
git checkout --quiet HEAD -- "$DATA"

step "9. Regression suites: train a checkpoint; it holds the suites shipped in suites/"
python train.py --eval-every 250 --out checkpoint.pt
show mlsmoke suites check

step "10. A checkpoint that never predicts arm 1: suites check and CI's pytest step block it"
python -c 'import torch; c = torch.load("checkpoint.pt", weights_only=True)
c["model"]["head.bias"][1] -= 20.0; torch.save(c, "checkpoint.pt")'
if show mlsmoke suites check; then
    echo "demo: the checkpoint that lost arm 1 was NOT blocked" >&2
    exit 1
fi
if show python -m pytest -q -p no:cacheprovider tests/test_suites.py; then
    echo "demo: tests/test_suites.py passed a checkpoint that lost arm 1" >&2
    exit 1
fi

step "11. A push: before it, overfit-batch-ddp trains on 2 ranks (torch.distributed, gloo)"
git init --quiet --bare "$WORK/remote.git"
git remote add origin "$WORK/remote.git"
echo "(build_model() wraps the model in DDP and train_loader() shards with a DistributedSampler)"
show git push --quiet origin main

step "12. A change to the loader: it loses its DistributedSampler; the push is blocked"
for line in 'import torch.distributed as dist' 'if dist.is_available() and dist.is_initialized():' \
    'sampler = DistributedSampler(dataset, seed=config.seed)'; do
    if ! grep -q -- "$line" "$DATA"; then
        echo "demo: $DATA has no line matching '$line'" >&2
        exit 1
    fi
    sed -i "/$line/d" "$DATA"
done
sed -i 's/import DataLoader, DistributedSampler, TensorDataset/import DataLoader, TensorDataset/' "$DATA"
show git --no-pager diff --unified=0
git add --all
echo "(one process trains as before, so every commit hook passes)"
show git commit --quiet -m "Load the training data without torch.distributed"
if show git push --quiet origin main; then
    echo "demo: the push of a loader without a DistributedSampler was NOT blocked" >&2
    exit 1
fi

printf '\nThe generated project is in %s\n' "$PROJECT"
