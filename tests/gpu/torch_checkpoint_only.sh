#!/usr/bin/env bash
# Checkpointing on its own (no compile, no autocast change) through `gpuscope apply --record`, for the three
# cases of torch_loop.sh: checks the advisor's checkpointing memory estimate apart from the fixes that
# interact with it. Traces land xz-compressed in OUT_DIR. Usage: torch_checkpoint_only.sh CARRY_DIR OUT_DIR
set -u
carry=$1 out=$2
gpuscope=$carry/bin/gpuscope
work=$(mktemp -d)
cat >"$work/plan.json" <<'PLAN'
{"format": "gpuscope-plan", "version": 1, "trace": "t", "step_basis": "run",
 "measured": {"step_time_ns": 1, "peak_memory_bytes": 1}, "predicted": {"step_time_ns": 1, "peak_memory_bytes": 1},
 "prediction_basis": "none", "fixes": [{"id": "checkpoint-1", "kind": "checkpoint", "rule": "activation_memory", "segments": 1}]}
PLAN
run() {
  local name=$1
  shift
  echo "== $name checkpointed: $*"
  timeout 200 "$gpuscope" apply --plan "$work/plan.json" --record -q -f -o "$work/${name}_ckpt.gpuscope" -- python3 "$@" 2>&1 |
    grep -E "gpuscope apply|median_step|step" | tail -3
  "$gpuscope" stats "$work/${name}_ckpt.gpuscope" --report memory 2>&1 | sed -n 3,4p
  xz -T8 -6 -c "$work/${name}_ckpt.gpuscope" >"$out/${name}_ckpt.gpuscope.xz"
}
run naive samples/pytorch/advisor_cases.py naive
run gpt2 samples/pytorch/overhead_bench.py gpt2 --batch 8 --steps 10 --warmup 3
run resnet samples/pytorch/overhead_bench.py resnet --batch 32 --steps 10 --warmup 3
rm -rf "$work"
