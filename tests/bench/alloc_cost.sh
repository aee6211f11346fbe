#!/usr/bin/env bash
# What recording adds to each device allocation and release, on the GPU machine (scripts/gpu-env set up):
# tests/bench/alloc_cost.cu (cudaMalloc + cudaFree, and the driver's mapped allocation cycle) and
# tests/bench/torch_alloc_cost.py (PyTorch's allocator emptied every iteration), plain, under `gpuscope record`
# and, for PyTorch, under `gpuscope record --torch`, alternated for ROUNDS rounds. One JSON line per run.
# Usage: tests/bench/alloc_cost.sh ALLOC_COST_BINARY [ROUNDS]
set -euo pipefail
binary=$1 rounds=${2:-3}
trace=$(mktemp -d)/t.gpuscope
here=$(cd "$(dirname "$0")" && pwd)
for round in $(seq "$rounds"); do
  echo "round $round"
  echo "alloc_cost plain $("$binary")"
  echo "alloc_cost record $(gpuscope record -q -f -o "$trace" -- "$binary")"
  echo "torch plain $(python3 "$here/torch_alloc_cost.py")"
  echo "torch record $(gpuscope record -q -f -o "$trace" -- python3 "$here/torch_alloc_cost.py")"
  echo "torch record_torch $(gpuscope record --torch -q -f -o "$trace" -- python3 "$here/torch_alloc_cost.py")"
done
