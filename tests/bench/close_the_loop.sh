#!/usr/bin/env bash
# gpuscope's whole loop on a sample built on the runtime (samples/runtime_mlp by default, or runtime_cnn):
# record the plain program, advise and write the plan, run it again with the plan applied by the runtime,
# record that, and compare (docs/benchmarks.md). Run on the GPU machine over scripts/gpu-stage's carry, with
# scripts/gpu-run's library path. Usage: close_the_loop.sh CARRY OUT [SAMPLE]
set -u
carry=$1
sample=${3:-runtime_mlp}
out=$2/loop-$sample
mkdir -p "$out"
gpuscope="$carry/bin/gpuscope"
mlp="$carry/bin/sample_$sample"
echo "== plain"; "$mlp"
"$gpuscope" record -q -f -o "$out/before.gpuscope" -- "$mlp" >/dev/null
echo "== advise"; "$gpuscope" advise "$out/before.gpuscope" --plan "$out/plan.json" -f | head -40
echo "== with the plan"; GPUSCOPE_PLAN="$out/plan.json" "$mlp"
GPUSCOPE_PLAN="$out/plan.json" "$gpuscope" record -q -f -o "$out/after.gpuscope" -- "$mlp" >/dev/null 2>&1
echo "== advise again"; "$gpuscope" advise "$out/after.gpuscope" | head -20
echo "== diff"; "$gpuscope" diff "$out/before.gpuscope" "$out/after.gpuscope" | head -30
