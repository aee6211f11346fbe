#!/usr/bin/env bash
# gpuscope apply on the GPU machine (after scripts/gpu-stage): every fix kind on samples/pytorch/bridge_train.py
# from a hand-written plan, then the loop on advisor_cases.py naive: record --torch, advise --plan, apply
# --record, diff, with the advisor's prediction beside the measurement. Usage: torch_apply.sh CARRY_DIR OUT_DIR
set -u
carry=$1 out=$2
gpuscope=$carry/bin/gpuscope
cat > "$out/every_fix.json" <<'JSON'
{"format": "gpuscope-plan", "version": 1, "trace": "hand-written", "step_basis": "none",
 "measured": {"step_time_ns": 1, "peak_memory_bytes": 1}, "predicted": {"step_time_ns": 1, "peak_memory_bytes": 1},
 "prediction_basis": "none", "fixes": [
  {"id": "precision-1", "kind": "precision", "rule": "fp32_gemm", "setting": "bf16_autocast"},
  {"id": "optimizer-1", "kind": "optimizer", "rule": "unfused_optimizer", "setting": "fused"},
  {"id": "allocator-1", "kind": "allocator", "rule": "fragmentation", "setting": "expandable_segments:True"},
  {"id": "data_loader-1", "kind": "data_loader", "rule": "input_pipeline", "num_workers": 4, "pin_memory": true, "persistent_workers": true},
  {"id": "checkpoint-1", "kind": "checkpoint", "rule": "activation_memory", "segments": 2},
  {"id": "attention-1", "kind": "attention", "rule": "unfused_attention", "setting": "sdpa"}]}
JSON
echo "== every fix kind on bridge_train"
python3 samples/pytorch/bridge_train.py > "$out/plain.txt" 2>/dev/null; echo "plain exit $?"; cat "$out/plain.txt"
"$gpuscope" apply --plan "$out/every_fix.json" -- python3 samples/pytorch/bridge_train.py > "$out/applied.txt" 2> "$out/applied.err"
echo "apply exit $?"; cat "$out/applied.txt"; grep gpuscope "$out/applied.err"
"$gpuscope" apply --plan "$out/every_fix.json" --record -f -o "$out/applied.gpuscope" -- python3 samples/pytorch/bridge_train.py > /dev/null 2> "$out/applied_rec.err"
echo "apply --record exit $?"; grep "gpuscope" "$out/applied_rec.err" | tail -3
echo "== the loop on advisor_cases.py naive"
timeout 300 "$gpuscope" record --torch -f -o "$out/naive.gpuscope" -- python3 samples/pytorch/advisor_cases.py naive 2>&1 | tail -2
"$gpuscope" advise "$out/naive.gpuscope" --plan "$out/naive_plan.json" -f 2>&1 | head -8
python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print([f['id'] for f in p['fixes']], p['measured'], p['predicted'])" "$out/naive_plan.json"
timeout 400 "$gpuscope" apply --plan "$out/naive_plan.json" --record -f -o "$out/naive_applied.gpuscope" -- python3 samples/pytorch/advisor_cases.py naive 2>&1 | grep -v Warning | tail -14
"$gpuscope" diff "$out/naive.gpuscope" "$out/naive_applied.gpuscope" 2>&1 | head -20
rm -f "$out/naive.gpuscope" "$out/naive_applied.gpuscope"
