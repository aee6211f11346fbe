#!/usr/bin/env bash
# Records programs written the way their authors' docs show, not against gpuscope (tests/bench/programs/),
# and runs the advisor on each: a check that its rules hold on code it has never seen. Run on the GPU
# machine over scripts/gpu-stage's carry. Usage: advisor_programs.sh CARRY_DIR OUT_DIR
set -u
carry=$1
out=$2
mkdir -p "$out/programs"
for p in bert_finetune jax_mlp cupy_stencil; do
  echo "== $p"
  XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 300 "$carry/bin/gpuscope" record -q -f -o "$out/programs/$p.gpuscope" -- \
    python3 "tests/bench/programs/$p.py" 2>&1 | grep -v Warning | tail -3
  "$carry/bin/gpuscope" advise "$out/programs/$p.gpuscope" --format md -o "$out/programs/$p.md" -f
  "$carry/bin/gpuscope" advise "$out/programs/$p.gpuscope" | head -40
done
