#!/usr/bin/env bash
# Train from the project root, whatever the current directory: scripts/train.sh --steps 500
# Strict mode: stop at the first failing command, unset variable or failing pipe stage.
set -euo pipefail

cd "$(dirname "$0")/.."
mkdir -p runs
python train.py --out "runs/checkpoint.pt" "$@" 2>&1 | tee "runs/train.log"
