#!/usr/bin/env bash
# What each part of recording costs a torchrun job, step by step: the job run plain, then recorded with more and
# more of gpuscope's items (CUPTI's kernels alone, without and with NCCL's profiler plugin; CUDA calls; the
# default items; the PyTorch bridge), then plain again. The job is a copy of a corpus program that also prints
# each step's time ("steps [...]", rank 0): the step times show the DataLoader's restarts and the bridge's
# paused steps apart from the rest.
#   bench/cost/trace_items_cost.sh [PROGRAM]   (on a 2-GPU machine, after `source scripts/gpu-env`)
# PROGRAM defaults to bench/corpus/ddp_syncbn_deeplab/program.py, the job of docs/benchmarks.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
program=${1:-$root/bench/corpus/ddp_syncbn_deeplab/program.py}
gpuscope=${GPUSCOPE:-gpuscope}
out=$(mktemp -d)
# The step-timed copy: a time at the top of each step of the training loop, printed by rank 0 after its last line.
python3 - "$program" "$out/timed.py" <<'PY'
import sys
src = open(sys.argv[1]).read()
edits = [("    warmup, step, start = 5, 0, None", "    warmup, step, start = 5, 0, None\n    marks = []"),
         ("            if step == warmup:", "            marks.append(time.perf_counter())\n            if step == warmup:"),
         ('        print(f"{elapsed * 1000 / (step - warmup):.3f} ms/step")',
          '        print(f"{elapsed * 1000 / (step - warmup):.3f} ms/step")\n'
          '        print("steps", [round((b - a) * 1000, 1) for a, b in zip(marks, marks[1:])])')]
for old, new in edits:
    if old not in src:
        sys.exit(f"trace_items_cost: {sys.argv[1]} has no line {old.strip()!r} to time its steps by")
    src = src.replace(old, new)
open(sys.argv[2], "w").write(src)
PY
job=(torchrun --standalone --nproc_per_node=2 "$out/timed.py")
record=("$gpuscope" record --no-calibrate -f -q -o "$out/trace.gpuscope")
run() {
  echo "== $1"
  shift
  timeout 150 "$@" 2>&1 | grep -E "ms/step|^steps" || echo "(no step times)"
}
run plain "${job[@]}"
run cuda "${record[@]}" --trace cuda -- "${job[@]}"
run cuda-no-nccl-plugin env NCCL_PROFILER_PLUGIN=none "${record[@]}" --trace cuda -- "${job[@]}"
run cuda,api "${record[@]}" --trace cuda,api -- "${job[@]}"
run default "${record[@]}" -- "${job[@]}"
run default-torch "${record[@]}" --torch -- "${job[@]}"
run plain "${job[@]}"
rm -rf "$out"
