#!/usr/bin/env bash
# Fixtures and questions that need PyTorch on a GPU, in one call:
#  1. the memory snapshot of samples/pytorch/bridge_train.py as JSON and pickled by _dump_snapshot(), from one
#     moment (tests/fixtures/pytorch_memory_snapshot.{json,pickle});
#  2. where ResNet-50's peak comes from under the whole plan: the plan with and without CUDA graphs;
#  3. the host cost of eager recomputation: ResNet-50 checkpointed alone, with and without recording.
# Usage: torch_probe.sh CARRY_DIR OUT_DIR PLAN_WITH_GRAPHS (a plan advised on ResNet-50's step)
set -u
carry=$1 out=$2 plan=$3
gpuscope=$carry/bin/gpuscope
work=$(mktemp -d)
bench=(samples/pytorch/overhead_bench.py resnet --batch 32 --steps 10 --warmup 3)

echo "== snapshot fixtures"
python3 samples/pytorch/bridge_train.py --steps 3 --snapshot "$out/pytorch_memory_snapshot.json" \
  --snapshot "$out/pytorch_memory_snapshot.pickle" | tail -1
ls -la "$out"/pytorch_memory_snapshot.*

echo "== ResNet-50, whole plan without CUDA graphs (compile mode default)"
python3 - "$plan" "$work/no_graphs.json" "$work/ckpt.json" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
no_graphs = dict(plan, fixes=[f for f in plan["fixes"] if f["kind"] != "cuda_graphs"])
json.dump(no_graphs, open(sys.argv[2], "w"))
json.dump(dict(plan, fixes=[f for f in plan["fixes"] if f["kind"] == "checkpoint"]), open(sys.argv[3], "w"))
PY
for variant in "$plan:graphs" "$work/no_graphs.json:no_graphs"; do
  p=${variant%%:*} name=${variant##*:}
  timeout 280 "$gpuscope" apply --plan "$p" --record -q -f -o "$work/resnet_$name.gpuscope" -- python3 "${bench[@]}" 2>&1 |
    grep -E "median_step" | tail -1
  "$gpuscope" stats "$work/resnet_$name.gpuscope" --report memory_categories 2>&1
  "$gpuscope" stats "$work/resnet_$name.gpuscope" --report memory 2>&1 | sed -n 3,4p
  xz -T8 -6 -c "$work/resnet_$name.gpuscope" >"$out/resnet_$name.gpuscope.xz"
done

echo "== ResNet-50 step: plain, checkpointed (apply), record --torch, checkpointed + record --torch"
python3 "${bench[@]}" | tail -1
"$gpuscope" apply --plan "$work/ckpt.json" -- python3 "${bench[@]}" 2>&1 | tail -1
timeout 200 "$gpuscope" record --torch -q -f -o "$work/r.gpuscope" -- python3 "${bench[@]}" 2>&1 | tail -1
timeout 200 "$gpuscope" apply --plan "$work/ckpt.json" --record -q -f -o "$work/rc.gpuscope" -- python3 "${bench[@]}" 2>&1 | tail -1
rm -rf "$work"
